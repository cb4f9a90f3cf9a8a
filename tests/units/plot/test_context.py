"""plot/context.py, context --figure: the cosine of the word's vectors in each pair of sentences, layer by
layer. Pinned on known answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from gpt2emb.plot import context

from conftest import run_json
from drawn import Recorded, captured, legend_texts
from fakehub import FakeHub

pytest.importorskip("matplotlib")

LONG = "the cat and king is a man and the cat"  # 37 characters


def test_a_sentence_is_named_in_the_legend_by_its_first_28_characters(hub: FakeHub, tmp_path: Path) -> None:
    with captured() as figures:
        run_json("context", "king", "the king", LONG, "--figure", str(tmp_path / "c.png"))
    legend = figures[0].axes[0].get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == [
        '1 vs 2: "the king" / "the cat and king is a man an"...'
    ]


def with_cosines(result: Any, cosine: Callable[[int, int], float | None]) -> Any:
    """The result with each pair's cosine at each layer made by cosine(layer, pair)."""
    layers = tuple(
        dataclasses.replace(
            layer, pairs=tuple(dataclasses.replace(p, cosine=cosine(i, j)) for j, p in enumerate(layer.pairs))
        )
        for i, layer in enumerate(result.layers)
    )
    return dataclasses.replace(result, layers=layers)


def test_context_lines_of_six_pairs_each_keep_a_marker_and_a_dash(recorded: Recorded) -> None:
    result, _, fig = recorded("context", "king", "the king", "a king", "and king", "is king")
    lines = fig.axes[0].lines[:6]
    assert [ln.get_marker() for ln in lines] == ["o", "s", "^", "D", "v", "P"]
    assert [ln.get_markersize() for ln in lines] == [9, 7, 5, 3, 3, 3]  # smaller each time, down to 3
    assert [ln.get_linestyle() for ln in lines] == ["-", "--", ":", "-.", "-", "--"]
    names = [t.get_text().split(":")[0] for t in legend_texts(fig.axes[0])]
    assert names == ["1 vs 2", "1 vs 3", "1 vs 4", "2 vs 3", "2 vs 4", "3 vs 4"]
    assert (
        fig.axes[0].get_ylim()[0] == 0.0 or min(p.cosine for layer in result.layers for p in layer.pairs) < 0
    )


def test_context_scale_goes_below_0_only_for_a_negative_cosine(recorded: Recorded) -> None:
    result, _, _ = recorded("context", "king", "the king", "a king", "and king")
    low = context.figure(with_cosines(result, lambda i, j: -0.3 if (i, j) == (1, 2) else 0.5))
    assert low.axes[0].get_ylim() == pytest.approx((-0.35, 1.05))
    high = context.figure(with_cosines(result, lambda i, j: 0.2 + 0.1 * j))
    assert high.axes[0].get_ylim() == (0.0, 1.05)
    blank = context.figure(with_cosines(result, lambda i, j: None))
    assert blank.axes[0].get_ylim() == (0.0, 1.05)
    # layer 0 is marked at x = 0, its note just right of it, at the foot
    (mark,) = [ln for ln in low.axes[0].lines if ln.get_linestyle() == ":" and ln.get_color() == "grey"]
    assert list(np.asarray(mark.get_xdata())) == [0, 0] and mark.get_linewidth() == 1
    (note,) = cast(list[Any], low.axes[0].texts)  # an Annotation: its point and offset
    assert note.xy == (0, 0.02) and note.xyann == (6, 0) and note.get_fontsize() == 8


def test_context_says_which_lines_coincide_to_3_decimals(recorded: Recorded) -> None:
    result, _, _ = recorded("context", "king", "the king", "a king", "and king")
    fig = context.figure(with_cosines(result, lambda i, j: 0.5 + (0.0004, 0.0, 0.0012)[j]))
    said = [t.get_text() for t in legend_texts(fig.axes[0])]
    # 1 vs 3 lies 0.0004 under 1 vs 2: the same to 3 decimals; 2 vs 3, 0.0008 over it and 0.0012 over
    # 1 vs 3, is a line of its own
    assert "(=" not in said[0] and said[1].endswith("(= 1 vs 2 to 3 decimals)") and "(=" not in said[2]
    # a layer where no pair has a cosine (None, drawn as a gap) does not keep lines that coincide apart
    gap = context.figure(
        with_cosines(result, lambda i, j: None if i == 0 else 0.5 + (0.0004, 0.0, 0.0012)[j])
    )
    assert [t.get_text() for t in legend_texts(gap.axes[0])] == said
