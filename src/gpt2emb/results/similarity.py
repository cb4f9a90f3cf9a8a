"""The result of similarity.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document, Token


@dataclass(frozen=True)
class Word(Document):
    word: str
    tokens: tuple[Token, ...]
    pool: str
    note: str


@dataclass(frozen=True)
class SimilarityResult(Document):
    model: str
    items: tuple[Word, ...]
    norms: tuple[float, ...]
    matrix: tuple[tuple[float, ...], ...]  # cosine of items[i] with items[j]
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)
    static: bool = False  # a static word table's (word2vec, GloVe): its rows are keys, not tokens
