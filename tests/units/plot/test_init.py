"""plot/__init__.py, what every figure shares: the checks of --figure's file before any model is opened, and
the writing of it. Pinned on known answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import run_cli
from drawn import captured
from fakehub import FakeHub

pytest.importorskip("matplotlib")

import re
import struct

import pytest
from matplotlib.figure import Figure

from gpt2emb import plot
from gpt2emb.errors import COMMAND_LINE, UsageError
from gpt2emb.plot import canvas

from drawn import Recorded


@pytest.mark.parametrize("path", ["", "   "])
def test_a_figure_of_no_name_is_refused_before_anything_is_fetched(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("vector", "king", "--figure", path)
    assert result.exit_code == 2
    assert result.stderr.strip() == "gpt2emb: --figure needs a file name, such as --figure king.png"
    assert hub.requests == [] and list(tmp_path.iterdir()) == []


def test_a_refused_target_s_fix_names_a_file_of_its_own_format(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example a refusal gives keeps the format asked for (its extension, in lower case)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "P.SVG").mkdir()
    (tmp_path / "dev.pdf").symlink_to("/dev/null")
    folder = run_cli("vector", "king", "--figure", "P.SVG")
    assert folder.exit_code == 2 and folder.stderr.strip().endswith(
        "--figure writes a regular file; give a file's path, such as --figure P.SVG/figure.svg"
    )
    device = run_cli("vector", "king", "--figure", "dev.pdf")
    assert device.exit_code == 2 and device.stderr.strip().endswith(
        "--figure writes a regular file; give a file's path, such as --figure figure.pdf"
    )
    assert hub.requests == []


@pytest.mark.parametrize(("path", "fix"), [("pics/", "pics/figure.png"), ("out.svg/", "out.svg/figure.svg")])
def test_a_path_ending_in_a_slash_is_given_a_file_in_that_folder(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, fix: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("vector", "king", "--figure", path)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"gpt2emb: --figure {path} ends with a slash, which names a folder: --figure writes a regular file; "
        f"give a file's path, such as --figure {fix}"
    )
    assert hub.requests == [] and list(tmp_path.iterdir()) == []


def a_figure() -> Figure:
    fig = canvas.new_figure(3, 2)
    fig.add_subplot().plot([0, 1], [1, 0], label="a line")
    canvas.suptitle(fig, "a title")
    return fig


@pytest.mark.parametrize("suffix", [".svg", ".pdf"])
def test_the_same_figure_writes_the_same_file(tmp_path: Path, suffix: str) -> None:
    """No date in an SVG or a PDF, an SVG's ids salted alike and its text drawn as paths (no <text>, no
    font asked of the reader's machine): the same figure, made twice, writes the same bytes. (One figure
    written twice may not: constrained layout moves its panels by a hair on the second drawing.)"""
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    plot.save(a_figure(), str(first), "figure")
    plot.save(a_figure(), str(second), "figure")
    assert first.read_bytes() == second.read_bytes()
    if suffix == ".svg":
        text = first.read_text()
        assert "<text" not in text and "<dc:date>" not in text and 'id="' in text


@pytest.mark.parametrize("name", ["x.txt", "x.png"])
def test_a_figure_in_the_cache_is_refused_as_such_whatever_its_extension(
    hub: FakeHub, caches: dict[str, Path], name: str
) -> None:
    """What gpt2emb reads is refused before the extension is looked at: one message for x.txt and x.png."""
    caches["cache"].mkdir(parents=True)
    target = caches["cache"] / name
    result = run_cli("vector", "king", "--figure", str(target))
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"gpt2emb: --figure {target} is in gpt2emb's cache ({caches['cache'].resolve()}), which gpt2emb "
        "reads from: give a path elsewhere"
    )
    assert hub.requests == [] and list(caches["cache"].iterdir()) == []


def test_a_legend_too_long_for_its_figure_is_written_without_a_warning(hub: FakeHub, tmp_path: Path) -> None:
    """analogy's legend, beside its panel, names the expression: one of 25 words leaves matplotlib no room to
    lay the panel out. It says so as a warning (an error under pytest's settings); the figure is written all
    the same, and nothing reaches stderr."""
    six = ("-", "man", "+", "woman", "-", "cat", "+", "dog", "-", "queen", "+", "king")  # six terms
    terms = ["king", *six * 4]
    target = tmp_path / "a.png"
    with captured() as figures:
        result = run_cli("analogy", *terms, "-k", "2", "--figure", str(target))
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "" and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    legend = figures[0].axes[0].get_legend()
    assert legend is not None and any(len(t.get_text()) > 150 for t in legend.get_texts())


def test_an_inline_svg_s_smallest_text_is_the_smallest_a_reader_sees(monkeypatch: pytest.MonkeyPatch) -> None:
    """data-smallest-text counts the texts drawn: not a hidden one, nor one that is empty or blank."""

    def figure(result: str) -> Figure:
        fig = canvas.new_figure(3, 2)
        ax = fig.add_subplot()
        ax.text(0.1, 0.1, result, fontsize=9)
        ax.text(0.2, 0.2, "hidden", fontsize=4).set_visible(False)
        ax.text(0.3, 0.3, "", fontsize=5)
        ax.text(0.4, 0.4, "   ", fontsize=6)
        return fig

    monkeypatch.setitem(sys.modules, "gpt2emb.plot.texts", SimpleNamespace(figure=figure))
    made = plot.svg("texts", "seen")
    assert made.startswith('<svg data-smallest-text="9" ')


def test_an_inline_svg_of_no_text_says_10_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """A figure that writes no text (a bare canvas) is given the size of matplotlib's own default text, 10
    points; and a text that holds "<svg" is escaped in the file, so the root alone carries the size."""

    def figure(title: str) -> Figure:
        fig = canvas.new_figure(3, 2)
        if title:
            fig.add_subplot().set_title(title, fontsize=11)
        return fig

    monkeypatch.setitem(sys.modules, "gpt2emb.plot.bare", SimpleNamespace(figure=figure))
    assert plot.svg("bare", "").startswith('<svg data-smallest-text="10" ')
    titled = plot.svg("bare", "a <svg b")
    assert titled.count("<svg") == 1 and titled.count("data-smallest-text") == 1


def test_a_png_is_drawn_at_110_dpi(recorded: Recorded, tmp_path: Path) -> None:
    recorded("vector", "king", name="v.png")
    head = (tmp_path / "v.png").read_bytes()[:24]
    width, height = struct.unpack(">II", head[16:24])
    assert width == 11 * 110 and abs(height - (1.2 + 0.45) * 110) <= 1


def test_a_figure_without_an_extension_is_a_png_at_the_path_named(tmp_path: Path) -> None:
    fig = canvas.new_figure(2, 1)
    plot.save(fig, str(tmp_path / "wpe"))
    assert (tmp_path / "wpe").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not (tmp_path / "wpe.png").exists()
    token = COMMAND_LINE.set(True)
    try:
        with pytest.raises(
            UsageError, match=r"matplotlib writes no \.txt file; name it \.png, \.svg or \.pdf"
        ):
            plot.save(fig, str(tmp_path / "w.txt"), "figure")
    finally:
        COMMAND_LINE.reset(token)
    assert not (tmp_path / "w.txt").exists()


def test_an_inline_svg_says_its_smallest_text_and_prefixes_its_ids(recorded: Recorded) -> None:
    result, rows, _ = recorded("similarity", "king", "queen")
    made = plot.svg("similarity", result, *rows, prefix="p3-")
    assert made.startswith('<svg data-smallest-text="9" ') and "<?xml" not in made
    ids = re.findall(r'\bid="([^"]+)"', made)
    assert ids and all(i.startswith("p3-") for i in ids)
    assert all(h.startswith("p3-") for h in re.findall(r'href="#([^"]+)"', made))
