"""lab --html: the page holds every part's question, table, figure and answer; its numbers are lab --json's;
it names the model and its revision, loads nothing from outside, and is written as every file is. (The page in
a real browser: tests/test_lab_browser.py.)"""

from __future__ import annotations

import html
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local

pytest.importorskip("matplotlib")


class Page(HTMLParser):
    """What a test reads of a page: each number's text by its data-json path, the sections' headings,
    questions and answers, the <svg> elements by part, every id, and every attribute that names a URL."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.numbers: dict[str, str] = {}
        self.ids: list[str] = []
        self.urls: list[str] = []
        self.tags: list[str] = []
        self.svgs: dict[int, int] = {}
        self.classes: dict[str, list[str]] = {}
        self.part = 0
        self.open: list[tuple[str, str | None, str | None]] = []  # tag, its data-json, its class
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if a.get("id") is not None:
            self.ids.append(str(a["id"]))
        for name in ("src", "href", "xlink:href", "action", "poster", "srcset", "data"):
            if a.get(name) is not None:
                self.urls.append(str(a[name]))
        if tag == "section":
            self.part = int(a["data-part"] or 0)
        if tag == "svg" and "svg" not in [t for t, _, _ in self.open]:
            self.svgs[self.part] = self.svgs.get(self.part, 0) + 1
        if tag not in ("meta", "br", "img", "path", "use", "rect", "image", "stop", "circle", "line"):
            self.open.append((tag, a.get("data-json"), a.get("class")))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            if self.open.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.open:
            return
        _, source, kind = self.open[-1]
        if source is not None:
            self.numbers[source] = self.numbers.get(source, "") + data
        if kind in ("question", "answer"):
            self.classes.setdefault(kind, []).append(data)


def at(document: Any, path: str) -> Any:
    for key in path.split("."):
        document = document[int(key)] if isinstance(document, list) else document[key]
    return document


def agrees(shown: str, value: Any) -> bool:
    """A number as the page shows it (1,024; 0.7071; -0.2436; 15.9%) is the JSON's value, to its digits."""
    if isinstance(value, str):
        return bool(shown == value)
    text = shown.replace(",", "").strip()
    percent = text.endswith("%")
    number = float(text.rstrip("%"))
    value = 100 * value if percent else value
    digits = len(text.rstrip("%").partition(".")[2])
    return bool(abs(number - value) <= 0.5 * 10**-digits + 1e-9)


def made(tmp_path: Path, *args: str) -> tuple[str, Any]:
    """The page lab writes with args, and lab --json's document with the same args."""
    target = tmp_path / "lab.html"
    result = run_cli("lab", *args, "--html", str(target))
    assert result.exit_code == 0, result.output + result.stderr
    assert f"page written to {target}" in result.stdout
    return target.read_text(encoding="utf-8"), run_json("lab", *args)


@pytest.fixture
def folder(tiny: Tiny, tmp_path: Path) -> str:
    return str(save_local(tiny, tmp_path / "tiny-gpt2"))


def test_every_number_of_the_page_is_lab_json_s(hub: FakeHub, tmp_path: Path) -> None:
    text, doc = made(tmp_path)
    page = Page(text)
    assert page.numbers, "no number names its place in the JSON"
    wrong = {p: (s, at(doc, p)) for p, s in page.numbers.items() if not agrees(s, at(doc, p))}
    assert not wrong, wrong
    # every number a reader looks for is among them
    expected = {
        *(f"vector.items.0.{f}" for f in ("norm", "mean", "std", "min", "max")),
        *(f"vector.items.0.vector.{i}" for i in range(12)),
        *(f"neighbors.items.0.neighbors.{i}.{f}" for i in range(10) for f in ("rank", "id", "score")),
        *(
            f"{key}.results.{i}.{f}"
            for key in ("analogy_kept", "analogy")
            for i in range(10)
            for f in ("id", "score")
        ),
        *(f"analogy.inputs.{i}.{f}" for i in range(3) for f in ("rank", "score")),
        *(f"sizes.models.{m}.{f}" for m in range(4) for f in ("wte_params", "total_params", "wte_share")),
        "tying.saved_params",
    }
    assert expected <= set(page.numbers), expected - set(page.numbers)
    assert len(doc["sizes"]["models"]) == 4  # the four GPT-2 sizes: no -m
    # and the comparison fails where the page shows another number than the JSON
    shown = doc["neighbors"]["items"][0]["neighbors"][0]["score"]
    broken = Page(text.replace(f">{shown:.4f}<", f">{shown + 0.001:.4f}<", 1))
    assert not agrees(broken.numbers["neighbors.items.0.neighbors.0.score"], shown)


def test_the_page_names_the_model_and_its_revision(hub: FakeHub, folder: str, tmp_path: Path) -> None:
    text, _ = made(tmp_path, "-m", "openai-community/gpt2", "--revision", "main")
    assert "openai-community/gpt2" in text and "revision <b>main</b>" in text and COMMIT in text
    local, _ = made(tmp_path, "-m", folder)
    assert f"the local folder {folder}" in local and "tiny-gpt2" in local


def test_each_part_has_its_question_table_figure_and_answer(
    hub: FakeHub, folder: str, tmp_path: Path
) -> None:
    text, doc = made(tmp_path, "-m", folder, "--word", "queen")
    page = Page(text)
    assert len(page.classes["question"]) >= 5 and len(page.classes["answer"]) >= 5
    assert page.svgs == {1: 1, 2: 1, 3: 1, 4: 1}  # tying has no figure
    assert "1. The first 12 numbers of queen&#x27;s row of wte" in text
    name = html.escape(doc["sizes"]["models"][0]["name"])
    assert f"4. {name}&#x27;s size and wte&#x27;s share of it" in text
    first = doc["neighbors"]["items"][0]["neighbors"][0]
    assert "The nearest token to queen is" in text and f"at cosine {first['score']:.4f}" in text
    left_out = doc["analogy"]["results"][0]
    assert "left out, it is" in text and f"at cosine {left_out['score']:.4f}." in text
    assert text.count("<table") == 7  # vector, neighbors, two rankings and the inputs, sizes, tying


def test_the_page_loads_nothing_from_outside(hub: FakeHub, tmp_path: Path) -> None:
    text, _ = made(tmp_path)
    page = Page(text)
    outside = [u for u in page.urls if not (u.startswith("#") or u.startswith("data:"))]
    assert not outside, outside
    assert not {"script", "link", "iframe", "object", "embed", "img", "video", "audio"} & set(page.tags)
    assert "@import" not in text and not re.findall(r"url\((?!#)", text)
    assert len(page.ids) == len(set(page.ids)), "two figures share an id"
    assert len(re.findall(r'(?:xlink:)?href="#([^"]+)"', text)) > 0  # the figures' references ...
    assert set(re.findall(r'(?:xlink:)?href="#([^"]+)"', text)) <= set(page.ids)  # ... each to its own figure


def test_without_matplotlib_html_is_refused_before_anything(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [plot] extra were not installed
    result = run_cli("lab", "--html", str(tmp_path / "lab.html"))
    assert result.exit_code == 2
    assert '--html needs matplotlib: pip install "gpt2emb[plot]"' in result.stderr
    assert result.stdout == "" and not (tmp_path / "lab.html").exists()
    assert hub.requests == []  # nothing fetched: refused before the model was asked for


def test_the_file_is_checked_first_and_written_whole(hub: FakeHub, tmp_path: Path) -> None:
    result = run_cli("lab", "--html", str(tmp_path))
    assert result.exit_code == 2 and "is a folder" in result.stderr, result.stderr
    assert result.stdout == ""  # refused before the lab ran
    empty = run_cli("lab", "--html", " ")
    assert empty.exit_code == 2 and "--html needs a file name" in empty.stderr
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "lab.html"
    target.write_text("an older page")
    target.chmod(0o640)
    made(tmp_path / "out")
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert target.stat().st_mode & 0o777 == 0o640  # replaced, keeping its mode, as targets.py writes
    assert [p.name for p in target.parent.iterdir()] == ["lab.html"]  # no temporary file left beside it


def test_json_with_html_prints_the_document_alone(hub: FakeHub, tmp_path: Path) -> None:
    result = run_cli("lab", "--json", "--html", str(tmp_path / "lab.html"))
    assert result.exit_code == 0, result.stderr
    assert "page written" not in result.stdout and result.stdout.lstrip().startswith("{")
    assert (tmp_path / "lab.html").exists()
