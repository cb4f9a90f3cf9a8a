"""output/pages/__init__.py: what a page is made of, on known answers.

A number is written as the terminal's tables show it, and so are a cell and a table. A figure gets the width
it needs for 9 px text, and stands beside its tables or not. The rules that show a table's scroll cue are
checked, and a page's file without a name is refused."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from gpt2emb.errors import COMMAND_LINE, UsageError
from gpt2emb.output import pages


def svg(width: float, smallest: float | None = 6.0) -> str:
    size = f' data-smallest-text="{smallest}"' if smallest is not None else ""
    return f'<svg viewBox="0 0 {width} 300"{size}><svg id="inner"></svg></svg>'


def test_a_number_as_the_tables_show_it() -> None:
    assert pages.number(None) == "-"
    assert pages.number(1 / 3) == "0.3333" and pages.number(1 / 3, digits=2) == "0.33"
    assert pages.number(-0.5) == "-0.5000" and pages.number(2.5, sign=True) == "+2.5000"
    # a negative that rounds to zero shows no sign, unless a sign is asked for
    assert pages.number(-0.00001) == "0.0000" and pages.number(-0.00001, sign=True) == "-0.0000"
    # from FIXED_BELOW on, in exponent form; an infinity is not a large number to write so
    assert pages.number(999_999.0) == "999999.0000" and pages.number(1e6) == "1.0000e+06"
    assert pages.number(-12_345_678.0) == "-1.2346e+07" and pages.number(2e6, sign=True) == "+2.0000e+06"
    assert pages.number(math.inf) == "inf" and pages.number(5.0) == "5.0000"


def test_text_cells_and_tables() -> None:
    assert pages.text('<a href="x">\'&') == "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;"
    assert pages.cell("1.0") == "<td>1.0</td>"
    assert pages.cell("1.0", "rows.0.cosine", "num") == '<td class="num" data-json="rows.0.cosine">1.0</td>'
    assert pages.cell("x", 'a"b') == '<td data-json="a&quot;b">x</td>'
    made = pages.table("Two & one", ["word", "cosine>"], [[pages.cell("cat"), pages.cell("0.5", kind="num")]])
    assert made == (
        '<div class="scroll"><table><caption>Two &amp; one</caption><thead><tr><th>word</th>'
        '<th class="num">cosine</th></tr></thead><tbody><tr><td>cat</td><td class="num">0.5</td></tr></tbody>'
        "</table></div>"
    )


def test_the_least_width_keeps_the_smallest_text_9_px() -> None:
    assert pages.least_width(svg(720)) == 1080  # 720 * 9 / 6
    assert pages.least_width(svg(100, 4.5)) == 200 and pages.least_width(svg(101, 4.5)) == 202  # rounded up
    # what is not known leaves no least width
    assert pages.least_width(svg(720, None)) == 0 and pages.least_width(svg(720, 0)) == 0
    assert pages.least_width('<svg data-smallest-text="6">') == 0


def test_a_figure_stands_beside_its_tables_while_3_5_of_the_window_holds_it() -> None:
    # (1064 - 32 - 32) * 3 / 5 = 600: a figure of least width 600 fits beside, 601 does not
    assert pages.beside(svg(400), window=1064) and not pages.beside(svg(400.5), window=1064)
    assert pages.least_width(svg(400)) == 600 and pages.least_width(svg(400.5)) == 601
    assert pages.beside(svg(486)) and not pages.beside(svg(487))  # 729 and 731 against 729.6 at 1280
    assert pages.least_width(svg(486.5)) == 730 and not pages.beside(svg(486.5))  # 1281 would hold 730.2


def test_a_figure_s_box_and_the_widths_its_cue_shows_at() -> None:
    made = pages.figure_box(svg(400), "part-2")  # least width 600: holds at 1000 + 64 px
    cue = "#part-2 .cue{display:block}"
    rules = f"@media (max-width:632px){{{cue}}}@media (min-width:960px) and (max-width:1064px){{{cue}}}"
    assert made == (
        f'<style>{rules}</style><div class="scroll"><svg style="min-width:600px" viewBox="0 0 400 300" '
        'data-smallest-text="6.0"><svg id="inner"></svg></svg></div>'
        '<p class="cue">The figure is wider than the page: scroll it sideways &rarr;</p>'
    )
    # a figure that spans the page never stands beside its tables: only the narrow rule
    assert f"<style>@media (max-width:632px){{{cue}}}</style>" in pages.figure_box(
        svg(400), "part-2", wide=True
    )
    # one that 3/5 of a two-column window always holds (least 537: 895 + 64 < 960): only the narrow rule
    assert pages.figure_box(svg(358), "p").startswith(
        "<style>@media (max-width:569px){#p .cue{display:block}}</style>"
    )


def test_a_page_s_file_needs_a_name(tmp_path: Path) -> None:
    token = COMMAND_LINE.set(True)
    try:
        with pytest.raises(UsageError, match=r"needs a file name, such as --html lab\.html"):
            pages.check("  ")
        assert pages.check(str(tmp_path / "a.html")) == str(tmp_path / "a.html")
        # a name ending in a slash names a folder: the fix suggests a file in it
        folder = f"{tmp_path}/pages/"
        with pytest.raises(UsageError) as refused:
            pages.check(folder)
        assert str(refused.value) == (
            f"--html {folder} ends with a slash, which names a folder: --html writes a regular file; give a "
            f"file's path, such as --html {tmp_path}/pages/lab.html"
        )
    finally:
        COMMAND_LINE.reset(token)
