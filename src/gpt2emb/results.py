"""Frozen dataclasses of plain values: the contract between the core and output/.

The JSON document of a command is `asdict` of its result, so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Token:
    id: int
    token: str


@dataclass(frozen=True)
class VectorItem:
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
class VectorResult:
    model: str
    items: tuple[VectorItem, ...]


@dataclass(frozen=True)
class Neighbor:
    rank: int
    id: int
    token: str
    score: float


@dataclass(frozen=True)
class NeighborsItem:
    word: str
    tokens: tuple[Token, ...]
    pool: str
    note: str
    neighbors: tuple[Neighbor, ...]


@dataclass(frozen=True)
class NeighborsResult:
    model: str
    k: int
    items: tuple[NeighborsItem, ...]


@dataclass(frozen=True)
class Ranked:
    rank: int
    id: int
    token: str
    score: float
    input: bool


@dataclass(frozen=True)
class AnalogyInput:
    word: str
    id: int
    token: str
    rank: int  # place in the full ranking, inputs included
    score: float


@dataclass(frozen=True)
class AnalogyResult:
    model: str
    expression: str
    method: str
    keep_inputs: bool
    results: tuple[Ranked, ...]
    inputs: tuple[AnalogyInput, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class PositionsResult:
    model: str
    positions: tuple[int, ...]
    norms: tuple[float, ...]
    matrix: tuple[tuple[float, ...], ...]
    rows: tuple[int, ...] = ()  # each position's row of the position table (RoBERTa: position + 2)


@dataclass(frozen=True)
class HeatmapResult:
    """The cosine similarity of every pair of position rows, averaged over blocks of `block` positions."""

    model: str
    n_positions: int
    block: float  # positions per cell
    matrix: tuple[tuple[float, ...], ...]
    png: str | None  # the figure written with --png, if any


@dataclass(frozen=True)
class Word:
    word: str
    tokens: tuple[Token, ...]
    pool: str
    note: str


@dataclass(frozen=True)
class SimilarityResult:
    model: str
    items: tuple[Word, ...]
    norms: tuple[float, ...]
    matrix: tuple[tuple[float, ...], ...]  # cosine of items[i] with items[j]


@dataclass(frozen=True)
class ModelSizes:
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
class SizesResult:
    dtype: str
    models: tuple[ModelSizes, ...]
    source: str  # "formula" (the four GPT-2 sizes) or "checkpoint" (sizes -m: counted from the headers)


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class SentenceToken:
    """A token of a text as the model receives it."""

    position: int
    id: int
    token: str


@dataclass(frozen=True)
class PathGradient:
    """The gradient reaching wte by one path."""

    norm: float
    rows: int  # rows of wte it touches (not all zeros)


@dataclass(frozen=True)
class GradientResult:
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


@dataclass(frozen=True)
class Comparison:
    """`tying --compare`: an untied output layer's rows against the token table's."""

    rows: int  # output rows compared
    sampled: bool  # a seeded sample of rows (the output table is over 1 GB), not all of them
    mean_cosine_matching: float | None  # row i of the output layer with row i of wte, over the rows compared
    mean_cosine_random: float | None  # row i of the output layer with a seeded random other row of wte
    total_rows: int  # rows of the output layer
    output: str  # the output layer's tensor in the checkpoint
    bytes_read: int  # of the output layer


@dataclass(frozen=True)
class TyingResult:
    model: str
    tied: bool
    saved_params: int
    checks: tuple[Check, ...]
    gradient: GradientResult | None = None  # only with --grad
    comparison: Comparison | None = None  # only with --compare


@dataclass(frozen=True)
class ContextSentence:
    text: str
    tokens: tuple[SentenceToken, ...]
    at: tuple[int, ...]  # the positions of the word's tokens, at its first occurrence
    occurrences: int


@dataclass(frozen=True)
class ContextPair:
    a: int  # 0-based indexes into the sentences
    b: int
    cosine: float | None  # None when either vector is all zeros


@dataclass(frozen=True)
class ContextLayer:
    layer: int  # 0 is h0 = wte + wpe; n_layer is the last hidden state, after the final layer norm
    pairs: tuple[ContextPair, ...]
    static: tuple[float | None, ...]  # per sentence: the cosine with the word's row of wte


@dataclass(frozen=True)
class ContextResult:
    """`context WORD SENTENCE...`: the word's vector in each sentence, layer by layer."""

    model: str
    word: str
    sentences: tuple[ContextSentence, ...]
    layers: tuple[ContextLayer, ...]
    word_tokens: tuple[Token, ...]
    pool: str
    notes: tuple[str, ...]


@dataclass(frozen=True)
class CacheEntry:
    name: str
    repo: str | None
    commit: str
    path: str
    bytes: int


@dataclass(frozen=True)
class KeptEntry:
    name: str
    repo: str | None
    commit: str
    path: str
    reason: str  # why it could not be removed: "in use" (on Windows, a program has it open)


@dataclass(frozen=True)
class CacheResult:
    """`cache list` (what is there) or `cache clear` (what was removed, and what could not be)."""

    action: str  # "list" or "clear"
    root: str
    entries: tuple[CacheEntry, ...]
    total_bytes: int
    kept: tuple[KeptEntry, ...] = ()  # clear: still there, whole


@dataclass(frozen=True)
class VerifiedEntry:
    name: str
    repo: str | None
    commit: str
    path: str
    ok: bool  # sound; after --repair, sound now (rebuilt, or removed when its source is gone)
    damaged: tuple[str, ...]  # files that did not match the SHA-256 recorded when the entry was built
    problem: str  # what was wrong, in words; "" when nothing was
    repaired: str  # with --repair: "rebuilt", "removed" (the next use builds it anew), or ""


@dataclass(frozen=True)
class VerifyResult:
    """`cache verify`: every byte of each entry read against its checksums."""

    root: str
    repair: bool
    entries: tuple[VerifiedEntry, ...]
    total_bytes: int  # read


@dataclass(frozen=True)
class CachePath:
    path: str


@dataclass(frozen=True)
class RefreshedRevision:
    model: str
    repo: str
    revision: str  # a branch or tag; commit ids asked with --revision never move
    old_commit: str
    new_commit: str
    rebuilt: bool  # an entry of new_commit was built (the old commit had one)


@dataclass(frozen=True)
class RefreshResult:
    """`cache refresh`: each recorded branch or tag asked of the Hub again."""

    root: str
    revisions: tuple[RefreshedRevision, ...]
    failed: tuple[RefreshFailure, ...] = ()  # repos that could not be asked; the others were refreshed


@dataclass(frozen=True)
class RefreshFailure:
    model: str
    message: str
    code: int  # the exit code this failure alone would give


@dataclass(frozen=True)
class ModelRow:
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
class ModelsResult:
    models: tuple[ModelRow, ...]


@dataclass(frozen=True)
class SectionScore:
    section: str
    correct: int
    incorrect: int
    skipped: int  # questions with a word that is not one token under the rule
    accuracy: float | None  # correct / (correct + incorrect); None when nothing was answered


@dataclass(frozen=True)
class Failure:
    section: str
    question: tuple[str, str, str]
    expected: str
    predicted: str | None


@dataclass(frozen=True)
class AnalogyEvalResult:
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


@dataclass(frozen=True)
class PairsEvalResult:
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


@dataclass(frozen=True)
class Overlap:
    query: str  # the word, or the analogy's expression
    models: tuple[str, str]
    shared: int  # tokens in both top-k lists
    k: int
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class CompareResult:
    """The same question put to several models: each model's own result, and how much their answers agree."""

    models: tuple[str, ...]
    results: tuple[NeighborsResult, ...] | tuple[AnalogyResult, ...]
    overlap: tuple[Overlap, ...]


@dataclass(frozen=True)
class InputToken:
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
class InputResult:
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
class NormStats:
    mean: float
    std: float
    min: float
    max: float


@dataclass(frozen=True)
class TokenNorm:
    id: int
    token: str
    norm: float


@dataclass(frozen=True)
class PositionNorm:
    position: int
    norm: float


@dataclass(frozen=True)
class TableGeometry:
    rows: int
    zero_rows: int  # rows of zeros: left out of the cosine figures
    norm: NormStats  # over all rows
    smallest: tuple[TokenNorm, ...] | tuple[PositionNorm, ...]  # 5 rows, by norm (ties: the smaller index)
    largest: tuple[TokenNorm, ...] | tuple[PositionNorm, ...]
    mean_cosine: float | None  # over all pairs of distinct non-zero rows, exact; None below two such rows
    pc_variance: tuple[float | None, ...]  # share of the variance along each of the first 10 components


@dataclass(frozen=True)
class MaxPair:
    id: int
    token: str
    position: int
    cosine: float  # signed


@dataclass(frozen=True)
class CrossGeometry:
    mean_abs_cosine: float | None  # over every pair of a non-zero wte row and a non-zero wpe row
    max_abs_cosine: float | None
    max_pair: MaxPair | None
    random_mean_abs_cosine: float  # E|cos| of two random directions in d_model dimensions
    random_formula: str
    pairs: int


@dataclass(frozen=True)
class GeometryResult:
    """`geometry`: the shape of wte and wpe, and how far apart content and position lie."""

    model: str
    d_model: int
    wte: TableGeometry
    wpe: TableGeometry | None  # None without a position table (rotary models): the reading says why
    wte_vs_wpe: CrossGeometry | None
    reading: str  # one sentence that reads the numbers


@dataclass(frozen=True)
class ExportedFile:
    path: str
    bytes: int


@dataclass(frozen=True)
class ExportResult:
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
