"""How results are laid out: titled tables, matrices printed in parts, notes, numbers and tokens as cells."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from gpt2emb.errors import spelt
from gpt2emb.quoting import quote as tok
from gpt2emb.results.common import Token

MAX_PIECES_SHOWN = 12


def split(tokens: tuple[Token, ...]) -> Text:
    shown = " + ".join(f"{tok(t.token)} ({t.id})" for t in tokens[:MAX_PIECES_SHOWN])
    if len(tokens) > MAX_PIECES_SHOWN:
        shown += f" + ... ({len(tokens):,} tokens)"
    return Text(shown)


# Past this magnitude a number is shown as 3.0000e+38: a row near float32's largest numbers, shown in full,
# is 40 digits wide, and rich fits a table to the console by cropping its cells (and dropping columns).
_FIXED_BELOW = 1e6


def num(x: float, digits: int = 4) -> str:
    if abs(x) >= _FIXED_BELOW and math.isfinite(x):
        return f"{x:.{digits}e}"
    shown = f"{x:.{digits}f}"
    return shown[1:] if shown.startswith("-") and not float(shown) else shown  # -1e-17 is 0.0000, not -0.0000


def signed_cell(x: float) -> str:
    """A number of a row, signed, as the lists of a row's numbers show it."""
    return f"{x:+.4e}" if abs(x) >= _FIXED_BELOW and math.isfinite(x) else f"{x:+.4f}"


class _SimpleHead(box.Box):
    """rich's SIMPLE_HEAD, with '-' where the console cannot carry '─' (rich's own fallback is a full box)."""

    def substitute(self, options: ConsoleOptions, safe: bool = True) -> box.Box:
        return _ASCII_HEAD if options.ascii_only else self


_BOX = _SimpleHead(str(box.SIMPLE_HEAD))
_ASCII_HEAD = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)


def titled_table(title: str, columns: str | list[str], rows: list[list[Any]], caption: str = "") -> Group:
    """A titled table; columns are names (space-separated in a string), a trailing '>' right-aligns one (a
    number), a trailing '~' keeps a text on one line (a name: other text columns fold first)."""
    table = Table(box=_BOX, caption=caption or None, caption_justify="left")
    for c in columns.split() if isinstance(columns, str) else columns:
        _column(table, c)
    for row in rows:
        table.add_row(*row)
    return Group(_title(title), table)


def _title(title: str) -> Words:
    return Words(Text(title, style="bold"))


_WORD = re.compile(r"\S+\s*")


def _lines(text: Text, width: int) -> list[Text]:
    """text wrapped at its spaces to lines of width, never inside a word: a word longer than a line (a path)
    stands whole on a line of its own. rich would fold it into pieces, or crop it."""
    lines: list[Text] = []
    for paragraph in text.split("\n", allow_blank=True):
        breaks, used = [], 0
        for word in _WORD.finditer(paragraph.plain):
            if used and used + cell_len(word.group().rstrip()) > width:
                breaks.append(word.start())
                used = 0
            used += cell_len(word.group())
        for line in paragraph.divide(breaks):
            line.rstrip()
            lines.append(line)
    return lines


class Words:
    """A text wrapped at its spaces and never inside a word (see _lines): a model's folder in a title, a
    path in a line."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in _lines(self.text, options.max_width):
            yield from line.render(console)
            yield Segment.line()


class Listing:
    """A table of names and paths ('~' columns), each whole: where the table cannot fit the console without
    breaking one, each row is shown as a record instead, a line per column (its name, then its value). A
    value too long for its line stands whole on a line of its own: a terminal wraps it, and it is copied in
    one piece."""

    def __init__(self, title: str, columns: str, rows: list[list[Any]]) -> None:
        self.title, self.specs, self.rows = title, columns.split(), rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        _, least = _widths(console, options, self.specs, self.rows)
        if 1 + least <= options.max_width:
            yield titled_table(self.title, " ".join(self.specs), self.rows)
            return
        yield _title(self.title)
        names = [_name(spec) for spec in self.specs]
        indent = 4 + max(cell_len(n) for n in names)
        room = max(1, options.max_width - indent)
        for row in self.rows:
            yield Text("")
            for name, cell in zip(names, row, strict=True):
                value = cell.copy() if isinstance(cell, Text) else Text(str(cell))
                if not value.plain:  # no problem, no reason: nothing to say
                    continue
                head = Text(f"  {name}".ljust(indent))
                for line in _lines(Text(", ").join(value.split("\n")), room):  # commit, outdated
                    if cell_len(line.plain) > room:  # a path longer than the line: whole, from column 0
                        if head.plain.strip():
                            yield Words(head)
                        yield Words(line)
                    else:
                        yield Words(head + line)
                    head = Text(" " * indent)


def _widths(
    console: Console, options: ConsoleOptions, specs: Sequence[str], rows: Sequence[Sequence[Any]]
) -> tuple[int, int]:
    """The width of columns (specs as titled_table takes them) with their header and rows, each column's
    width + 3 (its padding and rule): natural (every cell on one line), and least (a text folded at its
    spaces, its longest word whole; a number or a name '~' on one line)."""
    unbound = options.update_width(1 << 20)
    natural = least = 0
    for k, spec in enumerate(specs):
        cells = (_name(spec), *(row[k] for row in rows))
        sizes = [Measurement.get(console, unbound, c) for c in cells]
        widest = max(m.maximum for m in sizes)
        natural += widest + 3
        least += (widest if spec.endswith((">", "~")) else max(m.minimum for m in sizes)) + 3
    return natural, least


def _column(table: Table, spec: str, no_wrap: bool = False) -> None:
    name = _name(spec)
    right = spec.endswith(">")  # a number: never cut; text folds onto more lines instead of losing its end
    table.add_column(name, justify="right" if right else "left",
                     no_wrap=no_wrap or right or spec.endswith("~"), overflow="fold")  # fmt: skip


def _name(spec: str) -> str:
    name = spec.rstrip(">~")
    return "" if name == "_" else name


MAX_PARTS = 5  # a matrix printed in more parts than this is not printed (see Matrix)


def _columns_named(part: list[int], columns: Sequence[str]) -> str:
    """The columns of a part, in its heading: a run of positions one after another as a range (0 to 6), any
    other columns by name, as a range would mislead (positions 500 0 1 ...: not "500 to 5")."""
    names = [_name(columns[j]) for j in part]
    if len(names) == 1:
        return f"column {names[0]}"
    numbers = all(n.isascii() and n.isdecimal() for n in names)  # not "²", which isdigit() takes
    run = numbers and all(int(b) == int(a) + 1 for a, b in itertools.pairwise(names))
    return f"columns {names[0]} to {names[-1]}" if run else f"columns {', '.join(names)}"


class Matrix:
    """A table with a column per item (a position, a word, a model), every cell whole: rich fits a table to
    the console by cropping cells, and a cropped 0.2789 reads 0.27.

    Wider than the console, it is printed as numpy and pandas print wide arrays: in parts, each holding the
    columns that fit beside the row labels under a line naming them. In more than MAX_PARTS parts a row is
    spread too thin to follow (at 80 characters, 5 parts hold 35 positions): where the result holds
    something else to show `instead` (the norms), the matrix is not printed, and a note names `where` to see
    it all; a matrix of a few models or sentences is printed in as many parts as it takes. Cells are shown by
    `show` only as the columns are laid out: a matrix too large to print is not formatted a million times
    over."""

    def __init__(
        self,
        title: str,
        labels: Sequence[str],
        label_rows: Sequence[Sequence[Any]],
        columns: Sequence[str],
        cells: Sequence[Sequence[Any]],
        show: Callable[[Any], str] = str,
        where: str | None = None,
        instead: RenderableType | None = None,
    ) -> None:
        """labels and columns are column specs as titled_table takes them; the label columns are repeated in
        every part. cells[i][j] is row i's cell in columns[j]."""
        self.title, self.labels, self.label_rows = title, labels, label_rows
        self.columns, self.cells, self.show = columns, cells, show
        # where to see what it leaves out: a command's option, or the Python handle's result itself
        self.where = where or spelt("--json prints every number", "the result holds every number")
        self.instead = instead

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # rich's table is 1 + the sum of (width + 3) wide: a column's padding each side, a rule after it
        natural, least = self._label_widths(console, options)
        # the labels on one line where that leaves half the console to the columns, else folded (a long split
        # word's tokens): rich folds them to make the part fit
        room = options.max_width - 1 - (natural if 2 * natural <= options.max_width else least)
        parts: list[list[int]] = []
        shown: list[list[str]] = []
        widths: list[int] = []
        used = 0  # by the columns of the last part
        for j, spec in enumerate(self.columns):
            column = [self.show(row[j]) for row in self.cells]
            shown.append(column)
            widths.append(max(cell_len(c) for c in (_name(spec), *column)) + 3)
            if parts and used + widths[j] <= room:
                parts[-1].append(j)
                used += widths[j]
            elif self.instead is None or len(parts) < MAX_PARTS:
                parts.append([j])  # alone, a column may be wider than the room: see below
                used = widths[j]
            else:
                yield from self._instead(options.max_width)
                return
        for n, part in enumerate(parts or [[]], 1):
            table = Table(box=_BOX)
            for spec in self.labels:
                _column(table, spec)
            for j in part:
                _column(table, self.columns[j], no_wrap=True)
            for i, row in enumerate(self.label_rows):
                table.add_row(*row, *(shown[j][i] for j in part))
            if n == 1:
                yield _title(self.title)
            if len(parts) > 1:
                yield Text(
                    f"part {n:,} of {len(parts):,}: {_columns_named(part, self.columns)}", style="bold"
                )
            # a lone column wider than the room: text labels fold (at spaces first), numbers never; where
            # even that does not fit, the part is wider than the console (a terminal wraps its lines)
            width = max(options.max_width, 1 + least + sum(widths[j] for j in part))
            yield from console.render(table, options.update_width(width))

    def _label_widths(self, console: Console, options: ConsoleOptions) -> tuple[int, int]:
        """The label columns' width (see _widths)."""
        return _widths(console, options, self.labels, self.label_rows)

    def _instead(self, width: int) -> RenderResult:
        rows, columns = len(self.label_rows), len(self.columns)
        yield self.instead if self.instead is not None else _title(self.title)
        wide = f"at {width:,} characters wide, it would take more than {MAX_PARTS} parts"
        yield from note_lines([f"the {rows:,} x {columns:,} matrix is not printed: {wide}; {self.where}"])


def note_lines(notes: list[str]) -> list[RenderableType]:
    return [Text(f"note: {n}", style="yellow") for n in notes if n]


def cosine_cell(x: float) -> str:
    return num(x, 3)


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def maybe(x: float | None, digits: int = 4) -> str:
    """A value that may be undefined (a cosine of a zero vector): '-'."""
    return "-" if x is None else num(x, digits)
