"""The files an entry adds to the tokenizer's: its added tokens, and the BPE table where gpt2emb's matches.

added.json lists the added tokens, so that a warm command need not parse tokenizer.json for them. bpe.npy
holds the merges for gpt2emb's plain-Python BPE (bpe.py), written only where that BPE is checked to agree
with the tokenizers library. wraps() says which ids a tokenizer puts around a text.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from gpt2emb import bpe
from gpt2emb.tokenizer_library import ADDED_FILE, added_tokens


def written(tokenizer: str, parsed: dict[str, Any], library: Any = None) -> dict[str, bytes | np.ndarray]:
    """The files by name: added.json always, and bpe.npy for a tokenizer that gpt2emb's BPE reproduces.

    Whether bpe.py reproduces the tokenizer is checked here on a sample, and on each one-word entry.
    library is the tokenizers library's Tokenizer of it, when one is made already.
    """
    library = library or _library(tokenizer)
    added = added_tokens(library)
    files: dict[str, bytes | np.ndarray] = {ADDED_FILE: json.dumps(added).encode()}
    rows = bpe.table(parsed)
    if (
        rows is not None
        and bpe.agrees(rows, library, [t["content"] for t in added])
        and _makes_each(library, whole_words(parsed["model"]["vocab"]))
    ):
        files[bpe.FILE] = rows
    return files


def _makes_each(library: Any, entries: dict[str, int]) -> bool:
    """Whether each entry's text is tokenized as that one entry, asked of the library's own BPE model.

    This is bpe.makes_each's question. The library's model, which bpe.py reproduces (checked first), gives
    the same answer in a fifth of the time: 0.4 s for GPT-2's 48,584 one-word entries, not 2 s.
    """
    tokenize = library.model.tokenize
    return all(len(t := tokenize(piece)) == 1 and t[0].id == i for piece, i in entries.items())


def whole_words(vocab: dict[str, int]) -> dict[str, int]:
    """The entries that tokens.Vocab answers a one-word text with, without encoding it (Spelling.whole).

    They are those whose text is one pre-token of ASCII letters or digits, with or without a leading space.
    Such a text's byte-level spelling is the text itself, with its space written "Ġ". So the entries are
    found by their spelling, not each one decoded: 0.01 s for GPT-2's, not 0.09 s. tests/test_bpe.py checks
    that both ways agree.
    """
    return {p: i for p, i in vocab.items() if _WHOLE_WORD.fullmatch(p)}


# The families' _ONE_PRE_TOKEN, as byte-level BPE spells it.
_WHOLE_WORD = re.compile(r"\u0120?(?:[A-Za-z]+|[0-9]+)")


def _library(tokenizer: str) -> Any:
    """The tokenizers library's Tokenizer of a tokenizer.json, imported only when a build needs it."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(tokenizer)


def wraps(tokenizer: str, library: Any = None) -> list[list[int]]:
    """The ids a tokenizer called as usual (special tokens on) puts before and after a text.

    These are RoBERTa's <s> and </s>, BERT's [CLS] and [SEP], and Llama's <s>. GPT-2 puts none. gpt2emb
    shows texts as typed, without them, and says so where they would move the positions.
    """
    tok = library or _library(tokenizer)
    bare = tok.encode("a", add_special_tokens=False).ids
    full = tok.encode("a", add_special_tokens=True).ids
    for i in range(len(full) - len(bare) + 1):
        if full[i : i + len(bare)] == bare:
            return [full[:i], full[i + len(bare) :]]
    return [[], []]
