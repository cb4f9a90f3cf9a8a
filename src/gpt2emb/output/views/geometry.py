"""The view of geometry: norms, principal components, content against position."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.layout import (
    maybe,
    note_lines,
    num,
    pct,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.geometry import GeometryResult, TableGeometry, TokenNorm


def _extremes(table: TableGeometry) -> list[list[str]]:
    def cells(row: Any) -> list[str]:
        if isinstance(row, TokenNorm):
            return [tok(row.token), str(row.id), num(row.norm)]
        return [str(row.position), num(row.norm)]

    return [[*cells(a), *cells(b)] for a, b in zip(table.smallest, table.largest, strict=True)]


@view.register
def _(result: GeometryResult, dims: int | None) -> RenderableType:
    wte, wpe, cross = result.wte, result.wpe, result.wte_vs_wpe
    tables = (wte,) if wpe is None else (wte, wpe)
    stats: list[tuple[str, Any]] = [
        ("rows", lambda t: f"{t.rows:,}"),
        ("rows of zeros (left out of cosines)", lambda t: f"{t.zero_rows:,}"),
        ("norm: mean", lambda t: num(t.norm.mean)),
        ("norm: std", lambda t: num(t.norm.std)),
        ("norm: min", lambda t: num(t.norm.min)),
        ("norm: max", lambda t: num(t.norm.max)),
        ("mean cosine, all pairs of rows", lambda t: maybe(t.mean_cosine)),
    ]
    rows = [[label, *(fmt(t) for t in tables)] for label, fmt in stats]
    for k in range(max(len(t.pc_variance) for t in tables)):
        rows.append([f"variance along PC{k + 1}", *(pct(_at(t.pc_variance, k)) for t in tables)])
    rows.append([f"PC1-{len(wte.pc_variance)} together", *(pct(_together(t.pc_variance)) for t in tables)])
    names = ("wte", "wpe")[: len(tables)]
    title = f"{' and '.join(names)} of {result.model} (d = {result.d_model:,})"
    summary = titled_table(title, "_ " + " ".join(f"{name}>" for name in names), rows)
    by_norm_wte = titled_table(
        "wte rows of smallest and largest norm", "smallest id> norm> largest id> norm>", _extremes(wte)
    )
    notes = list(result.notes)
    if cross is not None and None in (cross.mean_abs_cosine, cross.max_abs_cosine):
        # the reading says why content against position has no figures: the note on them would say it again
        notes = [n for n in notes if not n.startswith("wte_vs_wpe:")]
    if wpe is None or cross is None:
        return Group(summary, by_norm_wte, Text(result.reading), *note_lines(notes))
    by_norm_wpe = titled_table(
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
        ["mean", maybe(cross.mean_abs_cosine)],
        [largest, maybe(cross.max_abs_cosine)],
        [f"mean of two random directions in {d:,} dimensions", num(cross.random_mean_abs_cosine)],
    ]
    title = f"content against position: every wte row with every wpe row ({cross.pairs:,} pairs)"
    content = titled_table(title, "_ |cosine|>", cross_rows)
    formula = f"random directions: {cross.random_formula} = {math.sqrt(2 / (math.pi * d)):.4f}\n"
    return Group(
        summary, by_norm_wte, by_norm_wpe, content, Text(formula), Text(result.reading), *note_lines(notes)
    )


def _at(shares: tuple[float | None, ...], k: int) -> float | None:
    return shares[k] if k < len(shares) else None


def _together(shares: tuple[float | None, ...]) -> float | None:
    return None if any(x is None for x in shares) else sum(x for x in shares if x is not None)
