"""What a person sees: a rich view per result type, notes and progress on stderr, one-line errors."""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, is_dataclass, replace
from functools import singledispatch
from typing import Any

from rich import box
from rich.cells import cell_len, chop_cells
from rich.console import JUPYTER_DEFAULT_COLUMNS as JUPYTER_WIDTH
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.jupyter import JUPYTER_HTML_FORMAT
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from gpt2emb.errors import option, spelt
from gpt2emb.output import DIMS, ESCAPE
from gpt2emb.results.cache import CachePath, CacheResult, RefreshResult, VerifyResult
from gpt2emb.results.common import Token
from gpt2emb.results.evaluate import AnalogyEvalResult, PairsEvalResult
from gpt2emb.results.export import ExportResult
from gpt2emb.results.geometry import GeometryResult, TableGeometry, TokenNorm
from gpt2emb.results.positions import HeatmapResult, PositionsResult
from gpt2emb.results.sizes import ModelsResult, SizesResult
from gpt2emb.results.text import ContextResult, InputResult
from gpt2emb.results.tying import Comparison, GradientResult, TyingResult
from gpt2emb.results.words import (
    AnalogyBatch,
    AnalogyResult,
    Candidates,
    CompareResult,
    NeighborsResult,
    SimilarityResult,
    VectorResult,
)
from gpt2emb.tokens import quote as tok

MAX_PIECES_SHOWN = 12


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False)


def split(tokens: tuple[Token, ...]) -> Text:
    shown = " + ".join(f"{tok(t.token)} ({t.id})" for t in tokens[:MAX_PIECES_SHOWN])
    if len(tokens) > MAX_PIECES_SHOWN:
        shown += f" + ... ({len(tokens)} tokens)"
    return Text(shown)


# Past this magnitude a number is shown as 3.0000e+38: a row near float32's largest numbers, shown in full,
# is 40 digits wide, and rich fits a table to the console by cropping its cells (and dropping columns).
_FIXED_BELOW = 1e6


def _num(x: float, digits: int = 4) -> str:
    if abs(x) >= _FIXED_BELOW and math.isfinite(x):
        return f"{x:.{digits}e}"
    shown = f"{x:.{digits}f}"
    return shown[1:] if shown.startswith("-") and not float(shown) else shown  # -1e-17 is 0.0000, not -0.0000


def _signed(x: float) -> str:
    """A number of a row, signed, as the lists of a row's numbers show it."""
    return f"{x:+.4e}" if abs(x) >= _FIXED_BELOW and math.isfinite(x) else f"{x:+.4f}"


class _SimpleHead(box.Box):
    """rich's SIMPLE_HEAD, with '-' where the console cannot carry '─' (rich's own fallback is a full box)."""

    def substitute(self, options: ConsoleOptions, safe: bool = True) -> box.Box:
        return _ASCII_HEAD if options.ascii_only else self


_BOX = _SimpleHead(str(box.SIMPLE_HEAD))
_ASCII_HEAD = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)


def _table(title: str, columns: str | list[str], rows: list[list[Any]], caption: str = "") -> Group:
    """A titled table; columns are names (space-separated in a string), a trailing '>' right-aligns one (a
    number), a trailing '~' keeps a text on one line (a name: other text columns fold first)."""
    table = Table(box=_BOX, caption=caption or None, caption_justify="left")
    for c in columns.split() if isinstance(columns, str) else columns:
        _column(table, c)
    for row in rows:
        table.add_row(*row)
    return Group(Text(title, style="bold"), table)


def _column(table: Table, spec: str, no_wrap: bool = False) -> None:
    name = _name(spec)
    right = spec.endswith(">")  # a number: never cut; text folds onto more lines instead of losing its end
    table.add_column(name, justify="right" if right else "left",
                     no_wrap=no_wrap or right or spec.endswith("~"), overflow="fold")  # fmt: skip


def _name(spec: str) -> str:
    name = spec.rstrip(">~")
    return "" if name == "_" else name


MAX_PARTS = 5  # a matrix printed in more parts than this is not printed (see _Matrix)


def _columns_named(part: list[int], columns: Sequence[str]) -> str:
    """The columns of a part, in its heading: a run of positions one after another as a range (0 to 6), any
    other columns by name, as a range would mislead (positions 500 0 1 ...: not "500 to 5")."""
    names = [_name(columns[j]) for j in part]
    if len(names) == 1:
        return f"column {names[0]}"
    numbers = all(n.isascii() and n.isdecimal() for n in names)  # not "²", which isdigit() takes
    run = numbers and all(int(b) == int(a) + 1 for a, b in itertools.pairwise(names))
    return f"columns {names[0]} to {names[-1]}" if run else f"columns {', '.join(names)}"


class _Matrix:
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
        """labels and columns are column specs as _table takes them; the label columns are repeated in every
        part. cells[i][j] is row i's cell in columns[j]."""
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
                yield Text(self.title, style="bold")
            if len(parts) > 1:
                yield Text(f"part {n} of {len(parts)}: {_columns_named(part, self.columns)}", style="bold")
            # a lone column wider than the room: text labels fold (at spaces first), numbers never; where
            # even that does not fit, the part is wider than the console (a terminal wraps its lines)
            width = max(options.max_width, 1 + least + sum(widths[j] for j in part))
            yield from console.render(table, options.update_width(width))

    def _label_widths(self, console: Console, options: ConsoleOptions) -> tuple[int, int]:
        """The label columns' width, each column's width + 3: natural (on one line), and least (a text
        label folded to its longest word; a number or a name '~' as natural)."""
        unbound = options.update_width(1 << 20)
        natural = least = 0
        for k, spec in enumerate(self.labels):
            cells = (_name(spec), *(row[k] for row in self.label_rows))
            sizes = [Measurement.get(console, unbound, c) for c in cells]
            widest = max(m.maximum for m in sizes)
            natural += widest + 3
            least += (widest if spec.endswith((">", "~")) else max(m.minimum for m in sizes)) + 3
        return natural, least

    def _instead(self, width: int) -> RenderResult:
        rows, columns = len(self.label_rows), len(self.columns)
        yield self.instead if self.instead is not None else Text(self.title, style="bold")
        wide = f"at {width} characters wide, it would take more than {MAX_PARTS} parts"
        yield from _notes([f"the {rows:,} x {columns:,} matrix is not printed: {wide}; {self.where}"])


def _notes(notes: list[str]) -> list[RenderableType]:
    return [Text(f"note: {n}", style="yellow") for n in notes if n]


# ---------------------------------------------------------------- one view per result type


@singledispatch
def view(result: Any, dims: int | None) -> RenderableType:
    raise TypeError(f"no view for {type(result).__name__}")


@view.register
def _(result: VectorResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for item in result.items:
        stats = [_num(getattr(item, f)) for f in ("norm", "mean", "std", "min", "max")]
        shown = item.vector if dims is None else item.vector[:dims]
        more = len(item.vector) - len(shown)
        numbers = f"[{', '.join(map(_signed, shown))}]" + (
            f"  ... ({more} more{spelt('; --full', ' in .vector')})" if more else ""
        )
        parts += _notes([item.note])
        plain = item.word.strip() == item.word and item.word.isprintable()  # else quoted: --exact " "
        title = f"{item.word if plain else tok(item.word)} in {result.model}: {split(item.tokens)}"
        parts += [
            _table(title, "norm> mean> std> min> max> dims>", [[*stats, str(len(item.vector))]]),
            Text(numbers),
        ]
        parts.append(Text(""))
    return Group(*parts)


def _candidates(c: Candidates | None) -> list[RenderableType]:
    """The line that says which tokens were ranked, when not all."""
    if c is None:
        return []
    chosen = [option("among", c.among) if c.among is not None else ""]
    chosen += [option("restrict", c.restrict) if c.restrict is not None else ""]
    chosen += [option("whole_words", True) if c.whole_words else ""]
    return [
        Text(
            f"candidates: {c.count:,} token{'s' if c.count != 1 else ''} ({', '.join(filter(None, chosen))})"
        )
    ]


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
    parts: list[RenderableType] = [*_candidates(result.candidates), *_notes(list(result.notes))]
    for item in result.items:
        parts += _notes([item.note])
        title = f"nearest to {split(item.tokens)} in {result.model}"
        if not result.fold:
            rows = [[str(n.rank), tok(n.token), str(n.id), _num(n.score)] for n in item.neighbors]
            parts.append(_table(title, "rank> token id> cosine>", rows))
            continue
        folded: list[list[Any]] = [
            [
                str(n.rank),
                tok(n.token),
                str(n.id),
                _num(n.score),
                _Tokens([f.token for f in (n.forms or ())[1:]]),
            ]
            for n in item.neighbors
        ]
        n = item.form_share
        are = "is a form" if n == 1 else "are forms"
        share = f"{n} of the {result.k} nearest tokens {are} of {item.word}" if n is not None else ""
        columns = "rank> token id> cosine> other_forms"
        parts.append(_table(f"{title}, one row per word", columns, folded, share))
    return Group(*parts)


@view.register
def _(result: AnalogyBatch, dims: int | None) -> RenderableType:
    return Group(*(view(item, dims) for item in result.items))


@view.register
def _(result: AnalogyResult, dims: int | None) -> RenderableType:
    kept = "inputs kept, marked *" if result.keep_inputs else "inputs left out"
    score = "score" if result.method == "3cosmul" else "cosine"
    rows = [
        [str(r.rank), tok(r.token) + (" *" if r.input else ""), str(r.id), _num(r.score)]
        for r in result.results
    ]
    inputs = [[i.word, tok(i.token), str(i.id), str(i.rank), _num(i.score)] for i in result.inputs]
    among = "all tokens" if result.candidates is None else "the candidates"
    return Group(
        *_candidates(result.candidates),
        *_notes(list(result.notes)),
        _table(
            f"{result.expression} in {result.model} ({result.method}, {kept})",
            f"rank> token id> {score}>",
            rows,
        ),
        _table(f"where the inputs rank (among {among})", f"word token id> rank> {score}>", inputs),
    )


def _cosine(x: float) -> str:
    return _num(x, 3)


@view.register
def _(result: PositionsResult, dims: int | None) -> RenderableType:
    labels = ["pos>", "norm>"]
    rows = [[str(p), _num(norm, 3)] for p, norm in zip(result.positions, result.norms, strict=True)]
    if result.rows and result.rows != result.positions:  # RoBERTa: position p is row p + 2
        labels.insert(1, "row>")
        for row, r in zip(rows, result.rows, strict=True):
            row.insert(1, str(r))
    return _Matrix(
        f"cosine similarity of position rows (wpe) in {result.model}",
        labels,
        rows,
        [f"{p}>" for p in result.positions],
        result.matrix,
        _cosine,
        spelt(
            "--json prints every number, --heatmap draws the matrix of all positions, --png FILE as a figure",
            "the result holds every number",
        ),
        _table(f"norms of position rows (wpe) in {result.model}", labels, rows),
    )


@view.register
def _(result: SimilarityResult, dims: int | None) -> RenderableType:
    norms = [[split(i.tokens), _num(n)] for i, n in zip(result.items, result.norms, strict=True)]
    matrix = _Matrix(
        f"cosine similarity in {result.model}",
        ["token"],
        [[split(i.tokens)] for i in result.items],
        [tok("".join(t.token for t in i.tokens)) + ">" for i in result.items],  # the text its tokens spell
        result.matrix,
        _cosine,
        instead=_table(f"norms of the words' vectors in {result.model}", "token norm>", norms),
    )
    return Group(*_notes([i.note for i in result.items]), matrix)


@view.register
def _(result: CompareResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for qi, query in enumerate(_queries(result.results[0])):
        answers = [_answers(r, qi) for r in result.results]
        everywhere = set.intersection(*({t for t, _ in a} for a in answers))
        depth = range(max(len(a) for a in answers))
        cells = [[_shared(a[rank], everywhere) if rank < len(a) else "" for a in answers] for rank in depth]
        title = f"{query}: side by side (* in every list, matched by the text each token stands for)"
        ranks = [[str(rank + 1)] for rank in depth]
        parts.append(_Matrix(title, ["rank>"], ranks, result.models, cells, where="--json has every answer"))
        parts += [
            Text(f"{o.models[0]} and {o.models[1]} share {o.shared} of their top {o.k}\n")
            for o in result.overlap
            if o.query == query
        ]
    return Group(*parts)


def _queries(r: NeighborsResult | AnalogyResult) -> list[str]:
    return [i.word for i in r.items] if isinstance(r, NeighborsResult) else [r.expression]


def _answers(r: NeighborsResult | AnalogyResult, query: int) -> list[tuple[str, float]]:
    found = r.items[query].neighbors if isinstance(r, NeighborsResult) else r.results
    return [(x.token, x.score) for x in found]


def _shared(answer: tuple[str, float], everywhere: set[str]) -> str:
    return f"{tok(answer[0])}{' *' if answer[0] in everywhere else ''} {answer[1]:.3f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


@view.register
def _(result: AnalogyEvalResult, dims: int | None) -> RenderableType:
    case = ", any case" if result.ignore_case else ""
    rows = [
        [s.section, str(s.correct), str(s.correct + s.incorrect), str(s.skipped), _pct(s.accuracy)]
        for s in (*result.sections, result.total)
    ]
    if result.restrict is not None:
        case += f", ids below {result.restrict:,}"
    title = (
        f"{result.file} on {result.model} ({result.method}, words as {result.rule!r} tokens{case}): "
        f"{_pct(result.total.accuracy)} of answered questions, coverage {_pct(result.coverage)}, "
        f"{result.seconds:.2f} s"
    )
    parts: list[RenderableType] = [_table(title, "section correct> answered> skipped> accuracy>", rows)]
    if result.errors:
        shown = [
            [f.section, " ".join(f.question), f.expected, f.predicted or "-"] for f in result.errors[:20]
        ]
        more = f" (first 20 of {len(result.errors)}; --json lists all)" if len(result.errors) > 20 else ""
        parts.append(_table(f"answered wrong{more}", "section question expected predicted", shown))
    return Group(*parts)


@view.register
def _(result: PairsEvalResult, dims: int | None) -> RenderableType:
    case = ", any case" if result.ignore_case else ""
    rows = [
        ["Spearman", "undefined" if result.spearman is None else f"{result.spearman:.4f}"],
        ["Pearson", "undefined" if result.pearson is None else f"{result.pearson:.4f}"],
        ["pairs used", f"{result.used} of {result.pairs}"],
        ["skipped (not one token)", f"{result.skipped} ({result.oov_ratio:.1f}%)"],
    ]
    if result.unreadable:
        rows.append(["lines skipped (unreadable)", f"{result.unreadable:,}"])
    title = f"{result.file} on {result.model} (words as {result.rule!r} tokens{case})"
    return Group(_table(title, "measure value>", rows), *_notes(list(result.notes)))


_SHADES = " ░▒▓█"
_ASCII_SHADES = " .-+#"


def _cell(v: float) -> tuple[int, str]:
    """A cosine in [-1, 1] as a shade level (how high) and a colour (blue to red, too)."""
    v = max(-1.0, min(1.0, v))
    level = min(4, int((v + 1) / 2 * 5))
    fade = int(255 * (1 - abs(v)))
    rgb = (255, fade, fade) if v >= 0 else (fade, fade, 255)
    return level, f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"


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
            f"cosine similarity of all {result.n_positions} position rows (wpe) in {result.model}",
            style="bold",
        ),
        Text(f"each cell averages {result.block:.4g} x {result.block:.4g} positions; position 0 is top left"),
        Text(""),
    ]
    width = len(str(result.n_positions))
    lines += [_Shaded(f"{round(i * result.block):>{width}} ", row) for i, row in enumerate(result.matrix)]
    legend = _Shaded(" " * width + " -1 ", [v / 4 for v in range(-4, 5)], " +1")
    lines += [Text(""), legend]
    if any(math.isnan(v) for row in result.matrix for v in row):
        lines.append(Text("??: a block holding a row of NaN or infinite values, which has no cosine"))
    if result.png:
        lines.append(Text(f"figure written to {result.png}"))
    return Group(*lines)


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _entries(n: int, which: str = "") -> str:
    return f"{n} {which}entry" if n == 1 else f"{n} {which}entries"


@view.register
def _(result: CacheResult, dims: int | None) -> RenderableType:
    rows = [
        [e.name, e.commit[:12] + ("\noutdated" if e.outdated else ""), _mb(e.bytes), e.path]
        for e in result.entries
    ]
    if result.action == "list":
        title = f"gpt2emb cache in {result.root}: {_entries(len(rows))}, {_mb(result.total_bytes)}"
        if not rows:
            return _Unfolded(f"{title} (a model is cached on first use)")
        outdated = [e for e in result.entries if e.outdated]
        if outdated:
            size, them = _mb(sum(e.bytes for e in outdated)), "it" if len(outdated) == 1 else "them"
            return Group(
                _table(title, "model commit size> path", rows),
                Text(
                    f"outdated: {_entries(len(outdated))} ({size}) built from a local folder's earlier "
                    f"files, or from a folder that is gone; gpt2emb cache clear --outdated removes {them}"
                ),
            )
    else:
        which = "outdated " if result.outdated else ""
        title = f"removed {_entries(len(rows), which)}, {_mb(result.total_bytes)}, from {result.root}"
        kept = [[k.name, k.commit[:12], k.reason, k.path] for k in result.kept]
        if kept:
            nothing = _Unfolded(f"removed nothing from {result.root}")
            removed = _table(title, "model commit size> path", rows) if rows else nothing
            title = f"could not remove {_entries(len(kept))}, left whole"
            return Group(removed, Text(""), _table(title, "model commit why path", kept))
        if not rows:
            return _Unfolded(f"nothing {which}to remove in {result.root}")
    return _table(title, "model commit size> path", rows)


@view.register
def _(result: RefreshResult, dims: int | None) -> RenderableType:
    if not result.revisions:
        return Text(
            f"nothing to refresh in {result.root}: no model of the Hub is cached (a local folder's entry "
            "follows its files; a model is cached on first use)"
        )
    rows = []
    for r in result.revisions:
        moved = r.new_commit != r.old_commit
        status = "rebuilt" if r.rebuilt else "moved" if moved else "up to date"
        rows.append([r.model, r.revision, r.old_commit[:12], r.new_commit[:12] if moved else "", status])
    n_moved = sum(r.new_commit != r.old_commit for r in result.revisions)
    title = f"asked the Hub about {len(rows)} revision{'s' if len(rows) != 1 else ''}: {n_moved} moved"
    return _table(title, "model revision commit new status", rows)


@view.register
def _(result: VerifyResult, dims: int | None) -> RenderableType:
    if not result.entries:
        return Text(f"nothing cached in {result.root}: nothing to verify")
    state = {True: Text("ok", style="green"), False: Text("damaged", style="red")}
    rows = [
        [e.name, e.commit[:12], Text(e.repaired, style="green") if e.repaired else state[e.ok], e.problem]
        for e in result.entries
    ]
    bad = sum(not e.ok for e in result.entries)
    rebuilt = sum(e.repaired == "rebuilt" for e in result.entries)
    verdict = (f"{bad} damaged" if bad else "all ok") + (f", {rebuilt} rebuilt" if rebuilt else "")
    title = f"verified {_entries(len(rows))} ({_mb(result.total_bytes)}) in {result.root}: {verdict}"
    return _table(title, "model commit state problem", rows)


@view.register
def _(result: CachePath, dims: int | None) -> RenderableType:
    return _Unfolded(result.path)


@view.register
def _(result: ModelsResult, dims: int | None) -> RenderableType:
    rows = [
        [
            m.name,
            m.family,
            ", ".join(m.aliases),
            f"{m.d_model:,}",
            str(m.n_layer),
            "-" if m.total_params is None else f"{m.total_params / 1e6:,.1f}M",
            "yes" if m.cached else "no",
        ]
        for m in result.models
    ]
    title = "named models (-m also takes any Hub repo or folder of a supported family)"
    return _table(title, "model~ family~ aliases d_model> layers> params> cached", rows)


_SIZE_ROW: dict[str, Any] = {  # label -> how a model's column shows it
    "family": lambda m: m.family,
    "vocab": lambda m: f"{m.vocab_size:,}",
    "d_model": lambda m: f"{m.d_model:,}",
    "positions": lambda m: f"{m.n_positions:,}" if m.position_rows or not m.family else "learned none",
    "position rows": lambda m: f"{m.position_rows:,}" if m.position_rows else "none",
    "layers": lambda m: str(m.n_layer),
    "heads": lambda m: str(m.n_head),
    "wte params": lambda m: f"{m.wte_params:,}",
    "wpe params": lambda m: f"{m.wpe_params:,}",
    "one block": lambda m: f"{m.block_params // m.n_layer:,}",
    "all blocks": lambda m: f"{m.block_params:,}",
    "output layer": lambda m: f"{m.output_params:,}" if m.output_params else "tied to wte",
    "total params": lambda m: f"{m.total_params:,}",
    "wte share": lambda m: f"{100 * m.wte_share:.1f}%",
}
_FORMULA_ROWS: tuple[str, ...] = (
    *("vocab", "d_model", "positions", "layers", "heads", "wte params", "wpe params", "one block"),
    *("all blocks", "total params", "wte share"),
)
# sizes -m: any family, counted from the headers (blocks are not told apart; rotary models have no wpe)
_COUNTED_ROWS: tuple[str, ...] = (
    *("family", "vocab", "d_model", "positions", "position rows", "layers", "heads", "wte params"),
    *("wpe params", "output layer", "total params", "wte share"),
)


@view.register
def _(result: SizesResult, dims: int | None) -> RenderableType:
    counted = result.source == "checkpoint"
    labels = _COUNTED_ROWS if counted else _FORMULA_ROWS
    rows = [[label, *(_SIZE_ROW[label](m) for m in result.models)] for label in labels]
    rows.append([f"wte+wpe MB {result.dtype}", *(f"{m.embeddings_mb:,.1f}" for m in result.models)])
    if counted:
        rows.append([f"all MB {result.dtype}", *(f"{m.total_mb:,.1f}" for m in result.models)])
    if any(m.verified is not None for m in result.models):
        rows.append(["checked on Hub", *("yes" if m.verified else "MISMATCH" for m in result.models)])
    title = (
        "Parameters counted from the checkpoint headers (no weights read)"
        if counted
        else "GPT-2 sizes: wte is the largest single piece in all four"
    )
    return _Matrix(
        title, ["_"], [r[:1] for r in rows], [f"{m.name}>" for m in result.models], [r[1:] for r in rows]
    )


_MARK = {True: Text("yes", style="green"), False: Text("no", style="red")}


@view.register
def _(result: TyingResult, dims: int | None) -> RenderableType:
    verdict = "tied: the output layer reuses wte" if result.tied else "not tied"
    rows = [[c.name, _MARK[c.passed], c.detail] for c in result.checks]
    saved = f"tying saves {result.saved_params:,} parameters (vocab x d_model)" if result.tied else ""
    checks = _table(f"{result.model}: {verdict}", "check _ detail", rows, caption=saved)
    parts: list[RenderableType] = [checks]
    if result.gradient is not None:
        parts.append(_gradient(result.gradient))
    if result.comparison is not None:
        parts.append(_comparison(result.comparison))
    return Group(*parts)


def _comparison(c: Comparison) -> RenderableType:
    read = _mb(c.bytes_read) if c.bytes_read >= 100_000 else f"{c.bytes_read:,} bytes"
    which = (
        f"a seeded sample of {c.rows:,} of its {c.total_rows:,} rows (the table is over 1 GB; {read} read)"
        if c.sampled
        else f"all {c.rows:,} rows ({read} read)"
    )
    rows = [
        ["row i with wte row i", _maybe(c.mean_cosine_matching)],
        ["row i with a random other wte row", _maybe(c.mean_cosine_random)],
    ]
    title = f"the output layer ({c.output}) against wte: {which}"
    return Group(Text(""), _table(title, "_ mean_cosine>", rows))


def _maybe(x: float | None, digits: int = 4) -> str:
    """A value that may be undefined (a cosine of a zero vector): '-'."""
    return "-" if x is None else _num(x, digits)


def _gradient(g: GradientResult) -> RenderableType:
    tokens = " ".join(tok(t.token) for t in g.tokens[:MAX_PIECES_SHOWN])
    tokens += f" ... ({len(g.tokens)} tokens)" if len(g.tokens) > MAX_PIECES_SHOWN else ""
    vocab = f"{g.table_rows:,}"
    rows = [
        [Text("input lookup (wte[ids])"), f"{g.input_path.norm:.6g}", f"{g.input_path.rows} of {vocab}"],
        [
            Text("output layer (lm_head = wte)"),
            f"{g.output_path.norm:.6g}",
            f"{g.output_path.rows} of {vocab}",
        ],
        [Text("tied model (both uses)"), f"{g.tied_norm:.6g}", ""],
    ]
    title = f"gradient of the loss on {tokens} (mean next-token cross-entropy {g.loss:.4f}) reaching wte"
    difference = "-" if g.relative_difference is None else f"{g.relative_difference:.1e}"
    return Group(
        Text(""),
        _table(title, "path norm> rows>", rows),
        Text(
            f"cosine of the two on the {g.shared_rows} row{'' if g.shared_rows == 1 else 's'} both touch: "
            f"{_maybe(g.cosine_on_shared_rows)}"
        ),
        Text.assemble(
            "input + output = the tied model's gradient (to 1e-5 relative): ",
            _MARK[g.sum_matches_tied],
            f" (relative difference {difference})",
        ),
        *_notes(list(g.notes)),
    )


@view.register
def _(result: ContextResult, dims: int | None) -> RenderableType:
    word = " + ".join(tok(t.token) for t in result.word_tokens)
    sentences = [
        [
            str(n),
            Text(" ".join(f"[{tok(t.token)}]" if t.position in s.at else tok(t.token) for t in s.tokens)),
            " ".join(str(p) for p in s.at),
        ]
        for n, s in enumerate(result.sentences, 1)
    ]
    last = len(result.layers) - 1
    pairs = [f"{p.a + 1} vs {p.b + 1}>" for p in result.layers[0].pairs]
    statics = [f"{n} vs wte>" for n in range(1, len(result.sentences) + 1)]
    rows = [
        [
            "0 (h0)" if x.layer == 0 else f"{x.layer} (last)" if x.layer == last else str(x.layer),
            *(_maybe(p.cosine) for p in x.pairs),
            *(_maybe(c) for c in x.static),
        ]
        for x in result.layers
    ]
    undefined = any(p.cosine is None for x in result.layers for p in x.pairs) or any(
        c is None for x in result.layers for c in x.static
    )
    notes = [*result.notes, "- is a vector of zeros: it has no direction, so no cosine" if undefined else ""]
    return Group(
        _table(
            f"{word} in {result.model}: the sentences, as tokens (the word's in [ ])",
            "_> tokens at>",
            sentences,
        ),
        _Matrix(
            f"cosine of {word}'s vectors, between sentences and with its static row (wte), layer by layer",
            ["layer"],
            [r[:1] for r in rows],
            [*pairs, *statics],
            [r[1:] for r in rows],
        ),
        *_notes(notes),
    )


def _span(n: int, offset: int = 0) -> str:
    return str(offset) if n == 1 else f"{offset}..{offset + n - 1}"


MAX_TEXT_SHOWN = 60


@view.register
def _(result: InputResult, dims: int | None) -> RenderableType:
    n, d = result.n_tokens, result.d_model
    positions = result.n_positions > 0  # a rotary model has no position table: h0 = wte[ids]
    total = f"wte[ids] ({n}, {d})"
    total += f" + wpe[{_span(n, result.row_offset)}] ({n}, {d})" if positions else ""
    total += f" + type[0] ({d},)" if result.type_row else ""
    shapes = f"LayerNorm({total}) = h0 ({n}, {d})" if result.layer_norm else f"{total} = h0 ({n}, {d})"
    text = result.text if len(result.text) <= MAX_TEXT_SHOWN else result.text[:MAX_TEXT_SHOWN] + "..."
    plural = "token" if result.text_tokens == 1 else "tokens"
    about = f"{tok(text)} in {result.model}: {result.text_tokens:,} {plural}, as typed"
    # the rows of wpe are in the line of shapes (RoBERTa: wpe[2..n+1])
    columns = ["pos>", "id>", "token", "|wte|>", "|wpe|>", "|h0|>", "cos(wte, wpe)>"]
    rows = [
        [str(t.position), str(t.id), tok(t.token), _num(t.wte_norm), _maybe(t.wpe_norm), _num(t.h0_norm),
         _maybe(t.cos_wte_wpe)]
        for t in result.tokens
    ]  # fmt: skip
    if not positions:
        columns = [c for c in columns if "wpe" not in c]
        rows = [[*row[:4], row[5]] for row in rows]
    if result.layer_norm:  # the sum before the layer norm, beside h0
        columns.insert(5, "|sum|>")
        for row, t in zip(rows, result.tokens, strict=True):
            row.insert(5, _num(t.sum_norm))
    parts: list[RenderableType] = [
        *_notes(list(result.notes)),
        Text(shapes, style="bold"),
        _table(about, columns, rows),
    ]
    if result.h0 is not None:
        width = len(str(n - 1))
        parts.append(Text("h0, every number:", style="bold"))
        parts += [Text(f"{p:>{width}} [{', '.join(map(_signed, row))}]") for p, row in enumerate(result.h0)]
    return Group(*parts)


def _extremes(table: TableGeometry) -> list[list[str]]:
    def cells(row: Any) -> list[str]:
        if isinstance(row, TokenNorm):
            return [tok(row.token), str(row.id), _num(row.norm)]
        return [str(row.position), _num(row.norm)]

    return [[*cells(a), *cells(b)] for a, b in zip(table.smallest, table.largest, strict=True)]


@view.register
def _(result: GeometryResult, dims: int | None) -> RenderableType:
    wte, wpe, cross = result.wte, result.wpe, result.wte_vs_wpe
    tables = (wte,) if wpe is None else (wte, wpe)
    stats: list[tuple[str, Any]] = [
        ("rows", lambda t: f"{t.rows:,}"),
        ("rows of zeros (left out of cosines)", lambda t: f"{t.zero_rows:,}"),
        ("norm: mean", lambda t: _num(t.norm.mean)),
        ("norm: std", lambda t: _num(t.norm.std)),
        ("norm: min", lambda t: _num(t.norm.min)),
        ("norm: max", lambda t: _num(t.norm.max)),
        ("mean cosine, all pairs of rows", lambda t: _maybe(t.mean_cosine)),
    ]
    rows = [[label, *(fmt(t) for t in tables)] for label, fmt in stats]
    for k in range(max(len(t.pc_variance) for t in tables)):
        rows.append([f"variance along PC{k + 1}", *(_pct(_at(t.pc_variance, k)) for t in tables)])
    rows.append([f"PC1-{len(wte.pc_variance)} together", *(_pct(_together(t.pc_variance)) for t in tables)])
    names = ("wte", "wpe")[: len(tables)]
    title = f"{' and '.join(names)} of {result.model} (d = {result.d_model})"
    summary = _table(title, "_ " + " ".join(f"{name}>" for name in names), rows)
    by_norm_wte = _table(
        "wte rows of smallest and largest norm", "smallest id> norm> largest id> norm>", _extremes(wte)
    )
    notes = list(result.notes)
    if cross is not None and None in (cross.mean_abs_cosine, cross.max_abs_cosine):
        # the reading says why content against position has no figures: the note on them would say it again
        notes = [n for n in notes if not n.startswith("wte_vs_wpe:")]
    if wpe is None or cross is None:
        return Group(summary, by_norm_wte, Text(result.reading), *_notes(notes))
    by_norm_wpe = _table(
        "wpe rows of smallest and largest norm",
        ["smallest position>", "norm>", "largest position>", "norm>"],
        _extremes(wpe),
    )
    pair = cross.max_pair
    largest = "largest"
    if pair is not None:
        sign = ", a negative cosine" if pair.cosine < 0 else ""
        largest += f": {tok(pair.token)} ({pair.id}) with position {pair.position}{sign}"
    d = result.d_model
    cross_rows = [
        ["mean", _maybe(cross.mean_abs_cosine)],
        [largest, _maybe(cross.max_abs_cosine)],
        [f"mean of two random directions in {d} dimensions", _num(cross.random_mean_abs_cosine)],
    ]
    title = f"content against position: every wte row with every wpe row ({cross.pairs:,} pairs)"
    content = _table(title, "_ |cosine|>", cross_rows)
    formula = f"random directions: {cross.random_formula} = {math.sqrt(2 / (math.pi * d)):.4f}\n"
    return Group(
        summary, by_norm_wte, by_norm_wpe, content, Text(formula), Text(result.reading), *_notes(notes)
    )


def _at(shares: tuple[float | None, ...], k: int) -> float | None:
    return shares[k] if k < len(shares) else None


def _together(shares: tuple[float | None, ...]) -> float | None:
    return None if any(x is None for x in shares) else sum(x for x in shares if x is not None)


class _Stdout(Console):
    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError  # the reader left (| head): cli.py ends the run quietly, as for JSON lines


class _Unfolded:
    """A line that holds a path, printed as it is: rich would fold a path longer than the line into pieces,
    and a script reading it back (cd "$(gpt2emb cache path)") would get a broken one."""

    def __init__(self, line: str) -> None:
        self.line = line

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Segment(self.line)
        yield Segment.line()


# a token is shown as it is: "[b]" is no markup, ":cat:" no emoji (and a cell is as wide as its text)
AS_IS: dict[str, Any] = {"highlight": False, "soft_wrap": False, "markup": False, "emoji": False}


def print_view(result: Any, dims: int | None) -> None:
    console = _Stdout(**AS_IS)
    shown = view(_fitted(result, console.encoding), dims)
    # not cropped to the console: a matrix's part that cannot fit is printed wider instead (see _Matrix)
    if console.is_terminal:
        console.print(shown, crop=False)
        return
    sys.stdout.write(_captured(console, shown))
    sys.stdout.flush()  # a table of a word from stdin goes out as soon as it is answered


def _captured(console: Console, shown: RenderableType) -> str:
    """What the console would print. Not to a terminal (piped, a file): each line without the spaces that pad
    a table's cells to its width (a terminal shows none of them either), so that grep, diff and cut see only
    what was printed."""
    with console.capture() as captured:
        console.print(shown, crop=False)
    return captured.get() if console.is_terminal else _unpadded(captured.get())


def _unpadded(text: str) -> str:
    return "".join(line.rstrip(" ") + "\n" for line in text.split("\n")[:-1])


def viewed() -> list[type]:
    """The result types that have a view."""
    return [kind for kind in view.registry if kind is not object]


def bundle(result: Any) -> dict[str, str]:
    """A result as Jupyter displays it: the table its command prints (at rich's width for Jupyter), as text
    and as HTML in the command's colours, without the blank lines that part tables on a terminal."""
    console = Console(
        file=io.StringIO(),
        width=JUPYTER_WIDTH,
        record=True,
        force_terminal=True,
        force_jupyter=False,  # else, in a notebook, rich would display the table itself as well
        color_system="truecolor",
        **AS_IS,
    )
    console.print(view(result, DIMS), crop=False)
    html = console.export_html(inline_styles=True, code_format=JUPYTER_HTML_FORMAT, clear=False)
    return {
        "text/plain": _unpadded(console.export_text(clear=False)).rstrip("\n"),
        "text/html": re.sub(r"\s+</pre>", "</pre>", html, count=1),
    }


def in_terminal(result: Any) -> dict[str, str]:
    """A result as IPython in a terminal displays it: as the command prints it there (the terminal's width,
    colours and encoding)."""
    console = Console(**AS_IS)
    return {"text/plain": _captured(console, view(_fitted(result, console.encoding), DIMS)).rstrip("\n")}


def _fitted(value: Any, encoding: str) -> Any:
    """A result whose strings hold only what the console's encoding can carry, the rest as escapes: made
    before the layout, so that columns are measured on what is printed."""
    if isinstance(value, str):
        return value.encode(encoding, ESCAPE).decode(encoding)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _fitted(getattr(value, f.name), encoding) for f in fields(value)})
    if isinstance(value, list | tuple):
        return type(value)(_fitted(v, encoding) for v in value)
    return value


# ---------------------------------------------------------------- notes, progress, errors


class Reporter:
    """For a person at a terminal: coloured notes and transient progress bars on stderr."""

    def __init__(self) -> None:
        self._err = stderr_console()

    def note(self, message: str) -> None:
        self._err.print(Text(f"note: {message}", style="yellow"), soft_wrap=True)

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Any]:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
        with Progress(*columns, console=self._err, transient=True) as bar:
            task = bar.add_task(label, total=total)

            class _Task:
                def advance(self, n: int) -> None:
                    bar.advance(task, n)

            yield _Task()


def print_error(message: str) -> None:
    stderr_console().print(Text("gpt2emb: ", style="bold red") + Text(message), soft_wrap=True)


@view.register
def _(result: ExportResult, dims: int | None) -> RenderableType:
    chosen = ["whole words only"] if result.whole_words else []
    if result.limit is not None and result.limit <= result.rows:  # a limit past the rows left cut nothing
        chosen.append(f"the first {result.limit:,}")
    which = f" ({', '.join(chosen)})" if chosen else ""
    title = f"{result.table} of {result.model}: {result.rows:,} rows{which} of {result.dims} numbers"
    rows = [[f.path, f"{f.bytes:,}"] for f in result.files]
    parts: list[RenderableType] = [
        *_notes(list(result.notes)),
        _table(f"{title}, as {result.format}", "file bytes>", rows),
    ]
    if result.format == "projector":
        parts.append(
            Text("to see them: https://projector.tensorflow.org, Load, then vectors.tsv and metadata.tsv")
        )
    return Group(*parts)
