"""The same question put to several models side by side (neighbors and analogy with -m given more than
once): each model's result, and how much their answers agree.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.common import Document
from gpt2emb.results.neighbors import NeighborsResult


@dataclass(frozen=True)
class Overlap(Document):
    query: str  # the word, or the analogy's expression
    models: tuple[str, str]
    shared: int  # tokens in both top-k lists
    k: int
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class SideBySideResult(Document):
    """The same question put to several models: each model's own result, and how much their answers agree."""

    models: tuple[str, ...]
    results: tuple[NeighborsResult, ...] | tuple[AnalogyResult, ...]
    overlap: tuple[Overlap, ...]
