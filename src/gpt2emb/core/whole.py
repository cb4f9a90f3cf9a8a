"""What context and tying --grad share: a model opened to run whole, its weights folder, a text's tokens."""

from __future__ import annotations

from pathlib import Path

from gpt2emb.core.open import (
    length_limit,
    past_limit,
    vocab_of,
)
from gpt2emb.errors import (
    UsageError,
)
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.whole import SentenceToken
from gpt2emb.store import build, entries, whole_weights
from gpt2emb.store.checkpoint import CheckpointInfo
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Vocab


def weights_folder(ref: ModelRef, info: CheckpointInfo, reporter: Reporter) -> Path:
    """The folder to load the whole model from. What is not on this machine yet is fetched into the HF cache,
    its size said first; offline, that is refused."""
    missing = whole_weights.missing_weights(ref, info)
    if missing:
        reporter.note(
            f"this runs the whole of {ref.name}: fetching all its weights once into the Hugging Face cache, "
            f"{sum(missing.values()) / 1e6:,.1f} MB ({', '.join(missing)})"
        )
    return whole_weights.weights_folder(ref, info)


def open_for_whole(ref: ModelRef, info: CheckpointInfo, reporter: Reporter) -> tuple[OpenedEntry, Vocab]:
    """The cache entry of a model about to run whole. When it is not built yet, the weights are fetched first
    and it is built from them, so nothing is fetched twice; otherwise they are fetched only once the input has
    been checked against its tokenizer."""
    if not entries.has_entry(ref, info.commit):
        weights_folder(ref, info, reporter)
    m = build.open_model(ref, reporter, info.commit)
    return m, vocab_of(m)


def encode(vocab: Vocab, text: str, m: OpenedEntry, what: str) -> tuple[SentenceToken, ...]:
    """A text's tokens as the model receives them: exactly the tokenizer's ids (as typed: no space added; a
    special token keeps the spaces around it as their own tokens, as in use), refused when longer than the
    positions the model learned (a model without a position table has no such limit)."""
    ids = vocab.tokenize(text)
    limit = length_limit(m)
    if limit is not None and len(ids) > limit:
        raise UsageError(f"{what} has {len(ids):,} tokens, but {past_limit(m)}; shorten it")
    return tuple(SentenceToken(p, i, vocab.token(i)) for p, i in enumerate(ids))
