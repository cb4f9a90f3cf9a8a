"""Frozen dataclasses of plain values: the contract between the core and output/.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any


class Document:
    """What every result is: `to_dict()` gives the JSON document its command prints with --json."""

    def to_dict(self) -> dict[str, Any]:
        """The fields as strict JSON holds them: a float that is not finite (NaN, inf: a model whose rows
        hold them) becomes null, and the document's notes say so (values known to be undefined are None
        already). One pass, without asdict's deep copy of every number."""
        found = 0

        def plain(value: Any) -> Any:
            nonlocal found
            kind = type(value)
            if kind is float:
                if math.isfinite(value):
                    return value
                found += 1
                return None
            if kind is str or kind is int or value is None or kind is bool:
                return value
            if kind is tuple or kind is list:
                return [plain(v) for v in value]
            if isinstance(value, Document):
                return {name: plain(getattr(value, name)) for name in _names(kind)}
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            return value

        doc: dict[str, Any] = plain(self)
        if found:
            doc["notes"] = [
                *doc.get("notes", []),
                f"{found} value{'s are' if found > 1 else ' is'} not a finite number (the model's rows hold "
                "NaN or infinite values there) and shown as null",
            ]
        return doc


_NAMES: dict[type, tuple[str, ...]] = {}  # each result class's field names, once


def _names(kind: type) -> tuple[str, ...]:
    names = _NAMES.get(kind)
    if names is None:
        names = _NAMES[kind] = tuple(f.name for f in fields(kind))
    return names


@dataclass(frozen=True)
class Token(Document):
    id: int
    token: str


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
    png: str | None  # the figure written with --png, if any


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
class ModelSizes(Document):
    name: str
    repo: str
    vocab_size: int
    d_model: int
    n_positions: int
    n_layer: int
    n_head: int
    wte_params: int
    wpe_params: int
    block_params: int | None  # by GPT-2's formula; None when counted from a checkpoint (sizes -m)
    final_ln_params: int | None
    total_params: int
    wte_share: float  # wte_params / total_params
    embeddings_mb: float  # wte + wpe in megabytes (10^6 bytes) at `dtype`
    verified: bool | None  # None: not checked (no --verify)
    family: str
    position_rows: int  # rows of the position table (RoBERTa: 2 more than n_positions); 0 when none
    output_params: int  # a separate output layer's; 0 when it is the token table (tied)
    total_mb: float  # every parameter in megabytes at `dtype`
    commit: str | None  # the Hub commit whose headers were counted; None by the formula or for a folder


@dataclass(frozen=True)
class SizesResult(Document):
    dtype: str
    models: tuple[ModelSizes, ...]
    source: str  # "formula" (the four GPT-2 sizes) or "checkpoint" (sizes -m: counted from the headers)


@dataclass(frozen=True)
class Check(Document):
    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class SentenceToken(Document):
    """A token of a text as the model receives it."""

    position: int
    id: int
    token: str


@dataclass(frozen=True)
class PathGradient(Document):
    """The gradient reaching wte by one path."""

    norm: float
    rows: int  # rows of wte it touches (not all zeros)


@dataclass(frozen=True)
class GradientResult(Document):
    """`tying --grad TEXT`: the language-model loss on TEXT, its gradient reaching wte by each path."""

    text: str
    loss: float  # the mean next-token cross-entropy over TEXT
    input_path: PathGradient  # the input lookup: only rows of TEXT's tokens
    output_path: PathGradient  # the output layer: every row
    cosine_on_shared_rows: float | None  # of the two gradients, on the rows both touch; None: none, or zeros
    sum_matches_tied: bool  # input + output = the tied model's gradient, to 1e-5 relative
    tokens: tuple[SentenceToken, ...]
    shared_rows: int
    tied_norm: float
    relative_difference: float | None  # |input + output - tied| / |tied|; None when tied is all zeros
    notes: tuple[str, ...]
    table_rows: int = 0  # the rows of wte, all of which the output layer reaches


@dataclass(frozen=True)
class Comparison(Document):
    """`tying --compare`: an untied output layer's rows against the token table's."""

    rows: int  # output rows compared
    sampled: bool  # a seeded sample of rows (the output table is over 1 GB), not all of them
    mean_cosine_matching: float | None  # row i of the output layer with row i of wte, over the rows compared
    mean_cosine_random: float | None  # row i of the output layer with a seeded random other row of wte
    total_rows: int  # rows of the output layer
    output: str  # the output layer's tensor in the checkpoint
    bytes_read: int  # of the output layer


@dataclass(frozen=True)
class TyingResult(Document):
    model: str
    tied: bool
    saved_params: int
    checks: tuple[Check, ...]
    gradient: GradientResult | None = None  # only with --grad
    comparison: Comparison | None = None  # only with --compare


@dataclass(frozen=True)
class ContextSentence(Document):
    text: str
    tokens: tuple[SentenceToken, ...]
    at: tuple[int, ...]  # the positions of the word's tokens, at its first occurrence
    occurrences: int


@dataclass(frozen=True)
class ContextPair(Document):
    a: int  # 0-based indexes into the sentences
    b: int
    cosine: float | None  # None when either vector is all zeros


@dataclass(frozen=True)
class ContextLayer(Document):
    layer: int  # 0 is h0 = wte + wpe; n_layer is the last hidden state, after the final layer norm
    pairs: tuple[ContextPair, ...]
    static: tuple[float | None, ...]  # per sentence: the cosine with the word's row of wte


@dataclass(frozen=True)
class ContextResult(Document):
    """`context WORD SENTENCE...`: the word's vector in each sentence, layer by layer."""

    model: str
    word: str
    sentences: tuple[ContextSentence, ...]
    layers: tuple[ContextLayer, ...]
    word_tokens: tuple[Token, ...]
    pool: str
    notes: tuple[str, ...]


@dataclass(frozen=True)
class CacheEntry(Document):
    name: str
    repo: str | None
    commit: str
    path: str
    bytes: int
    outdated: bool = False  # a local folder's entry whose files have changed since, or are gone


@dataclass(frozen=True)
class KeptEntry(Document):
    name: str
    repo: str | None
    commit: str
    path: str
    reason: str  # why it could not be removed: "in use" (on Windows, a program has it open)


@dataclass(frozen=True)
class CacheResult(Document):
    """`cache list` (what is there) or `cache clear` (what was removed, and what could not be)."""

    action: str  # "list" or "clear"
    root: str
    entries: tuple[CacheEntry, ...]
    total_bytes: int
    kept: tuple[KeptEntry, ...] = ()  # clear: still there, whole
    outdated: bool = False  # clear --outdated: only the outdated entries were removed


@dataclass(frozen=True)
class VerifiedEntry(Document):
    name: str
    repo: str | None
    commit: str
    path: str
    ok: bool  # sound; after --repair, sound now (rebuilt, or removed when its source is gone)
    damaged: tuple[str, ...]  # files that did not match the SHA-256 recorded when the entry was built
    problem: str  # what was wrong, in words; "" when nothing was
    repaired: str  # with --repair: "rebuilt", "removed" (the next use builds it anew), or ""


@dataclass(frozen=True)
class VerifyResult(Document):
    """`cache verify`: every byte of each entry read against its checksums."""

    root: str
    repair: bool
    entries: tuple[VerifiedEntry, ...]
    total_bytes: int  # read


@dataclass(frozen=True)
class CachePath(Document):
    path: str


@dataclass(frozen=True)
class RefreshedRevision(Document):
    model: str
    repo: str
    revision: str  # a branch or tag; commit ids asked with --revision never move
    old_commit: str
    new_commit: str
    rebuilt: bool  # an entry of new_commit was built (the old commit had one)


@dataclass(frozen=True)
class RefreshResult(Document):
    """`cache refresh`: each recorded branch or tag asked of the Hub again."""

    root: str
    revisions: tuple[RefreshedRevision, ...]
    failed: tuple[RefreshFailure, ...] = ()  # repos that could not be asked; the others were refreshed


@dataclass(frozen=True)
class RefreshFailure(Document):
    model: str
    message: str
    code: int  # the exit code this failure alone would give


@dataclass(frozen=True)
class ModelRow(Document):
    name: str
    repo: str
    aliases: tuple[str, ...]
    vocab_size: int
    d_model: int
    n_layer: int
    n_head: int
    total_params: int | None  # by GPT-2's formula; None for another family (sizes -m counts any model)
    cached: bool
    family: str = "gpt2"


@dataclass(frozen=True)
class ModelsResult(Document):
    models: tuple[ModelRow, ...]


@dataclass(frozen=True)
class SectionScore(Document):
    section: str
    correct: int
    incorrect: int
    skipped: int  # questions with a word that is not one token under the rule
    accuracy: float | None  # correct / (correct + incorrect); None when nothing was answered


@dataclass(frozen=True)
class Failure(Document):
    section: str
    question: tuple[str, str, str]
    expected: str
    predicted: str | None


@dataclass(frozen=True)
class AnalogyEvalResult(Document):
    model: str
    file: str
    method: str
    rule: str
    ignore_case: bool
    sections: tuple[SectionScore, ...]
    total: SectionScore
    coverage: float  # answered / all questions
    seconds: float
    errors: tuple[Failure, ...]  # only with --errors
    restrict: int | None = None  # --restrict N: only words of token ids 0 to N - 1 (gensim's restrict_vocab)


@dataclass(frozen=True)
class PairsEvalResult(Document):
    model: str
    file: str
    rule: str
    ignore_case: bool
    pairs: int
    used: int
    skipped: int
    oov_ratio: float  # percent of pairs skipped, as gensim reports it
    pearson: float | None  # None (null) when undefined; notes say why
    spearman: float | None
    notes: tuple[str, ...] = ()
    unreadable: int = 0  # lines of the file that hold no pair (a score that is not a finite number: abc, nan)


@dataclass(frozen=True)
class Overlap(Document):
    query: str  # the word, or the analogy's expression
    models: tuple[str, str]
    shared: int  # tokens in both top-k lists
    k: int
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class CompareResult(Document):
    """The same question put to several models: each model's own result, and how much their answers agree."""

    models: tuple[str, ...]
    results: tuple[NeighborsResult, ...] | tuple[AnalogyResult, ...]
    overlap: tuple[Overlap, ...]


@dataclass(frozen=True)
class InputToken(Document):
    position: int
    id: int
    token: str
    wte_norm: float
    wpe_norm: float | None  # None without a position table (rotary models)
    h0_norm: float
    cos_wte_wpe: float | None  # None when either row is all zeros, or without a position table
    row: int | None  # the position table's row of this position (RoBERTa: position + 2); None without one
    sum_norm: float  # |wte + wpe (+ type)|, before the layer norm of a family that has one (else h0_norm)


@dataclass(frozen=True)
class InputResult(Document):
    """`input`: the text as the model receives it, h0 = wte[ids] + wpe[0..n-1]."""

    model: str
    text: str
    n_tokens: int  # the tokens that go in (the first n_positions with --truncate)
    d_model: int
    tokens: tuple[InputToken, ...]
    h0: tuple[tuple[float, ...], ...] | None  # every number of h0, only with --full
    text_tokens: int  # the tokens of the whole text
    n_positions: int  # 0 without a position table (rotary models): then h0 = wte[ids]
    notes: tuple[str, ...]
    type_row: bool = False  # token type 0's row is added (RoBERTa, BERT)
    layer_norm: bool = False  # h0 is the layer norm of the sum (RoBERTa, BERT)
    row_offset: int = 0  # position p is row p + row_offset of wpe


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


@dataclass(frozen=True)
class ExportedFile(Document):
    path: str
    bytes: int


@dataclass(frozen=True)
class ExportResult(Document):
    """`export`: which rows of which table went to which files."""

    model: str
    format: str  # word2vec, word2vec-binary or projector
    table: str  # wte or wpe
    path: str  # -o as given: the file, or the projector's folder
    rows: int
    dims: int
    files: tuple[ExportedFile, ...]  # each file written
    bytes: int  # their sizes together
    whole_words: bool
    limit: int | None
    notes: tuple[str, ...]  # e.g. rows keyed by id
