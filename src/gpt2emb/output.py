"""Everything a person or a script sees: rich tables, one JSON document, notes, progress and error messages.

render(result) dispatches on the result's type; JSON is `asdict(result)`, so results.py is the JSON interface.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict
from functools import singledispatch
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from gpt2emb.results import (
    AnalogyResult,
    NeighborsResult,
    PositionsResult,
    SizesResult,
    Token,
    TyingResult,
    VectorResult,
)

MAX_PIECES_SHOWN = 12


def stdout_console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False)


def tok(s: str) -> str:
    """A token in double quotes, so a leading space shows; control characters are escaped."""
    escaped = "".join(
        ch
        if ch.isprintable() or ch == " "
        else (f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        for ch in s
    )
    return f'"{escaped}"'


def split(tokens: tuple[Token, ...]) -> Text:
    shown = " + ".join(f"{tok(t.token)} ({t.id})" for t in tokens[:MAX_PIECES_SHOWN])
    if len(tokens) > MAX_PIECES_SHOWN:
        shown += f" + ... ({len(tokens)} tokens)"
    return Text(shown)


def _num(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}f}"


def _table(title: str, *columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(
        title=title, box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", min_width=len(title) + 2
    )
    for c in columns:
        table.add_column(c, justify="right" if c in right else "left", overflow="fold")
    return table


def _notes(notes: list[str]) -> list[RenderableType]:
    return [Text(f"note: {n}", style="yellow") for n in notes if n]


# ---------------------------------------------------------------- one renderer per result type


@singledispatch
def view(result: Any, dims: int | None) -> RenderableType:
    raise TypeError(f"no view for {type(result).__name__}")


@view.register
def _(result: VectorResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for item in result.items:
        parts.extend(_notes([item.note]))
        table = _table(
            f"{item.word} in {result.model}: {split(item.tokens)}",
            "norm",
            "mean",
            "std",
            "min",
            "max",
            "dims",
            right=("norm", "mean", "std", "min", "max", "dims"),
        )
        table.add_row(
            *(_num(getattr(item, f)) for f in ("norm", "mean", "std", "min", "max")), str(len(item.vector))
        )
        parts.append(table)
        shown = item.vector if dims is None else item.vector[:dims]
        more = (
            "" if len(shown) == len(item.vector) else f"  ... ({len(item.vector) - len(shown)} more; --full)"
        )
        parts.append(Text(f"[{', '.join(f'{x:+.4f}' for x in shown)}]{more}\n"))
    return Group(*parts)


@view.register
def _(result: NeighborsResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for item in result.items:
        parts.extend(_notes([item.note]))
        table = _table(
            f"nearest to {split(item.tokens)} in {result.model}",
            "rank",
            "token",
            "id",
            "cosine",
            right=("rank", "id", "cosine"),
        )
        for n in item.neighbors:
            table.add_row(str(n.rank), tok(n.token), str(n.id), _num(n.score))
        parts.append(table)
    return Group(*parts)


@view.register
def _(result: AnalogyResult, dims: int | None) -> RenderableType:
    kept = "inputs kept and marked *" if result.keep_inputs else "inputs left out"
    table = _table(
        f"{result.expression} in {result.model} ({kept})",
        "rank",
        "token",
        "id",
        "cosine",
        right=("rank", "id", "cosine"),
    )
    for r in result.results:
        table.add_row(str(r.rank), tok(r.token) + (" *" if r.input else ""), str(r.id), _num(r.score))
    inputs = _table(
        "where the inputs rank", "word", "token", "id", "rank", "cosine", right=("id", "rank", "cosine")
    )
    for i in result.inputs:
        inputs.add_row(i.word, tok(i.token), str(i.id), str(i.rank), _num(i.score))
    return Group(*_notes(list(result.notes)), table, inputs)


@view.register
def _(result: PositionsResult, dims: int | None) -> RenderableType:
    table = _table(
        f"cosine similarity of position rows (wpe) in {result.model}",
        "pos",
        "norm",
        *(str(p) for p in result.positions),
        right=("pos", "norm", *map(str, result.positions)),
    )
    for p, norm, row in zip(result.positions, result.norms, result.matrix, strict=True):
        table.add_row(str(p), _num(norm, 3), *(_num(x, 3) for x in row))
    return table


@view.register
def _(result: SizesResult, dims: int | None) -> RenderableType:
    table = _table(
        f"GPT-2 sizes (embeddings in {result.dtype})",
        "",
        *(m.name for m in result.models),
        right=tuple(m.name for m in result.models),
    )
    rows: list[tuple[str, Any]] = [
        ("vocab", lambda m: f"{m.vocab_size:,}"),
        ("d_model", lambda m: f"{m.d_model:,}"),
        ("positions", lambda m: f"{m.n_positions:,}"),
        ("layers", lambda m: str(m.n_layer)),
        ("heads", lambda m: str(m.n_head)),
        ("wte params", lambda m: f"{m.wte_params:,}"),
        ("wpe params", lambda m: f"{m.wpe_params:,}"),
        ("block params", lambda m: f"{m.block_params:,}"),
        ("total params", lambda m: f"{m.total_params:,}"),
        ("wte share", lambda m: f"{100 * m.wte_share:.1f}%"),
        (f"wte+wpe MB {result.dtype}", lambda m: f"{m.embeddings_mb:,.1f}"),
    ]
    if any(m.verified is not None for m in result.models):
        rows.append(("checked on Hub", lambda m: "yes" if m.verified else "MISMATCH"))
    for label, fmt in rows:
        table.add_row(label, *(fmt(m) for m in result.models))
    return table


@view.register
def _(result: TyingResult, dims: int | None) -> RenderableType:
    verdict = "tied: lm_head reuses wte" if result.tied else "not tied"
    table = _table(f"{result.model}: {verdict}", "check", "", "detail")
    for c in result.checks:
        table.add_row(c.name, Text("yes", style="green") if c.passed else Text("no", style="red"), c.detail)
    if result.tied:
        table.caption = f"tying saves {result.saved_params:,} parameters (one vocab x d_model matrix)"
    return table


def render(result: Any, as_json: bool, dims: int | None = None) -> None:
    if as_json:
        indent = 2 if sys.stdout.isatty() else None
        sys.stdout.write(json.dumps(asdict(result), ensure_ascii=False, indent=indent) + "\n")
        return
    stdout_console().print(view(result, dims))


# ---------------------------------------------------------------- notes, progress, errors


class Reporter:
    """Notes go to stderr; progress bars only when a person is watching (a terminal, no --json)."""

    def __init__(self, live: bool) -> None:
        self.live = live
        self._err = stderr_console()

    def note(self, message: str) -> None:
        self._err.print(Text(f"note: {message}", style="yellow"), soft_wrap=True)

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Any]:
        columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
        with Progress(*columns, console=self._err, transient=True, disable=not self.live) as bar:
            task = bar.add_task(label, total=total)

            class _Task:
                def advance(self, n: int) -> None:
                    bar.advance(task, n)

            yield _Task()


def error(message: str, kind: str, code: int, as_json: bool) -> None:
    if as_json:
        sys.stderr.write(json.dumps({"error": {"type": kind, "code": code, "message": message}}) + "\n")
        return
    stderr_console().print(Text("gpt2emb: ", style="bold red") + Text(message), soft_wrap=True)
