"""A model's tokenizer files (tokenizer.json, or vocab.json with merges.txt): read, checked by the
tokenizers library, and checked against the rows of its token table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from gpt2emb.errors import BadModel
from gpt2emb.registry import ModelRef
from gpt2emb.store.checkpoint_files import file_label, source_file
from gpt2emb.store.formats import damaged, parse_json, shown
from gpt2emb.tokenizer_library import LibraryFault, library_faults


def tokenizer(ref: ModelRef, commit: str, rows: int) -> tuple[str, dict[str, Any], Any]:
    """The model's tokenizer.json (built from vocab.json and merges.txt where it has none), its parse, and
    the `tokenizers` library's Tokenizer made of it (once: GPT-2's takes a quarter of a second), once the
    library has read it and every id it gives names one of wte's rows."""
    return checked(read(ref, commit), rows)


class Read(NamedTuple):
    """A tokenizer file as the library read it, its ids not yet checked against wte."""

    text: str
    parsed: dict[str, Any]
    library: Any
    label: str


def read(ref: ModelRef, commit: str) -> Read:
    """The tokenizer file read, parsed and made into the library's Tokenizer. A build calls this before it
    starts its fetch thread: a damaged file can make the library's Rust code panic, and its text is silenced
    only while no other thread runs (tokenizer_library.library_faults)."""
    path = source_file(ref, commit, "tokenizer.json")
    label = file_label(ref, "tokenizer.json")
    if path is not None:
        text = _tokenizer_text(path, label)
    else:
        text, label = _from_vocab_and_merges(ref, commit), file_label(ref, "vocab.json")
    text, parsed = _without_dropout(text, parse_json(text, label))
    from tokenizers import Tokenizer

    try:
        with library_faults():
            library = Tokenizer.from_str(text)
            library.encode("a sample text, tokenized once: 1,024 tokens")
    except LibraryFault as e:
        raise damaged(label, f"the tokenizers library cannot read it ({shown(str(e))})") from None
    return Read(text, parsed, library, label)


def checked(tokenizer: Read, rows: int) -> tuple[str, dict[str, Any], Any]:
    """What tokenizer() gives, from a tokenizer read: the library's kind of model is one gpt2emb reads, and
    every id names one of wte's rows."""
    text, parsed, library, label = tokenizer
    # the kind the library made of it (a model without a "type" is whichever its fields fit)
    kind = type(library.model).__name__
    vocab = parsed["model"].get("vocab")
    if kind not in READABLE or not isinstance(vocab, dict):
        raise BadModel(
            f"{label} holds a {kind} tokenizer; gpt2emb reads {', '.join(READABLE[:-1])} and {READABLE[-1]} "
            "tokenizers, whose vocabulary maps each piece to its id: use a model with one of those"
        )
    ids = [(str(p), i) for p, i in vocab.items()]
    ids += [(str(t.get("content")), t.get("id")) for t in parsed.get("added_tokens") or []]
    _check_ids(label, ids, rows)
    return text, parsed, library


def _without_dropout(text: str, parsed: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tokenizer with BPE dropout off. Dropout skips each merge at random, so that a word splits anew on
    every call: a regularizer for training, turned off at inference (Provilkov et al., 2020, BPE-Dropout).
    A tokenizer.json saved with it on holds the same vocabulary and merges; gpt2emb gives the one split they
    make, so that a word has one answer."""
    model = parsed.get("model")
    if not isinstance(model, dict) or not model.get("dropout"):
        return text, parsed
    parsed = {**parsed, "model": {**model, "dropout": None}}
    return json.dumps(parsed), parsed


READABLE = ("BPE", "WordPiece", "WordLevel")  # the tokenizer models whose vocab is a JSON object of ids


def _check_ids(label: str, ids: list[tuple[str, Any]], rows: int) -> None:
    """Each id names one of wte's rows, and no two pieces the same one (a lookup of either would show the
    other's row; an added token is its vocabulary piece again, or has an id of its own)."""
    seen: dict[int, str] = {}
    for piece, i in ids:
        if not isinstance(i, int) or not 0 <= i < rows:
            raise BadModel(
                f"{label} gives the token {shown(piece)} the id {i!r:.20}, but wte has rows 0 to "
                f"{rows - 1}: the tokenizer and the table disagree; save the model and its tokenizer again"
            )
        if seen.setdefault(i, piece) != piece:
            raise BadModel(
                f"{label} gives the id {i} to two tokens, {shown(seen[i])} and {shown(piece)}: an id names "
                "one row of wte; save the model's tokenizer again"
            )


def _tokenizer_text(path: Path, label: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as e:
        raise BadModel(f"cannot read {label}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise damaged(label, f"it is not UTF-8 text (byte {e.start + 1})") from None


def _from_vocab_and_merges(ref: ModelRef, commit: str) -> str:
    vocab, merges = source_file(ref, commit, "vocab.json"), source_file(ref, commit, "merges.txt")
    if vocab is None or merges is None:
        raise BadModel(f"{ref.name} has no tokenizer (tokenizer.json, or vocab.json with merges.txt)")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    try:
        tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    except Exception as e:  # the library's own error type, for a vocab.json or merges.txt it cannot read
        where = f"{file_label(ref, 'vocab.json')} with {file_label(ref, 'merges.txt')}"
        raise damaged(where, f"the tokenizers library cannot read them ({shown(str(e))})") from None
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text: str = tok.to_str()
    return text
