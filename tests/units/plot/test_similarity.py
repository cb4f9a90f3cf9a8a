"""plot/similarity.py: the matrix of cosines, read back from what the figure drew."""

from __future__ import annotations

import dataclasses

from matplotlib.figure import Figure

from gpt2emb.plot import similarity

from drawn import Recorded


def test_similarity_writes_each_cell_s_number_up_to_30_words(recorded: Recorded) -> None:
    result, _, fig = recorded("similarity", "king", "queen")
    assert list(fig.get_size_inches()) == [3 + 1.2 + 1.5, 3 + 1.2]

    def many(n: int) -> Figure:
        items = (result.items * n)[:n]
        matrix = tuple(tuple(0.5 for _ in range(n)) for _ in range(n))
        return similarity.figure(dataclasses.replace(result, items=items, matrix=matrix))

    assert len(many(30).axes[0].texts) == 900 and list(many(30).get_size_inches()) == [22.5, 21.0]
    assert len(many(31).axes[0].texts) == 0 and list(many(45).get_size_inches()) == [31.5, 30.0]
    assert list(many(60).get_size_inches()) == [31.5, 30.0]  # 3 + 0.6 x 60 = 39 inches, held at 30


def test_similarity_cells_dark_past_0_6_written_in_white(recorded: Recorded) -> None:
    result, _, _ = recorded("similarity", "king", "queen")
    fig = similarity.figure(dataclasses.replace(result, matrix=((0.6, 0.61), (-0.7, None))))
    shown = [(t.get_text(), t.get_color(), t.get_fontsize()) for t in fig.axes[0].texts]
    assert shown == [("0.60", "black", 9), ("0.61", "white", 9), ("-0.70", "white", 9), ("-", "black", 9)]
    assert fig.axes[0].images[0].get_clim() == (-1, 1)
    assert [t.get_rotation() for t in fig.axes[0].get_xticklabels()] == [45, 45]
