"""Every figure can be read (cross-cutting): drawn on the Agg renderer, no two of its labels' boxes intersect,
none leaves the figure and no annotation leaves its axes (tests/overlaps.py measures them), on the docs' tiny
model, on lab --html's page, and on a model of real GPT-2 shape (bench/run.py's make_checkpoint) for ten
words; the same answer draws the same figure."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from overlaps import clashes

from conftest import run_cli, run_json
from drawn import captured
from fakehub import FakeHub

pytest.importorskip("matplotlib")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import gen_figures
from gen_docs import Workspace, invoke

ROOT = Path(__file__).resolve().parents[1]

DOCS_FIGURES = sorted(
    n for page in gen_figures.pages() for _, n in gen_figures.figure_lines(page.read_text())
)
TEN = ["king", "queen", "man", "woman", "cat", "dog", "paris", "france", "apple", "river"]


def drawn_by(*args: str) -> Any:
    """The one figure a command line draws (into a file it names in a temporary folder)."""
    with captured() as figures:
        result = run_cli(*args)
    assert result.exit_code == 0, result.stderr
    (fig,) = figures
    return fig


@pytest.mark.parametrize("name", DOCS_FIGURES)
def test_every_docs_figure_has_its_labels_apart_and_inside(hub: FakeHub, tmp_path: Path, name: str) -> None:
    (words,) = [
        w for page in gen_figures.pages() for w, n in gen_figures.figure_lines(page.read_text()) if n == name
    ]
    args = list(words[1:])
    args[args.index("--figure") + 1] = str(tmp_path / name)
    with Workspace(hub).opened(), captured() as figures:
        out, code = invoke(args, dict(os.environ))
    assert code == 0, out
    assert clashes(figures[0]) == []


def test_the_positions_figure_has_its_labels_apart_and_inside(hub: FakeHub, tmp_path: Path) -> None:
    assert clashes(drawn_by("positions", "--figure", str(tmp_path / "wpe.png"))) == []


def test_the_lab_pages_figures_have_their_labels_apart_and_inside(hub: FakeHub, tmp_path: Path) -> None:
    from gpt2emb import plot

    figures: list[Any] = []
    original = plot._print

    def keep(fig: Any, f: Any, fmt: str) -> None:
        figures.append(fig)
        original(fig, f, fmt)

    with mock.patch.object(plot, "_print", keep):
        assert run_cli("lab", "--html", str(tmp_path / "lab.html")).exit_code == 0
    assert len(figures) == 4
    assert [clashes(fig) for fig in figures] == [[]] * 4


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a checkpoint of gpt2's real shape (its real tokenizer, random wte and wpe)."""
    sys.path.insert(0, str(ROOT / "bench"))
    bench = importlib.import_module("run")  # bench/run.py

    folder = tmp_path_factory.mktemp("gpt2-shaped") / "gpt2-shaped"
    bench.make_checkpoint(folder, "gpt2", bench.tokenizer_json())
    return folder


@pytest.mark.parametrize(
    "args",
    [
        ["neighbors", *TEN, "-k", "10"],
        ["analogy", "king", "man", "woman", "-k", "10"],
        ["vector", *TEN],
        ["similarity", *TEN],
    ],
    ids=lambda a: a[0],
)
def test_figures_of_ten_words_on_a_gpt2_shaped_model_can_be_read(
    hub: FakeHub, shaped: Path, tmp_path: Path, args: list[str]
) -> None:
    fig = drawn_by(*args, "-m", str(shaped), "--figure", str(tmp_path / "f.png"))
    assert clashes(fig) == []


def test_the_same_answer_draws_the_same_figure(hub: FakeHub, tmp_path: Path) -> None:
    """Placement is deterministic: two runs write the same bytes (an SVG has no date, its ids alike)."""
    made = []
    for n in (1, 2):
        target = tmp_path / f"{n}.svg"
        run_json("neighbors", "cat", "dog", "-k", "8", "--figure", str(target))
        made.append(target.read_bytes())
    assert made[0] == made[1]
