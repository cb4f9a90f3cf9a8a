"""Results of geometry: the shape of each table and between them.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document


@dataclass(frozen=True)
class NormStats(Document):
    mean: float
    std: float
    min: float
    max: float


@dataclass(frozen=True)
class TokenNorm(Document):
    id: int
    token: str
    norm: float


@dataclass(frozen=True)
class PositionNorm(Document):
    position: int
    norm: float


@dataclass(frozen=True)
class TableGeometry(Document):
    rows: int
    zero_rows: int  # rows of zeros: left out of the cosine figures
    norm: NormStats  # over all rows
    smallest: tuple[TokenNorm, ...] | tuple[PositionNorm, ...]  # 5 rows, by norm (ties: the smaller index)
    largest: tuple[TokenNorm, ...] | tuple[PositionNorm, ...]
    mean_cosine: float | None  # over all pairs of distinct non-zero rows, exact; None below two such rows
    pc_variance: tuple[float | None, ...]  # share of the variance along each of the first 10 components


@dataclass(frozen=True)
class MaxPair(Document):
    id: int
    token: str
    position: int
    cosine: float  # signed


@dataclass(frozen=True)
class CrossGeometry(Document):
    mean_abs_cosine: float | None  # over every pair of a non-zero wte row and a non-zero wpe row
    max_abs_cosine: float | None
    max_pair: MaxPair | None
    random_mean_abs_cosine: float  # E|cos| of two random directions in d_model dimensions
    random_formula: str
    pairs: int


@dataclass(frozen=True)
class GeometryResult(Document):
    """`geometry`: the shape of wte and wpe, and how far apart content and position lie."""

    model: str
    d_model: int
    wte: TableGeometry
    wpe: TableGeometry | None  # None without a position table (rotary models): the reading says why
    wte_vs_wpe: CrossGeometry | None
    reading: str  # one sentence that reads the numbers
    notes: tuple[str, ...] = ()  # why each figure shown as null is undefined
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)
