"""positions and its --heatmap: the rows of the position table."""

from __future__ import annotations

import numbers
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb import contract, measures, registry, targets
from gpt2emb.core.open import (
    Opened,
    check_position_table,
    floats,
    open_ref,
    positions_learned,
    refuse_static,
)
from gpt2emb.errors import (
    UsageError,
    WrongType,
    option,
    spelt,
)
from gpt2emb.report import Reporter
from gpt2emb.results.positions import HeatmapResult, PositionsResult
from gpt2emb.store.entries import OpenedEntry

NO_POSITIONS = "it has no position table: a word has one vector whatever its place in a text"
_RANGE = re.compile(r"([0-9]{1,12})-([0-9]{1,12})", re.ASCII)


def spans_of(specs: list[str]) -> list[tuple[int, int]]:
    """The syntax of `0 1 2 500` and `0-5`, checked before any model is opened."""
    if not specs:
        raise UsageError(
            "give at least one position, as in: " + spelt("positions 0 1 2 500", "positions([0, 1, 2, 500])")
        )
    spans = []
    for spec in specs:
        s = spec.strip()
        if m := _RANGE.fullmatch(s):
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise UsageError(f"range {s} runs backwards: write it low-high, as {hi}-{lo}")
            spans.append((lo, hi))
        elif re.fullmatch(r"-[0-9]{1,12}", s, re.ASCII):  # known before any model is opened
            raise UsageError(f"position {s} does not exist: positions count from 0")
        elif re.fullmatch(r"[0-9]{1,12}", s, re.ASCII):
            spans.append((int(s), int(s)))
        else:
            raise UsageError(f"{spec!r} is not a position: write a whole number or a range such as 0-5")
    return spans


def checked_positions(spans: list[tuple[int, int]], m: OpenedEntry) -> list[int]:
    """Every position of the spans (spans_of parsed them), in order, each checked to be one the model
    learned, and no more of them than it learned."""
    n_positions = m.shape.n_positions
    for lo, hi in spans:
        for p in (lo, hi):
            if not 0 <= p < n_positions:
                raise UsageError(f"position {p} does not exist: {positions_learned(m)}")
    if sum(hi - lo + 1 for lo, hi in spans) > n_positions:
        raise UsageError(f"more positions asked for than the {n_positions:,} there are")
    return [p for lo, hi in spans for p in range(lo, hi + 1)]


def positions(
    model: str, specs: list[str], reporter: Reporter | None = None, revision: str | None = None
) -> PositionsResult:
    spans_of(specs)  # the syntax, before the model is opened
    ref = registry.resolve(model, revision)
    refuse_static(ref, NO_POSITIONS)
    return positions_in(open_ref(ref, reporter), specs)


def position_map(
    model: str,
    cells: int = 32,
    png: str | None = None,
    reporter: Reporter | None = None,
    revision: str | None = None,
    figure: str | None = None,
) -> HeatmapResult:
    """The heatmap; with png or figure (--png, --figure: one name each for the same figure, checked by the
    CLI), also the figure written there."""
    check_map(cells, png)  # before the model is opened
    ref = registry.resolve(model, revision)
    refuse_static(ref, NO_POSITIONS)
    return position_map_in(open_ref(ref, reporter), cells, png, figure)


def check_map(cells: int, png: str | Path | None) -> tuple[int, str | None]:
    """position_map's cells and png, checked (matplotlib there for a figure) before any row is read."""
    cells = contract.whole(cells)
    if not isinstance(cells, int) or isinstance(cells, bool) or not 2 <= cells <= 256:
        raise UsageError(f"{option('cells')} must be from 2 to 256, not {cells!r:.40}")
    if png is None:
        return cells, None
    if not isinstance(png, str | Path) or not str(png).strip():
        raise UsageError(f"{option('png')} needs a file name, such as {option('png', 'wpe.png')}")
    from gpt2emb import plot

    plot.check_available()
    given = plot.figure_target(png)
    png = targets.user_file(png, given.said, given.folder_fix or given.fix)
    plot.figure_target(png).real()  # a device, FIFO, socket, folder or what gpt2emb reads: refused now
    return cells, str(png)


def positions_in(o: Opened, positions: int | str | Sequence[int | str]) -> PositionsResult:
    """The rows of wpe at some positions (`0`, `[0, 1, 500]`, `"0-5"`): norms and pairwise cosines."""
    given: Any = [positions] if isinstance(positions, numbers.Integral | str) else positions
    if isinstance(given, np.ndarray) and given.ndim == 1:  # np.arange(5): numbers, as a list's are
        given = given.tolist()
    listed = [contract.whole(p) for p in given] if isinstance(given, Sequence) else None
    if listed is None or not all(isinstance(p, int | str) and not isinstance(p, bool) for p in listed):
        raise WrongType(
            f"positions are whole numbers or ranges such as '0-5', not {contract.shown(positions, 40)}"
        )
    spans = spans_of([str(p) for p in listed])
    m = o.model
    check_position_table(m)
    chosen = checked_positions(spans, m)
    matrix, norms = measures.cosine_matrix(m.wpe[chosen])
    m.check_rows(positions=chosen)
    rows = tuple(p + m.shape.position_offset for p in chosen)
    return PositionsResult(m.name, tuple(chosen), floats(norms), tuple(floats(r) for r in matrix), rows)


def position_map_in(
    o: Opened, cells: int = 32, png: str | Path | None = None, figure: str | None = None
) -> HeatmapResult:
    """The cosine of every pair of position rows, as cells x cells means of blocks (a shaded table in a
    notebook); with png, also a figure written there: heatmap, norms, principal axes (matplotlib); figure:
    the same, a .png, .svg or .pdf named by --figure (checked by plot.check_figure)."""
    cells, png_file = check_map(cells, png)
    figure = figure if figure is not None else png_file
    m = o.model
    check_position_table(m)
    m.check_rows(positions=range(m.shape.n_positions))  # every row is used, before a figure is written
    full, norms = measures.all_cosines(m.wpe)
    cells = min(cells, m.shape.n_positions)
    if figure is not None:
        from gpt2emb import plot

        plot.positions_figure(
            full, norms, measures.principal_components(m.wpe, 3), m.name, figure, "png" if png else "figure"
        )
    small = measures.block_means(full, cells)
    return HeatmapResult(
        m.name,
        m.shape.n_positions,
        m.shape.n_positions / cells,
        tuple(floats(r) for r in small),
        figure,
        figure,
    )
