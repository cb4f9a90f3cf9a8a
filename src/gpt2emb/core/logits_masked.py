"""What logits does for a masked language model alone: its masks found in a text, its head's tensors found in
the checkpoint (a checkpoint without them refused), and the hidden states read through that head."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpt2emb.errors import BadModel, UsageError, spelt
from gpt2emb.families import Head
from gpt2emb.quoting import quote
from gpt2emb.registry import ModelRef
from gpt2emb.results.logits import Head as HeadResult
from gpt2emb.results.whole import SentenceToken
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Vocab

EXAMPLE = "Paris is the {} of France."  # the text the refusal of a text without a mask shows


def masks(
    vocab: Vocab, text: str, tokens: tuple[SentenceToken, ...], m: OpenedEntry, head: Head
) -> list[int]:
    """The positions of the text's mask tokens, in order; a text without one is refused, showing how to
    write one for this model."""
    mask = vocab.tokenize(head.mask)
    if len(mask) != 1:
        raise BadModel(
            f"{m.name}'s tokenizer has no {head.mask} token: it makes {len(mask)} tokens of {head.mask}, so "
            f"no text can hold a mask for its head to fill in; its tokenizer.json is not a {m.family.title} "
            "tokenizer's: save the model's tokenizer again"
        )
    found = [t.position for t in tokens if t.id == mask[0]]
    if not found:
        example = EXAMPLE.format(head.mask)
        raise UsageError(
            f"the text {quote(text, 60)} holds no {head.mask}: {m.name} is a masked language model "
            f"({m.family.title}), whose head fills in a masked token rather than the next one; "
            f"write {head.mask} where the word goes, as in: "
            + spelt(f'logits "{example}"', f"logits({example!r})")
        )
    return found


def head_tensors(
    ref: ModelRef, head: Head, names: list[str], classes: tuple[str, str, str]
) -> dict[str, str]:
    """Each tensor the head reads, by its state dict name, to its name in the checkpoint. A checkpoint that
    lacks one (a RobertaModel's or BertModel's, as many sentence models on the Hub are saved) is refused:
    transformers would start that head at random, and its scores would mean nothing."""
    stored = set(names)
    found = {}
    for own, spellings in head.tensors().items():
        name = next((n for n in spellings if n in stored), None)
        if name is None:
            raise UsageError(
                f"{ref.name} has no masked-language head: its checkpoint stores no {spellings[0]}, as a "
                f"checkpoint saved as {classes[1]} stores none (many sentence models are); there is "
                "nothing to score with, and gpt2emb does not start a head at random; use the masked language "
                f"model's checkpoint ({classes[2]})"
            )
        found[own] = name
    return found


def described(head: Head, stored: dict[str, str], config: dict[str, object], decoder: str) -> HeadResult:
    """The head as the result names it: its tensors as the checkpoint stores them (decoder: the decoder's
    weights' name)."""
    bias = stored[head.bias[0]]
    return HeadResult(head.dense, head.activation_of(config), head.norm, decoder, bias)


def formula(result: HeadResult, table: str) -> str:
    return f"layer_norm({result.activation}(dense(h))) · {table}ᵀ + bias"


def read(
    folder: Path,
    m: OpenedEntry,
    head: Head,
    config: dict[str, object],
    ids: tuple[int, ...],
    positions: list[int],
    every_layer: bool,
    label: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The hidden states at positions (in the run: what the tokenizer adds counted) through the head up to the
    decoder, each layer's with every_layer; the decoder's bias; its own weights (None: the token table)."""
    from gpt2emb import heavy

    dense, norm = f"{head.dense}.", f"{head.norm}."
    names = (dense + "weight", dense + "bias", norm + "weight", norm + "bias", head.bias[0])
    return heavy.read_masked(
        folder,
        m.family.classes,
        names,
        head.activation_of(config),
        head.eps_of(config),
        ids,
        positions,
        every_layer,
        label,
    )


def unmasked(token: SentenceToken, head: Head) -> str:
    """The note on an --at that names a token of the text rather than a mask."""
    return (
        f"position {token.position} ({quote(token.token)}) is not a {head.mask}: the model sees its token "
        "there, and the head scores what it makes of it"
    )
