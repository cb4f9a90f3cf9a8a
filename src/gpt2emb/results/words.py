"""Results of vector, neighbors, analogy and similarity, and of their side-by-side comparison across models.

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
class Candidates(Document):
    """The tokens an answer was chosen from, when --among, --restrict or --whole-words narrow them."""

    count: int  # candidate tokens
    among: str | None  # the --among file
    restrict: int | None  # --restrict N: token ids 0 to N - 1
    whole_words: bool
    split: tuple[str, ...]  # words of the --among file left out: not one token, so not rankable as one


@dataclass(frozen=True)
class NeighborsResult(Document):
    model: str
    k: int
    items: tuple[NeighborsItem, ...]
    candidates: Candidates | None = None  # None: every token
    fold: bool = False
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ranked(Document):
    rank: int
    id: int
    token: str
    score: float
    input: bool


@dataclass(frozen=True)
class AnalogyInput(Document):
    word: str
    id: int
    token: str
    rank: int  # place in the full ranking, inputs included
    score: float


@dataclass(frozen=True)
class AnalogyResult(Document):
    model: str
    expression: str
    method: str
    keep_inputs: bool
    results: tuple[Ranked, ...]
    inputs: tuple[AnalogyInput, ...]
    notes: tuple[str, ...]
    candidates: Candidates | None = None  # None: every token; else inputs rank among these


@dataclass(frozen=True)
class AnalogyBatch(Document):
    """`analogy -`'s --json: each line's `analogy A B C --json` document, in the order of the lines."""

    model: str
    items: tuple[AnalogyResult, ...]


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
