"""geometry: the shape of wte and wpe, and of content against position."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gpt2emb import registry, tables
from gpt2emb.core.open import (
    Opened,
    finite,
    no_position_table,
    open_ref,
)
from gpt2emb.report import Reporter
from gpt2emb.results.geometry import (
    CrossGeometry,
    GeometryResult,
    MaxPair,
    NormStats,
    PositionNorm,
    TableGeometry,
    TokenNorm,
)

EXTREMES = 5  # rows shown at each end of a table's norm distribution


RANDOM_FORMULA = "Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)), about sqrt(2/(pi d))"


def _table_geometry(shape: tables.TableShape, row: Callable[[int, float], Any]) -> TableGeometry:
    norms = shape.norms
    index = np.arange(len(norms))
    smallest = np.lexsort((index, norms))[:EXTREMES]
    largest = np.lexsort((index, -norms))[:EXTREMES]
    # the spread of an infinite norm is inf - inf: NaN (shown as null, with the note to_dict adds), and
    # numpy would print a warning computing it
    std = math.nan if shape.broken_rows else float(norms.std())
    return TableGeometry(
        len(norms),
        shape.zero_rows,
        NormStats(float(norms.mean()), std, float(norms.min()), float(norms.max())),
        tuple(row(int(i), float(norms[i])) for i in smallest),
        tuple(row(int(i), float(norms[i])) for i in largest),
        finite(shape.mean_cosine),
        tuple(finite(float(x)) for x in shape.pc_variance),
    )


def _reading(name: str, d: int, cross: CrossGeometry, tables: dict[str, TableGeometry]) -> str:
    """One sentence that reads the content-against-position figures."""
    mean, top, chance = cross.mean_abs_cosine, cross.max_abs_cosine, cross.random_mean_abs_cosine
    if mean is None or top is None:
        empty = [k for k, t in tables.items() if t.zero_rows == t.rows]
        why = (
            f"every row of {' and '.join(empty)} is zeros"
            if empty
            else "a row holds numbers that are not finite"
        )
        return f"{why}, so content and position have no angle to read."
    ratio = mean / chance
    figures = (
        f"a wte row and a wpe row of {name} meet at a mean |cosine| of {mean:.3f}, {ratio:.1f} times what "
        f"two random directions in {d:,} dimensions give ({chance:.3f}), and at most {top:.3f}"
    )
    if ratio <= 1.5:
        return (
            f"Content and position are as near orthogonal as random directions: {figures}; so adding a "
            "position row moves a token's vector along directions its content hardly uses."
        )
    return (
        f"Content and position share some directions: {figures}; so adding a position row also moves a "
        "token's vector along its content's own directions."
    )


def geometry(
    model: str,
    reporter: Reporter | None = None,
    revision: str | None = None,
    figure: str | None = None,
    encoding: str | None = None,
) -> GeometryResult:
    """The shape of wte and of wpe (norms, mean cosine, principal components), and the cosine of every
    wte row with every wpe row next to what random directions would give; a note for each figure that is
    undefined (null)."""
    opened = open_ref(registry.resolve(model, revision, encoding), reporter)
    result = geometry_in(opened)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("geometry", result, figure, opened)
    return result


def geometry_in(o: Opened) -> GeometryResult:
    """geometry of an opened model."""
    m, vocab = o.model, o.vocab
    m.check_rows(range(len(m.wte)), range(len(m.wpe)))  # every row is used
    d = m.shape.d_model
    notes: list[str] = []

    def measured(name: str, shape: tables.TableShape, row: Callable[[int, float], Any]) -> TableGeometry:
        table = _table_geometry(shape, row)
        if shape.broken_rows:
            rows = "1 row holds" if shape.broken_rows == 1 else f"{shape.broken_rows:,} rows hold"
            notes.append(
                f"{name}: {rows} NaN or infinite values, so its mean_cosine and pc_variance are null (such "
                "a row has no direction, and no variance that is a number)"
            )
            return table
        if table.mean_cosine is None:
            live = table.rows - table.zero_rows
            notes.append(
                f"{name}: mean_cosine is null: a mean over pairs of rows needs two rows that are not zeros, "
                f"and {name} has {live:,}"
            )
        if all(x is None for x in table.pc_variance):
            notes.append(
                f"{name}: pc_variance is null: its rows do not vary (every row is the same), so no direction "
                "holds any of their variance"
            )
        return table

    wte_shape = tables.table_shape(m.wte)
    wte = measured("wte", wte_shape, lambda i, n: TokenNorm(i, vocab.token(i), n))
    if not m.shape.position_table:
        reading = f"{no_position_table(m)}: there is no wpe to measure, nor content against position."
        return GeometryResult(m.name, d, wte, None, None, reading, tuple(notes))
    wpe_shape = tables.table_shape(m.wpe)
    wpe = measured("wpe", wpe_shape, PositionNorm)
    c = tables.cross_cosines(m.wte, m.wpe, wte_shape.norms)
    pair = None
    if c.argmax is not None and c.max_cosine is not None:
        i, p = c.argmax
        pair = MaxPair(i, vocab.token(i), p, c.max_cosine)
    cross = CrossGeometry(
        finite(c.mean_abs),
        finite(c.max_abs),
        pair,
        tables.random_mean_abs_cosine(d),
        RANDOM_FORMULA,
        c.pairs,
    )
    reading = _reading(m.name, d, cross, {"wte": wte, "wpe": wpe})
    if cross.mean_abs_cosine is None or cross.max_abs_cosine is None or pair is None:
        broken = [name for name, s in (("wte", wte_shape), ("wpe", wpe_shape)) if s.broken_rows]
        empty = [name for name, t in (("wte", wte), ("wpe", wpe)) if t.zero_rows == t.rows]
        why = (
            f"a row of {' and '.join(broken)} holds NaN or infinite values"
            if broken
            else f"every row of {' and '.join(empty)} is zeros, so no pair of rows has an angle"
        )
        notes.append(f"wte_vs_wpe: mean_abs_cosine, max_abs_cosine and max_pair are null: {why}")
    return GeometryResult(m.name, d, wte, wpe, cross, reading, tuple(notes))
