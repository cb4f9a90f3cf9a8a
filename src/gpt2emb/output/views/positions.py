"""The views of positions: the cosines of position rows, and the heatmap of them all."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from gpt2emb.errors import spelt
from gpt2emb.output.layout import (
    Matrix,
    cosine_cell,
    num,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.results.positions import HeatmapResult, PositionsResult


@view.register
def _(result: PositionsResult, dims: int | None) -> RenderableType:
    labels = ["pos>", "norm>"]
    rows = [[str(p), num(norm, 3)] for p, norm in zip(result.positions, result.norms, strict=True)]
    if result.rows and result.rows != result.positions:  # RoBERTa: position p is row p + 2
        labels.insert(1, "row>")
        for row, r in zip(rows, result.rows, strict=True):
            row.insert(1, str(r))
    return Matrix(
        f"cosine similarity of position rows (wpe) in {result.model}",
        labels,
        rows,
        [f"{p}>" for p in result.positions],
        result.matrix,
        cosine_cell,
        spelt(
            "--json prints every number, --heatmap draws the matrix of all positions, --figure FILE a figure",
            "the result holds every number",
        ),
        titled_table(f"norms of position rows (wpe) in {result.model}", labels, rows),
    )


# every level a character, the lowest too: a cell must show on any background, and without colour
_SHADES = "·░▒▓█"
_ASCII_SHADES = ".:-+#"
# grey at 0, to blue at -1 and to red at +1: each at least 3:1 in contrast on black and on white, so that no
# cell fades into a dark or a light terminal's background (white at 0 vanished on a light one)
_GREY, _BLUE, _RED = (110, 110, 110), (40, 80, 255), (220, 30, 30)


def _cell(v: float) -> tuple[int, str]:
    """A cosine in [-1, 1] as a shade level (how high) and a colour (blue to red, too)."""
    v = max(-1.0, min(1.0, v))
    level = min(4, int((v + 1) / 2 * 5))
    end = _RED if v >= 0 else _BLUE
    r, g, b = (round(m + abs(v) * (e - m)) for m, e in zip(_GREY, end, strict=True))
    return level, f"rgb({r},{g},{b})"


class _Shaded:
    """A line of heatmap cells, two characters each; ASCII shades where the console cannot carry ░▒▓█."""

    def __init__(self, before: str, values: Sequence[float], after: str = "") -> None:
        self.before, self.values, self.after = before, values, after

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shades = _ASCII_SHADES if options.ascii_only else _SHADES

        def cell(v: float) -> tuple[str, str]:
            if math.isnan(v):  # no number: no shade (min and max would make NaN the shade of +1)
                return "??", ""
            level, style = _cell(v)
            return shades[level] * 2, style

        yield Text.assemble(self.before, *map(cell, self.values), self.after)


@view.register
def _(result: HeatmapResult, dims: int | None) -> RenderableType:
    lines: list[RenderableType] = [
        Text(
            f"cosine similarity of all {result.n_positions:,} position rows (wpe) in {result.model}",
            style="bold",
        ),
        Text(
            f"each cell averages {result.block:,.4g} x {result.block:,.4g} positions; position 0 is top left"
        ),
        Text(""),
    ]
    width = len(str(result.n_positions))
    lines += [_Shaded(f"{round(i * result.block):>{width}} ", row) for i, row in enumerate(result.matrix)]
    legend = _Shaded(" " * width + " -1 ", [v / 4 for v in range(-4, 5)], " +1")
    lines += [Text(""), legend]
    if any(math.isnan(v) for row in result.matrix for v in row):
        lines.append(Text("??: a block holding a row of NaN or infinite values, which has no cosine"))
    return Group(*lines)
