"""plot/neighbors.py: the neighbours figure, read back from what it drew."""

from __future__ import annotations

import dataclasses

from matplotlib.figure import Figure

from gpt2emb.plot import neighbors

from drawn import Recorded


def bounds(fig: Figure) -> list[tuple[float, ...]]:
    return [tuple(round(v, 6) for v in ax.get_position().bounds) for ax in fig.axes]


def test_neighbors_of_four_words_stand_three_a_row_each_panel_7_by_6_inches(recorded: Recorded) -> None:
    result, _, fig = recorded("neighbors", "king", "queen", "man", "woman", "-k", "3")
    assert list(fig.get_size_inches()) == [21.0, 12.4]  # 3 panels across, 2 rows, and the caption
    (a, b, c, d) = bounds(fig)
    assert a[1] == b[1] == c[1] > d[1] and a[0] == d[0] < b[0] < c[0]
    assert fig.get_suptitle() == f"{result.model}: which tokens lie nearest to king, queen, man, woman?"


def test_neighbors_title_names_six_words_and_says_there_are_more(recorded: Recorded) -> None:
    result, rows, _ = recorded("neighbors", "king", "queen", "man", "-k", "2")
    six = neighbors.figure(dataclasses.replace(result, items=result.items * 2), *rows)
    seven = neighbors.figure(dataclasses.replace(result, items=result.items * 2 + result.items[:1]), *rows)
    assert six.get_suptitle().endswith("nearest to king, queen, man, king, queen, man?")
    assert seven.get_suptitle().endswith("nearest to king, queen, man, king, queen, man, ...?")
    assert len(seven.axes) == 7 and list(seven.get_size_inches()) == [21.0, 18.4]
