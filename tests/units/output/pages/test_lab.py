"""output/pages/lab.py: what lab --html writes.

Each figure's command line names -m only when lab was given one. The page says the revision, and some parts
span the page. The neighbours' table, its last neighbour, the sizes' answer and the tied output layer's cell
are checked on known answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local

pytest.importorskip("matplotlib")


def page_of(tmp_path: Path, *args: str) -> str:
    target = tmp_path / "lab.html"
    result = run_cli("lab", *args, "--html", str(target))
    assert result.exit_code == 0, result.output + result.stderr
    return target.read_text(encoding="utf-8")


def part(page: str, n: int) -> str:
    return page.split(f'id="part-{n}"')[1].split("</section>")[0]


def test_the_page_of_the_default_model(hub: FakeHub, tmp_path: Path) -> None:
    page = page_of(tmp_path)
    doc = run_json("lab")
    # no model given: the figures' command lines name none
    assert "As <code>gpt2emb vector king --figure FILE</code> draws it." in page
    assert "As <code>gpt2emb sizes --figure FILE</code> draws it." in page and " -m " not in page
    assert "at revision <b>main</b>" in page
    # part 1's strip spans the page; part 2's plane stands beside its table; the four sizes' panels span it
    assert '<div class="body drawn wide">' in part(page, 1) and '<div class="body drawn">' in part(page, 2)
    assert '<div class="body drawn wide">' in part(page, 4)
    # the neighbours: no row marked as an input, the last one named as --json lists it
    neighbors = doc["neighbors"]["items"][0]["neighbors"]
    assert " *" not in part(page, 2)
    last = neighbors[-1]
    said = re.search(
        r"the last of the (\d+), <span class=\"tok\">(.*?)</span>, is at ([0-9.]+)\.", part(page, 2)
    )
    assert said is not None, part(page, 2)
    assert int(said.group(1)) == len(neighbors) and float(said.group(3)) == pytest.approx(
        last["score"], abs=1e-4
    )
    assert str(last["id"]) in part(page, 2).split("</table>")[0].split("<tr>")[-1]
    # the four GPT-2 sizes: wte's share falls as the model grows, and the answer says so
    shares = [m["wte_share"] for m in doc["sizes"]["models"]]
    assert shares == sorted(shares, reverse=True)
    assert "the larger the model, the smaller wte&#x27;s share." in part(page, 4) or (
        "the larger the model, the smaller wte's share." in part(page, 4)
    )
    assert '<td class="num" data-json="sizes.models.0.wte_params">' in part(page, 4)  # a number: right


def test_the_page_of_a_folder(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "tiny")
    page = page_of(tmp_path, "-m", str(folder))
    assert f"As <code>gpt2emb vector king -m {folder} --figure FILE</code> draws it." in page
    sizes = part(page, 4)
    assert sizes.count("<td>tied to wte</td>") == 1  # the tied output layer, and no other cell
    assert '<div class="body drawn">' in sizes  # one model's panel stands beside its table
    # a counted model's family (a word) stands left, as text does; its numbers right
    assert '<td data-json="sizes.models.0.family">gpt2</td>' in sizes
    assert '<td class="num" data-json="sizes.models.0.wte_params">' in sizes


def test_the_page_names_a_tag_it_was_asked_for(hub: FakeHub, tmp_path: Path) -> None:
    """A revision other than main (a tag on main's commit) is said by its own name, not as main."""
    hub.repos["openai-community/gpt2"].refs["v1"] = COMMIT
    page = page_of(tmp_path, "-m", "openai-community/gpt2", "--revision", "v1")
    assert f"the Hub repo openai-community/gpt2 at revision <b>v1</b>, commit <code>{COMMIT}</code>" in page
