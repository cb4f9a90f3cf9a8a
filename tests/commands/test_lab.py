"""gpt2emb lab: the course's lab in one run, each part's JSON exactly its own command's, on the tiny GPT-2
served by the fake Hub and as a folder; a failing part stops the run with its code, named by its number.

lab --html: the page holds every part's question, table, figure and answer; its numbers are lab --json's;
it names the model and its revision, loads nothing from outside, and is written as every file is. (The page in
a real browser: tests/test_lab_browser.py.)"""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import heavy
from gpt2emb.core import analogy
from gpt2emb.errors import BadModel, NetworkError

from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local

KEYS = ["vector", "neighbors", "analogy_kept", "analogy", "sizes", "tying"]
HEADINGS = [
    "1. The first 12 numbers of king's row of wte",
    "2. The 10 nearest tokens to king",
    "3. king - man + woman: the inputs kept, then left out",
    "4. The four GPT-2 sizes and wte's share of each",
    "5. The tying check: does the output layer reuse wte?",
]


def commands(word: str, model: list[str], load: bool = False) -> dict[str, list[str]]:
    """Each part's own command line, as the issue's table gives it (sizes: -m only when lab had one)."""
    return {
        "vector": ["vector", word, *model],
        "neighbors": ["neighbors", word, "-k", "10", *model],
        "analogy_kept": ["analogy", "king", "man", "woman", "--keep-inputs", *model],
        "analogy": ["analogy", "king", "man", "woman", *model],
        "sizes": ["sizes", *model],
        "tying": ["tying", *model, *(["--load"] if load else [])],
    }


def addresses_out(document: dict[str, Any]) -> str:
    """A document's text with memory addresses (tying --load's data_ptr(), new in each run) as 0x..."""
    return re.sub(r"0x[0-9a-f]+", "0x...", json.dumps(document))


@pytest.fixture
def folder(tiny: Tiny, tmp_path: Path) -> str:
    return str(save_local(tiny, tmp_path / "tiny-gpt2"))


@pytest.mark.parametrize("where", ["default", "hub", "folder"])
def test_each_part_is_its_own_command_s_document(hub: FakeHub, folder: str, where: str) -> None:
    model = {"default": [], "hub": ["-m", "openai-community/gpt2"], "folder": ["-m", folder]}[where]
    doc = run_json("lab", *model)
    assert list(doc) == KEYS
    for key, args in commands("king", model).items():
        assert doc[key] == run_json(*args), key
    assert doc["sizes"]["source"] == ("formula" if where == "default" else "checkpoint")
    assert doc["analogy_kept"]["keep_inputs"] and not doc["analogy"]["keep_inputs"]
    assert len(doc["neighbors"]["items"][0]["neighbors"]) == 10


def test_load_passes_on_to_the_tying_part_only(hub: FakeHub) -> None:
    doc = run_json("lab", "--load")
    assert addresses_out(doc["tying"]) == addresses_out(run_json("tying", "--load"))  # each load has its own
    assert [c["name"] for c in doc["tying"]["checks"]][-1] == "loaded_model"
    without = run_json("lab")
    assert {k: v for k, v in doc.items() if k != "tying"} == {
        k: v for k, v in without.items() if k != "tying"
    }


def test_word_changes_parts_1_and_2_only(hub: FakeHub, folder: str) -> None:
    king = run_json("lab", "-m", folder)
    queen = run_json("lab", "-m", folder, "--word", "queen")
    assert queen["vector"] == run_json("vector", "queen", "-m", folder)
    assert queen["neighbors"] == run_json("neighbors", "queen", "-k", "10", "-m", folder)
    assert queen["vector"] != king["vector"] and queen["neighbors"] != king["neighbors"]
    for key in KEYS[2:]:
        assert queen[key] == king[key], key


def test_the_table_shows_the_five_parts_under_numbered_headings(hub: FakeHub) -> None:
    result = run_cli("lab")
    assert result.exit_code == 0, result.output + result.stderr
    out = result.stdout
    at = [out.find(h) for h in HEADINGS]
    assert -1 not in at and at == sorted(at), at
    # each part is shown by its own command's view, under its heading
    views = [
        "king in gpt2:",
        'nearest to " king"',
        "king - man + woman in gpt2 (add, inputs kept, marked *)",
        "king - man + woman in gpt2 (add, inputs left out)",
        "GPT-2 sizes: wte is the largest single piece in all four",
        "gpt2: tied: the output layer reuses wte",
    ]
    found = [out.find(v) for v in views]
    assert -1 not in found and found == sorted(found), found
    assert [out.find(v) > h for v, h in zip(views, [*at[:3], at[2], *at[3:]], strict=True)] == [True] * 6
    assert "... (20 more" in out  # part 1 shows 12 of the tiny model's 32 numbers
    counted = run_cli("lab", "-m", "openai-community/gpt2", "--word", "cat").stdout
    assert "1. The first 12 numbers of cat's row of wte" in counted
    assert "4. gpt2's size and wte's share of it" in counted


def failure(result: Any, code: int, part: int) -> str:
    """The one-line message of a run that failed with code, checked to name the part first."""
    said = result.stdout + result.stderr
    assert result.exit_code == code, said
    assert "Traceback" not in said and "internal error" not in said, said
    line: str = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"gpt2emb: part {part}: "), line
    return line


def test_a_word_the_vocabulary_cannot_make_stops_part_1(hub: FakeHub) -> None:
    alone = run_cli("vector", "<|endoftext|>")
    line = failure(run_cli("lab", "--word", "<|endoftext|>"), alone.exit_code, 1)
    assert alone.exit_code == 2 and line == alone.stderr.strip().replace("gpt2emb: ", "gpt2emb: part 1: ", 1)
    as_json = run_cli("lab", "--word", "", "--json")
    assert as_json.exit_code == 2 and as_json.stdout == ""
    error = json.loads(as_json.stderr)["error"]
    assert error["message"].startswith("part 1: an empty word has no token") and error["code"] == 2


def test_a_broken_row_stops_part_2(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """Row 5 holds inf: its numbers are shown (part 1, inf as null), but it has no cosine with anything."""
    wte = tiny.wte.copy()
    wte[5, 0] = np.inf
    folder = str(save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "broken"))
    alone = run_cli("neighbors", "id:5", "-m", folder)
    assert alone.exit_code == 6 and run_cli("vector", "id:5", "-m", folder).exit_code == 0
    line = failure(run_cli("lab", "--word", "id:5", "-m", folder), 6, 2)
    assert line == alone.stderr.strip().replace("gpt2emb: ", "gpt2emb: part 2: ", 1)
    assert list(run_json("lab", "-m", folder)) == KEYS  # king's rows are whole


def test_a_model_whose_tying_check_fails_stops_at_part_5(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "m")
    (folder / "config.json").write_text(json.dumps({**tiny.config, "activation_function": "gelu_newest"}))
    assert (
        run_cli("vector", "king", "-m", str(folder)).exit_code == 0
    )  # the rows are fine: transformers is not
    line = failure(run_cli("lab", "-m", str(folder)), 6, 5)
    assert "gelu_newest" in line


def test_a_failing_load_stops_at_part_5(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(*_: Any) -> Any:
        raise BadModel("pytorch_model.bin could not be read safely")

    monkeypatch.setattr(heavy, "loaded_model_ties", fails)
    assert run_cli("lab").exit_code == 0  # without --load, nothing is loaded
    assert (
        failure(run_cli("lab", "--load"), 6, 5)
        == "gpt2emb: part 5: pytorch_model.bin could not be read safely"
    )


@pytest.mark.parametrize(
    "part, target, error",
    [
        (3, "gpt2emb.core.analogy.analogy", NetworkError("the Hub did not answer")),
        (4, "gpt2emb.core.sizes.of_models", NetworkError("the Hub did not answer")),
    ],
)
def test_each_part_s_failure_keeps_its_code(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, part: int, target: str, error: Exception
) -> None:
    def fails(*_: Any, **__: Any) -> Any:
        raise error

    monkeypatch.setattr(target, fails)
    code = 6 if isinstance(error, BadModel) else 5
    line = failure(run_cli("lab", "-m", "openai-community/gpt2"), code, part)
    assert line.endswith(str(error))


def test_the_second_analogy_failing_is_part_3_too(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    real = analogy.analogy

    def left_out_fails(*args: Any, **kwargs: Any) -> Any:
        if not args[2].keep_inputs:  # analogy(model, terms, options, ...)
            raise NetworkError("the Hub did not answer")
        return real(*args, **kwargs)

    monkeypatch.setattr(analogy, "analogy", left_out_fails)
    assert failure(run_cli("lab"), 5, 3) == "gpt2emb: part 3: the Hub did not answer"


def test_a_model_that_is_no_model_is_refused_before_any_part(hub: FakeHub) -> None:
    result = run_cli("lab", "-m", "gpt2-xxl")
    assert result.exit_code == 3 and "did you mean gpt2-xl?" in result.stderr
    assert "part" not in result.stderr
    assert hub.requests == []


def test_help_has_examples() -> None:
    out = run_cli("lab", "--help").stdout
    assert "Examples:" in out and "gpt2emb lab --word queen" in out and "--load" in out


# ---------------------------------------------------------------- lab --html

needs_plot = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs gpt2emb[plot]")


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


@needs_plot
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


@needs_plot
def test_the_page_names_the_model_and_its_revision(hub: FakeHub, folder: str, tmp_path: Path) -> None:
    text, _ = made(tmp_path, "-m", "openai-community/gpt2", "--revision", "main")
    assert "openai-community/gpt2" in text and "revision <b>main</b>" in text and COMMIT in text
    local, _ = made(tmp_path, "-m", folder)
    assert f"the local folder {folder}" in local and "tiny-gpt2" in local


@needs_plot
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


@needs_plot
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


@needs_plot
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


@needs_plot
def test_json_with_html_prints_the_document_alone(hub: FakeHub, tmp_path: Path) -> None:
    result = run_cli("lab", "--json", "--html", str(tmp_path / "lab.html"))
    assert result.exit_code == 0, result.stderr
    assert "page written" not in result.stdout and result.stdout.lstrip().startswith("{")
    assert (tmp_path / "lab.html").exists()
