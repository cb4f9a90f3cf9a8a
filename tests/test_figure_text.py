"""Every text a figure draws is drawn as typed (plot.literal): a word, a token, a model's name or an
expression holding $, \\, {}, ^ (matplotlib's mathtext, or LaTeX where a matplotlibrc asks) is drawn as it
is, read back unchanged from the artists of every figure; "cannot write" is said only where writing failed."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from matplotlib.figure import Figure
from matplotlib.text import Text

from gpt2emb import plot
from gpt2emb.quoting import quote

from conftest import FUZZ, run_cli
from drawn import captured
from fakehub import FakeHub
from tinymodel import Tiny, save_local

# each figure's command line, drawn once from the tiny model; its result is then drawn again with a text in
# each of its fields that a figure shows
COMMANDS = {
    "vector": ["vector", "cat", "king"],
    "neighbors": ["neighbors", "cat", "king", "-k", "3"],
    "similarity": ["similarity", "cat", "king", "queen"],
    "analogy": ["analogy", "king", "man", "woman", "-k", "3"],
    "context": ["context", "cat", "the cat sat", "a cat ran"],
    "geometry": ["geometry"],
    "sizes": ["sizes"],
    "positions": ["positions"],
}
# the fields whose text a figure draws: the model's name (raw, in the title), and words, tokens,
# sentences and sums (each token and word quoted as the tables quote it, the sum raw)
FIELDS = {"model", "name", "word", "token", "text", "expression"}
THE_ISSUE_S = ["$$", "$x^2$", "\\frac", "$\\alpha$"]
# printable text of the characters matplotlib's own font draws (a missing glyph is another matter), with
# those that mathtext and LaTeX read weighted up
TEXTS = st.text(
    st.one_of(
        st.sampled_from("$\\{}^_%&#~"),
        st.characters(min_codepoint=0x20, max_codepoint=0x17E, exclude_categories=("Cc", "Cs", "Zl", "Zp")),
    ),
    min_size=1,
    max_size=12,
)


@dataclasses.dataclass
class Drawn:
    """A command's figure as drawn: the function that draws it again from its result and its rows."""

    result: Any
    again: Callable[[Any, str], None]  # draws a result and writes it to a file, as the command does
    make: Callable[[Any], Figure]  # the figure of a result, made as the command makes it, written nowhere


def with_text(value: Any, text: str, fields: set[str]) -> Any:
    """A result with every field named in fields (at any depth) holding text."""
    if isinstance(value, tuple):
        return tuple(with_text(v, text, fields) for v in value)
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    changes = {
        f.name: text
        if f.name in fields and isinstance(getattr(value, f.name), str)
        else with_text(getattr(value, f.name), text, fields)
        for f in dataclasses.fields(value)
    }
    return dataclasses.replace(value, **changes)


@pytest.fixture(scope="module")
def figures(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Drawn]:
    """Each figure's result and rows, as its command drew it from the tiny model (a folder, cached once for
    the module's tests)."""
    where = tmp_path_factory.mktemp("figures")
    model = str(save_local(tiny, where / "tiny"))
    found: dict[str, Drawn] = {}
    draw, positions = plot.draw, plot.positions_figure

    def recorded(stem: str, result: Any, path: str, *rows: Any) -> Any:
        module = importlib.import_module(f"gpt2emb.plot.{stem}")
        found[stem] = Drawn(
            result, lambda r, p: draw(stem, r, p, *rows) and None, lambda r: module.figure(r, *rows)
        )
        return draw(stem, result, path, *rows)

    def recorded_map(
        matrix: Any, norms: Any, components: Any, model: str, path: str, name: str = "figure"
    ) -> None:
        found["positions"] = Drawn(
            model,
            lambda m, p: positions(matrix, norms, components, m, p),
            lambda m: plot.positions.figure(matrix, norms, components, m),
        )
        positions(matrix, norms, components, model, path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPT2EMB_CACHE_DIR", str(where / "cache"))
        patch.setattr(plot, "draw", recorded)
        patch.setattr(plot, "positions_figure", recorded_map)
        for stem, command in COMMANDS.items():
            result = run_cli(*command, "-m", model, "--figure", str(where / f"{stem}.png"))
            assert result.exit_code == 0, (stem, result.stderr)
    assert set(found) == set(COMMANDS)
    return found


def texts_of(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_text()]


def given_text(figures: dict[str, Drawn], stem: str, text: str) -> Any:
    """What the stem's figure is drawn from, with text in each field it shows (an analogy's words, which
    group its tokens, left as they are)."""
    drawn = figures[stem]
    if stem == "positions":
        return text
    return with_text(drawn.result, text, FIELDS - ({"word"} if stem == "analogy" else set()))


def draw_with(figures: dict[str, Drawn], stem: str, text: str, path: Path) -> Figure:
    """The stem's figure drawn again with text, written to path as the command writes it; the figure."""
    with captured() as kept:
        figures[stem].again(given_text(figures, stem, text), str(path))
    [fig] = kept
    return fig


def made_with(figures: dict[str, Drawn], stem: str, text: str) -> Figure:
    """The stem's figure made again with text and laid out (every text placed, as a file's writing places
    it: mathtext, where it were on, would be parsed here), but written nowhere."""
    with plot.literal():
        fig = figures[stem].make(given_text(figures, stem, text))
        fig.draw_without_rendering()
    return fig


def check_literal(fig: Figure, text: str, stem: str) -> None:
    """Every text drawn as it is (no mathtext, no LaTeX); the text in the figure's title as given, and
    quoted in its panels, where the figure shows words or tokens."""
    drawn = texts_of(fig)
    assert all(not t.get_parse_math() and not t.get_usetex() for t in drawn), stem
    strings = [t.get_text() for t in drawn]
    assert text in fig.get_suptitle(), (stem, fig.get_suptitle())
    if stem not in ("geometry", "sizes", "positions"):
        assert any(quote(text, 28) in s for s in strings if s != fig.get_suptitle()), (stem, strings)
    if stem == "sizes":
        assert text in fig.axes[0].get_title(), stem


@pytest.mark.parametrize(
    "command",
    [
        ["lab", "--word", "$$", "--html", "l.html"],
        ["neighbors", "$$", "-k", "2", "--figure", "n.svg"],
        ["vector", "$\\frac$", "--figure", "v.png"],
        ["similarity", "$\\frac$", "cat", "--figure", "s.png"],
        ["analogy", "$\\frac$", "cat", "king", "--figure", "a.png"],
        ["context", "$x^2$", "a $x^2$ b", "c $x^2$", "--figure", "c.png"],
    ],
)
def test_the_issue_s_command_lines_answer_and_write_their_file(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with captured() as drawn:
        result = run_cli(*command)
    assert result.exit_code == 0, result.stderr
    assert "cannot write" not in result.stderr and "error" not in result.stderr
    assert (tmp_path / command[-1]).stat().st_size > 0
    word = command[1]
    for fig in drawn:  # lab's page draws its figures inline, not through a file of their own
        texts = [t for t in fig.findobj(Text) if t.get_text()]
        assert all(not t.get_parse_math() and not t.get_usetex() for t in texts)
        assert any(word in t.get_text() or quote(word) in t.get_text() for t in texts), command


@pytest.mark.parametrize("text", THE_ISSUE_S)
def test_the_issue_s_tokens_are_drawn_as_typed_on_every_figure(
    figures: dict[str, Drawn], tmp_path: Path, text: str
) -> None:
    for stem in COMMANDS:
        for suffix in (".png", ".svg", ".pdf"):
            path = tmp_path / f"{stem}{suffix}"
            check_literal(draw_with(figures, stem, text, path), text, stem)
            assert path.stat().st_size > 0


def test_a_matplotlibrc_that_asks_for_latex_changes_nothing(
    figures: dict[str, Drawn], tmp_path: Path
) -> None:
    with matplotlib.rc_context({"text.usetex": True, "text.parse_math": True}):
        for stem in COMMANDS:
            check_literal(draw_with(figures, stem, "$x^2$", tmp_path / f"{stem}.png"), "$x^2$", stem)


@FUZZ
@given(text=TEXTS, stem=st.sampled_from(list(COMMANDS)))
@example(text="$\\frac$", stem="neighbors")
def test_any_text_is_drawn_as_typed_on_every_figure(figures: dict[str, Drawn], text: str, stem: str) -> None:
    """Any text, on a figure drawn for each example (every figure, over a run's examples; the issue's
    tokens are drawn on each above)."""
    check_literal(made_with(figures, stem, text), text, stem)


@pytest.mark.parametrize("stem", ["sizes", "vector", "geometry"])
def test_a_long_model_name_draws_without_a_warning(tiny: Tiny, tmp_path: Path, stem: str) -> None:
    """A folder's name of 200 characters: matplotlib's own warning (its source line with it) never reaches
    stderr, and the figure is written; sizes puts the name on lines in its panel's title."""
    folder = save_local(tiny, tmp_path / ("m" * 200))
    command = {"sizes": ["sizes"], "vector": ["vector", "cat"], "geometry": ["geometry"]}[stem]
    with captured() as drawn:
        result = run_cli(*command, "-m", str(folder), "--figure", str(tmp_path / "f.png"))
    assert result.exit_code == 0, result.stderr
    assert "Warning" not in result.stderr
    assert (tmp_path / "f.png").stat().st_size > 0
    if stem == "sizes":
        label = drawn[0].axes[0].get_title().split(": ")[0]
        assert label.replace("\n", "") == str(folder) and max(map(len, label.split("\n"))) <= 40
