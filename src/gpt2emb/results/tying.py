"""Results of tying: its checks, --compare's comparison and --grad's gradients.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document
from gpt2emb.results.whole import SentenceToken


@dataclass(frozen=True)
class Check(Document):
    name: str
    passed: bool
    detail: str


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
