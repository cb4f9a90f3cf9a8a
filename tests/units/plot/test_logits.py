"""plot/logits.py's grid on a lens of known answers (issue 53): the figure's size for many layers, the colour
scale, which cells are written in white, the layers' and positions' ticks, the labels and the title, masked
or not. The result is built by hand, so each expected value is known without a model."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

from gpt2emb import plot
from gpt2emb.plot import logits

from drawn import Recorded


def lens(probabilities: list[list[float]], *, masked: bool = False) -> Any:
    """A logits result whose grid holds these probabilities: one list per position, layer 0 first; the token
    at position p is "tP", each cell's "cP.L"."""
    grid = tuple(
        SimpleNamespace(
            position=p + 3,
            id=p,
            token=f"t{p}",
            cells=tuple(
                SimpleNamespace(layer=n, id=100 + n, token=f"c{p}.{n}", probability=v)
                for n, v in enumerate(column)
            ),
        )
        for p, column in enumerate(probabilities)
    )
    return cast(Any, SimpleNamespace(model="m", grid=grid, masked=masked, table="wte"))


def title(fig: Figure) -> str:
    return fig.get_suptitle().replace("\n", " ")


def test_the_grid_grows_by_its_cell_for_each_layer_and_position() -> None:
    fig = logits.figure(lens([[0.5] * 24] * 3))
    assert list(fig.get_size_inches()) == pytest.approx([1.0 * 3 + 3.2, 0.42 * 24 + 2.2])
    low = logits.figure(lens([[0.5] * 3] * 2))  # 3 layers: 3.46 inches, less than the least height
    assert list(low.get_size_inches()) == pytest.approx([1.0 * 2 + 3.2, 3.6])


def test_the_colours_run_from_probability_0_to_1_layer_0_at_the_bottom() -> None:
    ax = logits.figure(lens([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])).axes[0]
    (image,) = ax.images
    assert image.get_clim() == (0.0, 1.0) and image.get_cmap().name == "viridis"
    assert image.origin == "lower"
    assert np.asarray(image.get_array()).tolist() == [[0.1, 0.3, 0.5], [0.2, 0.4, 0.6]]  # (layers, positions)


def test_a_cell_below_0_6_is_written_in_white_at_its_layer_and_position() -> None:
    ax = logits.figure(lens([[0.0, 0.59], [0.6, 1.0]])).axes[0]
    found = [(t.get_text(), t.get_position(), to_hex(t.get_color()), t.get_fontsize()) for t in ax.texts]
    white, black = "#ffffff", "#000000"
    assert found == [
        ('"c0.0"', (0, 0), white, 8),
        ('"c0.1"', (0, 1), white, 8),
        ('"c1.0"', (1, 0), black, 8),
        ('"c1.1"', (1, 1), black, 8),
    ]
    placed = {(t.get_horizontalalignment(), t.get_verticalalignment()) for t in ax.texts}
    assert placed == {("center", "center")}


def test_the_layers_are_named_h0_to_last_and_the_positions_by_token_and_place() -> None:
    ax = logits.figure(lens([[0.5] * 4, [0.5] * 4])).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0 (h0)", "1", "2", "3 (last)"]
    assert list(ax.get_yticks()) == [0, 1, 2, 3] and list(ax.get_xticks()) == [0, 1]
    assert [t.get_text() for t in ax.get_xticklabels()] == ['"t0"\n3', '"t1"\n4']
    assert {t.get_fontsize() for t in ax.get_xticklabels()} == {8}  # a cell's size: a token fits its column
    assert ax.get_ylabel() == "layer"
    assert ax.get_xlabel() == "the text's token at each position (the cell: the next token it predicts)"
    (bar,) = [a for a in ax.figure.axes if a.get_label() == "<colorbar>"]
    assert bar.get_ylabel() == "probability of the top token"


def test_the_title_says_what_the_lens_reads_masked_or_not() -> None:
    fig = logits.figure(lens([[0.5, 0.5]] * 3))
    assert title(fig) == (
        "m: what each layer would predict next, read through wteᵀ (the logit lens), at its last 3 positions"
    )
    masked = logits.figure(lens([[0.5, 0.5]] * 3, masked=True))
    assert title(masked) == (
        "m: what each layer would fill in, read through its head (· wteᵀ + bias) (the logit lens), "
        "at its 3 positions"
    )
    assert masked.axes[0].get_xlabel().endswith("(the cell: the token the head puts there)")


def test_every_text_is_drawn_as_typed_its_labels_too() -> None:
    """A figure is made within plot.literal(), as --figure makes it: no text of it, an axis's label or a
    tick's as much as a cell's, is read as mathtext (a label's own parse_math=True would override the rc)."""
    with plot.literal():
        fig = logits.figure(lens([[0.5, 0.5], [0.5, 0.5]]))
        fig.draw_without_rendering()
    texts = [t for t in fig.findobj(Text) if t.get_text()]
    ax = fig.axes[0]
    assert {ax.xaxis.label, ax.yaxis.label} <= set(texts)
    assert [t.get_text() for t in texts if t.get_parse_math()] == []


def test_a_cell_s_token_is_cut_to_10_characters_quotes_included() -> None:
    assert logits.shown("abcdefgh") == '"abcdefgh"' and logits.shown(" king") == '" king"'
    assert logits.shown("abcdefghi") == '"abcdefgh…' and logits.shown("abcdefghijklm") == '"abcdefgh…'


def test_logits_of_one_token_say_its_one_position(recorded: Recorded) -> None:
    result, _, fig = recorded("logits", "king")
    layers = len(result.grid[0].cells)
    title = fig.get_suptitle().replace("\n", " ")
    assert (
        "what each layer would predict next, read through wteᵀ (the logit lens), at its one position" in title
    )
    assert fig.axes[0].get_xlabel().endswith("(the cell: the next token it predicts)")
    assert list(fig.get_size_inches()) == pytest.approx([1.0 + 3.2, max(3.6, 0.42 * layers + 2.2)])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][:1] == ["0 (h0)"]
