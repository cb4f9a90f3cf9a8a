"""The result of vector.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document, Token


@dataclass(frozen=True)
class VectorItem(Document):
    word: str
    tokens: tuple[Token, ...]
    pool: str
    note: str
    vector: tuple[float, ...]
    norm: float
    mean: float
    std: float
    min: float
    max: float


@dataclass(frozen=True)
class VectorResult(Document):
    model: str
    items: tuple[VectorItem, ...]
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)
