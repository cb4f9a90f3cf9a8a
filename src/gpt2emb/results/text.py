"""Results of input and context: a text as the model receives it.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document, Token
from gpt2emb.results.whole import SentenceToken


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
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)


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
