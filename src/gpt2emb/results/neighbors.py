"""The result of neighbors.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpt2emb.results.common import Document, Token

if TYPE_CHECKING:  # built only where candidates are narrowed (candidates.py): ~1 ms at import
    from gpt2emb.results.candidates import Candidates


@dataclass(frozen=True)
class Form(Document):
    """A token of a folded row (neighbors --fold): one form of the row's word."""

    id: int
    token: str
    score: float


@dataclass(frozen=True)
class Neighbor(Document):
    rank: int
    id: int
    token: str
    score: float
    forms: tuple[Form, ...] | None = None  # --fold: every candidate form of the word, best first (this one)


@dataclass(frozen=True)
class NeighborsItem(Document):
    word: str
    tokens: tuple[Token, ...]
    pool: str
    note: str
    neighbors: tuple[Neighbor, ...]
    form_share: int | None = None  # --fold: how many of the raw top k (unfolded) are forms of the word


@dataclass(frozen=True)
class NeighborsResult(Document):
    model: str
    k: int
    items: tuple[NeighborsItem, ...]
    candidates: Candidates | None = None  # None: every token
    fold: bool = False
    notes: tuple[str, ...] = ()
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)
    static: bool = False  # a static word table's (word2vec, GloVe): its rows are keys, not tokens
