"""Results of logits: the model's scores for the next token, and every layer read through the output layer.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document, Token
from gpt2emb.results.whole import SentenceToken


@dataclass(frozen=True)
class Score(Document):
    """A token of the vocabulary as one table scored it."""

    rank: int  # 1 for the highest logit; ties ranked by token id
    id: int
    token: str
    logit: float
    probability: float  # softmax over the whole vocabulary; 0 where it underflows


@dataclass(frozen=True)
class LensLayer(Document):
    """One hidden state at the position read through the final layer norm and the output table."""

    layer: int  # 0 is h0; the last is the model's last hidden state (its row equals `top`)
    top: tuple[Score, ...]  # the 5 best tokens at this layer
    final_probability: float  # the probability here of the last layer's top token
    final_rank: int  # its rank here (1: this layer's top token too)


@dataclass(frozen=True)
class GridCell(Document):
    layer: int
    id: int  # the top token of this layer at this position
    token: str  # whole (the figure cuts a long one short)
    probability: float


@dataclass(frozen=True)
class GridColumn(Document):
    """A position of the text in the lens grid (--figure): the token there, and each layer's top token."""

    position: int  # counted in the text's tokens, as `gpt2emb input` shows them
    id: int
    token: str
    cells: tuple[GridCell, ...]  # layer 0 first


@dataclass(frozen=True)
class LogitsResult(Document):
    """`logits TEXT`: the scores of the token after position `at`, h · Wᵀ with W the output table."""

    model: str
    text: str
    tokens: tuple[SentenceToken, ...]  # the text's tokens as typed (what the tokenizer adds is in `added`)
    at: int  # the position scored: the token after it is predicted
    table: str  # the output layer: "wte" (tied) or "lm_head" (untied)
    stored_as: str  # its tensor's name in the checkpoint (GPT-NeoX: embed_out.weight)
    tied: bool
    formula: str  # "h · wteᵀ" or "h · lm_headᵀ"
    vocab_size: int
    top: tuple[Score, ...]
    through_wte: tuple[Score, ...] | None  # --through wte on an untied model: h · wteᵀ
    overlap: int | None  # tokens in both top-k lists (--through wte, untied)
    layers: tuple[LensLayer, ...] | None  # --layers: h0 to the last hidden state
    grid: tuple[GridColumn, ...] | None  # --figure: the text's last positions (at most 16), up to `at`
    added: tuple[Token, ...]  # what the tokenizer puts before a text in use (a BOS token); run with it
    notes: tuple[str, ...]
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)
