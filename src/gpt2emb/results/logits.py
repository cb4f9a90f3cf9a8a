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
    """One hidden state at the position read through the final layer norm and the output table (masked:
    through the head, these models having no final layer norm)."""

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
    """A position of the text in the lens grid (--figure): the token there, and each layer's top token (the
    next one; masked: the one at this position)."""

    position: int  # counted in the text's tokens, as `gpt2emb input` shows them
    id: int
    token: str
    cells: tuple[GridCell, ...]  # layer 0 first


@dataclass(frozen=True)
class Head(Document):
    """A masked language model's head as it scored: its tensors in the checkpoint, in the order they apply."""

    dense: str  # the dense layer ("lm_head.dense": its .weight and .bias)
    activation: str  # as transformers names it: "gelu"
    norm: str  # the layer norm ("lm_head.layer_norm": its .weight and .bias, or .gamma and .beta)
    decoder: str  # the decoder's weights: the token table's tensor where tied
    bias: str  # the decoder's bias ("lm_head.bias")


@dataclass(frozen=True)
class MaskScores(Document):
    """The scores at one position a masked language model fills in (a mask of the text, or --at's)."""

    at: int  # the position scored itself, counted in the text's tokens
    top: tuple[Score, ...]
    layers: tuple[LensLayer, ...] | None  # --layers: h0 to the last hidden state, each through the head


@dataclass(frozen=True)
class LogitsResult(Document):
    """`logits TEXT`: the scores of the token after position `at`, h · Wᵀ with W the output table; for a
    masked language model, of the token at position `at` itself, through its head."""

    model: str
    text: str
    tokens: tuple[SentenceToken, ...]  # the text's tokens as typed (what the tokenizer adds is in `added`)
    at: int  # the position scored: the token after it is predicted (masked: the token at it; the first mask)
    table: str  # the output layer: "wte" (tied) or "lm_head" (untied; a masked model's: "decoder")
    stored_as: str  # its tensor's name in the checkpoint (GPT-NeoX: embed_out.weight)
    tied: bool
    formula: str  # "h · wteᵀ" or "h · lm_headᵀ"; masked: "layer_norm(gelu(dense(h))) · wteᵀ + bias"
    vocab_size: int
    top: tuple[Score, ...]
    through_wte: tuple[Score, ...] | None  # --through wte on an untied model: h · wteᵀ
    overlap: int | None  # tokens in both top-k lists (--through wte, untied)
    layers: tuple[LensLayer, ...] | None  # --layers: h0 to the last hidden state
    grid: tuple[GridColumn, ...] | None  # --figure: at most 16 positions, up to `at` (masked: around it)
    added: tuple[Token, ...]  # what the tokenizer puts before a text in use (a BOS token); run with it
    notes: tuple[str, ...]
    masked: bool  # a masked language model: `at` is the position scored itself, through `head`
    head: Head | None  # masked: the head's tensors
    masks: tuple[MaskScores, ...] | None  # masked: each position scored, in order (the first is `at`, `top`)
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)
