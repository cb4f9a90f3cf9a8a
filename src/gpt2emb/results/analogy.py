"""The results of analogy (one question, and a stream of them).

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpt2emb.results.common import Document

if TYPE_CHECKING:  # built only where candidates are narrowed (candidates.py): ~1 ms at import
    from gpt2emb.results.candidates import Candidates


@dataclass(frozen=True)
class Ranked(Document):
    rank: int
    id: int
    token: str
    score: float  # 3cosmul's: the product, as gensim gives it (0 once below float64's range)
    log_score: float | None  # 3cosmul's: the product's logarithm, by which it ranks; None for add and 3cosadd
    input: bool


@dataclass(frozen=True)
class AnalogyInput(Document):
    word: str
    id: int
    token: str
    rank: int  # place in the full ranking, inputs included
    score: float
    log_score: float | None  # as Ranked's


@dataclass(frozen=True)
class Term(Document):
    sign: str  # "+" or "-": added to the sum or taken from it (the first term's is "+")
    word: str


@dataclass(frozen=True)
class AnalogyResult(Document):
    model: str
    expression: str  # the sum as written: "king - man + woman" (A B C reads as that)
    terms: tuple[Term, ...]  # the sum's terms, each with its sign, in the order written
    method: str
    keep_inputs: bool
    results: tuple[Ranked, ...]
    inputs: tuple[AnalogyInput, ...]
    notes: tuple[str, ...]
    candidates: Candidates | None = None  # None: every token; else inputs rank among these
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)
    static: bool = False  # a static word table's (word2vec, GloVe): its rows are keys, not tokens


@dataclass(frozen=True)
class AnalogyBatch(Document):
    """`analogy -`'s --json: each line's `analogy A B C --json` document, in the order of the lines."""

    model: str
    items: tuple[AnalogyResult, ...]
