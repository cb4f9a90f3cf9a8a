"""The same question put to several models side by side (neighbors, analogy and similarity with -m given more
than once): each model's result, which model is static, the words a model lacks, and how much their answers
agree.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.common import Document
from gpt2emb.results.neighbors import NeighborsResult
from gpt2emb.results.similarity import SimilarityResult

# how two models' answers are matched: the tables and the docs say it in these words
MATCH = "the text without its leading space, case-sensitive"


def word_of(token: str) -> str:
    """The word a token (as tables show it: " king") or a static file's key ("king") stands for: the text
    without its leading space. Case stays: "King" is not "king"."""
    return token[1:] if token.startswith(" ") else token


@dataclass(frozen=True)
class Lack(Document):
    query: str  # the word (or the analogy's expression) this model cannot answer
    reason: str  # why, as the model's own refusal says it


@dataclass(frozen=True)
class Side(Document):
    """One model of a side by side: what it is, and the questions it left unanswered."""

    model: str
    static: bool  # a static word table (a word2vec or GloVe file), not a transformer's token table
    lacks: tuple[Lack, ...]


@dataclass(frozen=True)
class Overlap(Document):
    query: str  # the word, or the analogy's expression
    models: tuple[str, str]
    shared: int  # words in both top-k lists, each matched by the text without its leading space
    k: int
    tokens: tuple[str, ...]  # the first model's tokens whose word is in the second's list, in its order
    words: tuple[str, ...] = ()  # the shared words, each once, without a leading space


@dataclass(frozen=True)
class SideBySideResult(Document):
    """The same question put to several models: each model's own result, and how much their answers agree."""

    models: tuple[str, ...]
    # a model's result, in the order of models; a word it lacks is an item with no tokens and no neighbours
    # whose note says why (neighbors), or null (analogy); sides says which
    results: tuple[NeighborsResult, ...] | tuple[AnalogyResult | None, ...]
    overlap: tuple[Overlap, ...]  # every pair of models that both answered, for each query
    sides: tuple[Side, ...] = ()
    match: str = MATCH  # how a word of one list is found in another's
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)


@dataclass(frozen=True)
class PairCosines(Document):
    a: str
    b: str
    cosines: tuple[float | None, ...]  # in the order of models; None (null) where a model lacks a or b


@dataclass(frozen=True)
class SimilaritySideBySide(Document):
    """similarity's words put to several models: each pair's cosine in each, and each model's own matrix."""

    models: tuple[str, ...]
    words: tuple[str, ...]
    pairs: tuple[PairCosines, ...]  # every pair of words, in the order given
    results: tuple[
        SimilarityResult | None, ...
    ]  # a model's matrix of the words it has; None for fewer than 2
    sides: tuple[Side, ...]
