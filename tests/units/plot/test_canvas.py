"""plot/canvas.py, what every figure starts from: a figure of no window and a title that fits its width.
Pinned on known answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")


import pytest

from gpt2emb.plot import canvas


def test_a_title_s_line_holds_the_width_less_a_margin_of_20_points() -> None:
    """A 5-inch figure is 360 points, 340 less the margin. At 12.05 points a character is 7.23 points wide
        (0.6 of the size): 47 characters fill 339.8 points, so 47 fit on a line, and 48 do not. At 11.9 points
    (7.14 a character) 48 characters would fill 342.7 points, past the 340: the line still holds 47."""
    fig = canvas.new_figure(5, 3)
    canvas.suptitle(fig, "x" * 47, size=12.05)
    assert fig.get_suptitle() == "x" * 47
    canvas.suptitle(fig, "x" * 48, size=12.05)
    assert fig.get_suptitle() == "x" * 47 + "\nx"
    assert [t.get_fontsize() for t in fig.texts] == [12.05]
    canvas.suptitle(fig, "x" * 48, size=11.9)
    assert fig.get_suptitle() == "x" * 47 + "\nx"


def test_a_title_cut_in_lines_keeps_its_tabs_and_spaces() -> None:
    """Cut only where needed, every character kept but the spaces that end a line: a tab where the line
    breaks stays (not spaces, not dropped), and the spaces that start the next line stay. A 5-inch figure
    holds 47 characters of 12 points a line."""
    fig = canvas.new_figure(5, 3)
    canvas.suptitle(fig, "a" * 40 + "\t" + "b" * 10)
    assert fig.get_suptitle() == "a" * 40 + "\t\n" + "b" * 10
    canvas.suptitle(fig, "a" * 46 + "  " + "b" * 5)
    assert fig.get_suptitle() == "a" * 46 + "\n  " + "b" * 5
    canvas.suptitle(fig, "x" * 46 + " ")  # 47 characters: it fits, as typed
    assert fig.get_suptitle() == "x" * 46 + " "


def test_a_title_wraps_at_the_characters_a_figure_s_width_holds() -> None:
    fig = canvas.new_figure(5, 3)  # 340 points less a margin of 20: 47 characters of 12 points a line
    canvas.suptitle(fig, "x" * 47)
    assert fig.get_suptitle() == "x" * 47
    canvas.suptitle(fig, "word " * 9 + "end")  # 48 characters: cut at a space
    assert fig.get_suptitle() == "word " * 8 + "word\nend"
    assert [t.get_fontsize() for t in fig.texts] == [12]
    narrow = canvas.new_figure(2, 3)  # 124 points: 17 characters, but never fewer than 20
    canvas.suptitle(narrow, "a b c d e f g h i j k l m n o")  # 29 characters
    assert narrow.get_suptitle() == "a b c d e f g h i j\nk l m n o"
    canvas.suptitle(narrow, "a\tb  c " * 4, size=6)  # 6 points: 34 characters a line; tabs and spaces kept
    assert narrow.get_suptitle() == "a\tb  c " * 4
