"""The view of neighbors: each word's nearest tokens, or with --fold one row per word and its other forms."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len, chop_cells
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.text import Text

from gpt2emb.output.layout import note_lines, num, split, titled_table
from gpt2emb.output.views import view
from gpt2emb.output.views.words import candidates_line
from gpt2emb.quoting import quote as tok
from gpt2emb.results.neighbors import NeighborsResult


class _Tokens:
    """Quoted tokens side by side, wrapped between tokens and never inside one: rich would break a line at a
    token's own leading space, which is part of the token."""

    def __init__(self, tokens: list[str]) -> None:
        self.shown = [tok(t) for t in tokens]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        # the narrowest: the widest token on a line of its own; the widest: all on one line
        widths = [cell_len(t) for t in self.shown]
        return Measurement(max(widths, default=0), sum(widths) + max(0, len(widths) - 1))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        lines: list[str] = []
        for t in self.shown:
            if lines and cell_len(lines[-1]) + 1 + cell_len(t) <= width:
                lines[-1] += " " + t
            else:  # a new line; a token wider than the column is cut at its width, not at its space
                lines += chop_cells(t, width)
        for line in lines or [""]:
            yield Text(line, no_wrap=True)


@view.register
def _(result: NeighborsResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = [*candidates_line(result.candidates), *note_lines(list(result.notes))]
    for item in result.items:
        parts += note_lines([item.note])
        title = f"nearest to {split(item.tokens)} in {result.model}"
        if not result.fold:
            rows = [[str(n.rank), tok(n.token), str(n.id), num(n.score)] for n in item.neighbors]
            unit = "key" if result.static else "token"  # a static word table's rows are its keys
            parts.append(titled_table(title, f"rank> {unit} id> cosine>", rows))
            continue
        folded: list[list[Any]] = [
            [
                str(n.rank),
                tok(n.token),
                str(n.id),
                num(n.score),
                _Tokens([f.token for f in (n.forms or ())[1:]]),
            ]
            for n in item.neighbors
        ]
        n = item.form_share
        are = "is a form" if n == 1 else "are forms"
        share = f"{n:,} of the {result.k:,} nearest tokens {are} of {item.word}" if n is not None else ""
        columns = "rank> token id> cosine> other_forms"
        parts.append(titled_table(f"{title}, one row per word", columns, folded, share))
    return Group(*parts)
