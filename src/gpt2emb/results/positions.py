"""Results of positions and its --heatmap.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document


@dataclass(frozen=True)
class PositionsResult(Document):
    model: str
    positions: tuple[int, ...]
    norms: tuple[float, ...]
    matrix: tuple[tuple[float, ...], ...]
    rows: tuple[int, ...] = ()  # each position's row of the position table (RoBERTa: position + 2)


@dataclass(frozen=True)
class HeatmapResult(Document):
    """The cosine similarity of every pair of position rows, averaged over blocks of `block` positions."""

    model: str
    n_positions: int
    block: float  # positions per cell
    matrix: tuple[tuple[float, ...], ...]
    png: str | None  # the figure written (--figure, or --png, its old name), if any
    figure: str | None = None  # the same file, named as every command names it (a key only when drawn)
