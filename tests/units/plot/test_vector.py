"""plot/vector.py: the strips of a word's row, read back from what the figure drew."""

from __future__ import annotations

import dataclasses

import numpy as np

from gpt2emb.plot import vector

from drawn import Recorded


def test_vector_of_one_word_asks_which_dimensions_stand_out(recorded: Recorded) -> None:
    result, _, fig = recorded("vector", "king")
    d = len(result.items[0].vector)
    assert (
        fig.get_suptitle()
        == f"{result.model}: which of the {d:,} dimensions of the row of wte for king stand out?"
    )
    assert fig.axes[0].get_xlabel() == f"dimension (0 to {d - 1})"


def test_vector_title_names_six_words_and_says_there_are_more(recorded: Recorded) -> None:
    result, _, _ = recorded("vector", "king", "queen")
    six = vector.question(dataclasses.replace(result, items=result.items * 3), 32)
    seven = vector.question(dataclasses.replace(result, items=result.items * 3 + result.items[:1]), 32)
    assert "wte for king, queen, king, queen, king, queen stand out in the same dimensions?" in six
    assert "wte for king, queen, king, queen, king, queen, ... stand out in the same dimensions?" in seven


def test_vector_strips_share_a_scale_from_their_largest_magnitude(recorded: Recorded) -> None:
    result, rows, _ = recorded("vector", "king", "queen")

    def clim(*vectors: tuple[float, ...]) -> tuple[float, float]:
        items = tuple(
            dataclasses.replace(item, vector=v) for item, v in zip(result.items, vectors, strict=True)
        )
        fig = vector.figure(dataclasses.replace(result, items=items), *rows)
        return fig.axes[0].images[0].get_clim()

    assert clim((0.1, -0.5, 0.2), (0.25, 0.0, 0.3)) == (-0.5, 0.5)  # below 1: the largest, not 1
    assert clim((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == (-1.0, 1.0)  # all zero: a scale of 1 all the same
    assert clim((np.nan, np.nan, np.nan), (np.nan, np.nan, np.nan)) == (-1.0, 1.0)
    assert clim((np.nan, 3.0, 0.0), (-2.0, 0.0, 0.0)) == (-3.0, 3.0)
    fig = vector.figure(result, *rows)
    assert list(fig.get_size_inches()) == [11.0, 1.2 + 0.45 * 2]


def test_vector_colour_bar_stays_thin_however_many_strips(recorded: Recorded) -> None:
    """fraction=0.03: the bar takes 3% of the figure's width at most, for two strips or twenty (constrained
    layout sizes it by its aspect while the figure is wide and low, by the fraction once it is tall)."""
    result, rows, _ = recorded("vector", "king", "queen")
    for n in (1, 10):
        fig = vector.figure(dataclasses.replace(result, items=result.items * n), *rows)
        fig.draw_without_rendering()
        _, bar = fig.axes
        assert bar.get_label() == "<colorbar>" and 0 < bar.get_position().width <= 0.03
