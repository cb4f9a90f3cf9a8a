"""bpe.py: the plain-Python BPE gives the tokenizers library's ids exactly, or declines (None).

It is compared on the tiny fixture's tokenizer and on GPT-2's real one: every character the module accepts,
in several surroundings, and random texts of mixed scripts, numbers, spaces, contractions and punctuation.

bpe.table declines a tokenizer whose merges name a part missing from its vocabulary. Such a merge is not one
`Bpe` can apply, so `table` must answer None (the tokenizers library then does the encoding) and not crash
while it builds the array. Each of a merge's left part, right part and result is checked on its own."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import bpe, piece_lines
from gpt2emb.bpe import Bpe
from gpt2emb.store import encoder_files
from gpt2emb.tokens import Vocab

from conftest import GPT2_VOCAB
from tinymodel import Tiny

SURROUNDINGS = ("{c}", " {c}", "a{c}b", " {c}{c}x", "{c} 1", "x{c}'s  ", "\n{c}\t {c}")
PIECES = ["king", " queen", "'s", "'ll", "'T", " 2024", "12", "é", " über", "Ελλάδα", " Россия", "—", "“x”",
          "  ", "\n\n", "\t", " ", "!?", "...", "ǅ", "\u2003", "\u00a0", "\x85", "½", "²", "x1", "'",
          "ab'cd"]  # fmt: skip


def tokenizer_of(text: str) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_str(text)


def real_tokenizer() -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(GPT2_VOCAB / "vocab.json"), str(GPT2_VOCAB / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.add_special_tokens(["<|endoftext|>"])
    text: str = tok.to_str()
    return text


def encoder(text: str) -> Bpe:
    parsed = json.loads(text)
    rows = bpe.table(parsed)
    assert rows is not None
    return Bpe(rows, [t["content"] for t in parsed.get("added_tokens") or []])


def write_entry(folder: Path, tokenizer: str, extra: dict[str, bytes | np.ndarray]) -> None:
    """The tokenizer files of a cache entry: tokenizer.json, pieces.txt and the given encoder files."""
    (folder / "tokenizer.json").write_text(tokenizer, encoding="utf-8")
    pieces = piece_lines.written(json.loads(tokenizer)["model"]["vocab"])
    (folder / "pieces.txt").write_bytes(pieces)
    for name, content in extra.items():
        if isinstance(content, np.ndarray):
            np.save(folder / name, content)
        else:
            (folder / name).write_bytes(content)


def random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    safe = sorted(bpe._classes()[2])
    texts = []
    for _ in range(n):
        n_parts = rng.randint(1, 12)
        parts = [rng.choice(PIECES) if rng.random() < 0.7 else rng.choice(safe) for _ in range(n_parts)]
        texts.append("".join(parts))
    return texts


def assert_same(ours: Bpe, theirs: Any, texts: list[str]) -> None:
    for text in texts:
        assert ours.encode(text) == tuple(theirs.encode(text, add_special_tokens=False).ids), repr(text)


@pytest.mark.parametrize("which", ["tiny", "real"])
def test_every_accepted_character_and_random_texts(which: str, tiny: Tiny) -> None:
    text = tiny.tokenizer.to_str() if which == "tiny" else real_tokenizer()
    ours, theirs = encoder(text), tokenizer_of(text)
    chars = sorted(bpe._classes()[2])
    assert len(chars) > 1400  # the Latin, Greek, Cyrillic, Armenian blocks and general punctuation
    assert_same(ours, theirs, [s.format(c=c) for c in chars for s in SURROUNDINGS])
    assert_same(ours, theirs, random_texts(3000, seed=7))


def test_the_chapters_example_on_gpt2s_real_tokenizer() -> None:
    ours = encoder(real_tokenizer())
    # the pieces: O, Bras, il, é, gig, ante
    assert ours.encode("O Brasil é gigante") == (46, 39452, 346, 38251, 12526, 12427)


def test_texts_it_cannot_vouch_for_are_declined(tiny: Tiny) -> None:
    text = json.loads(tiny.tokenizer.to_str())
    text["added_tokens"] = [{"id": 0, "content": "<|endoftext|>", "special": True}]
    ours = encoder(json.dumps(text))
    for declined in ("東京", "a🙂", "x<|endoftext|>y", "\U000e0001", "\u0378"):  # \u0378: unassigned
        assert ours.encode(declined) is None, declined
    assert ours.encode("<|endoftext") is not None


@pytest.mark.parametrize(
    "change",
    [
        {"normalizer": {"type": "NFC"}},
        {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "use_regex": True}},
        {"pre_tokenizer": {"type": "Whitespace"}},
        {"truncation": {"max_length": 4, "strategy": "LongestFirst", "stride": 0, "direction": "Right"}},
        {"model": {"dropout": 0.1}},
        {"model": {"ignore_merges": True}},
        {"model": {"continuing_subword_prefix": "##"}},
    ],
)
def test_only_a_plain_byte_level_bpe_gets_a_table(change: dict[str, Any], tiny: Tiny) -> None:
    text = json.loads(tiny.tokenizer.to_str())
    assert bpe.table(text) is not None
    for key, value in change.items():
        text[key] = {**text[key], **value} if key == "model" else value
    assert bpe.table(text) is None


def test_a_merge_listed_twice_gets_no_table(tiny: Tiny) -> None:
    text = json.loads(tiny.tokenizer.to_str())
    text["model"]["merges"].append(text["model"]["merges"][0])
    assert bpe.table(text) is None


def test_an_entry_uses_it_and_an_older_entry_still_answers(tiny: Tiny, tmp_path: Path) -> None:
    """A built entry holds bpe.npy and added.json and answers without the tokenizers library; an entry
    without them (built by an earlier gpt2emb) answers the same through the library."""
    text = tiny.tokenizer.to_str()
    vocab_of = json.loads(text)["model"]["vocab"]
    files = encoder_files.written(text, json.loads(text))
    assert set(files) == {"added.json", "bpe.npy"}
    new, old = tmp_path / "new", tmp_path / "old"
    for folder, extra in ((new, files), (old, {})):
        folder.mkdir()
        write_entry(folder, text, extra)
    sentence = "the king's cat sat, and 12 queens — 3 dogs!"
    a, b = Vocab(new, len(vocab_of)), Vocab(old, len(vocab_of))
    assert a.tokenize(sentence) == b.tokenize(sentence) == tuple(tiny.tokenizer.encode(sentence).ids)
    assert "_tokenizer" not in a.__dict__ and "_tokenizer" in b.__dict__


def test_the_whole_word_shortcut_is_taken_only_for_gpt2_s_splitter(tiny: Tiny, tmp_path: Path) -> None:
    """A byte-level vocabulary that holds "12" answers "12" with that one token under GPT-2's splitter, but
    a Qwen2-like one splits digits one by one: there the shortcut must not answer, the tokenizer does."""
    from tokenizers import Regex, Tokenizer, pre_tokenizers

    text = json.loads(tiny.tokenizer.to_str())
    text["model"]["vocab"]["12"] = len(text["model"]["vocab"])
    text["model"]["merges"].append(["1", "2"])
    plain = Tokenizer.from_str(json.dumps(text))
    digits = Tokenizer.from_str(json.dumps(text))
    digits.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(r"\p{N}"), "isolated"), pre_tokenizers.ByteLevel(False, use_regex=False)]
    )
    for name, tok in (("plain", plain), ("digits", digits)):
        folder = tmp_path / name
        folder.mkdir()
        raw = tok.to_str()
        write_entry(folder, raw, encoder_files.written(raw, json.loads(raw)))
        vocab = Vocab(folder, tok.get_vocab_size())
        assert vocab.tokenize("12") == tuple(tok.encode("12", add_special_tokens=False).ids)
    assert len(plain.encode("12").ids) == 1 and len(digits.encode("12").ids) == 2


@pytest.mark.parametrize("which", ["tiny", "real"])
def test_whole_words_found_by_spelling_are_those_found_by_decoding(which: str, tiny: Tiny) -> None:
    """encoder_files.whole_words finds the entries that Spelling.whole answers for, by their byte-level
    spelling alone. Decoding each entry and asking Spelling.whole (what tokens.Vocab does) finds the same
    ones, on GPT-2's real vocabulary and on entries made to sit at the edges (two spaces, a space alone,
    letters and digits mixed, a non-ASCII letter, a real space, a line feed)."""
    from gpt2emb.families import BYTE_LEVEL

    text = real_tokenizer() if which == "real" else tiny.tokenizer.to_str()
    vocab = dict(json.loads(text)["model"]["vocab"])
    edges = ["ĠĠking", "Ġ", "Ġk1", "k1", "Ġé", "Ã©", " king", "king\n", "Ġ12", "ĠKING", "Ġ٣", "\uff4b"]
    edges += ["Ċking", "ĠkingĠ", "1Ġ"]
    vocab.update({p: len(vocab) + n for n, p in enumerate(edges)})
    decoded = {p: i for p, i in vocab.items() if BYTE_LEVEL.whole(BYTE_LEVEL.text(p)) == p}
    assert encoder_files.whole_words(vocab) == decoded
    assert len(decoded) > (40_000 if which == "real" else 10)


@pytest.mark.parametrize(
    ("merge", "in_vocab"),
    [
        (["qqq", "x"], "qqqx"),  # the left part is missing
        (["x", "qqq"], "xqqq"),  # the right part is missing
        (["x", "x"], None),  # both parts are there, what they make is missing
    ],
)
def test_a_merge_naming_a_missing_token_gets_no_table(
    merge: list[str], in_vocab: str | None, tiny: Tiny
) -> None:
    text = json.loads(tiny.tokenizer.to_str())
    vocab = text["model"]["vocab"]
    assert bpe.table(text) is not None
    assert "qqq" not in vocab and "xx" not in vocab and "x" in vocab
    if in_vocab is not None:
        vocab[in_vocab] = max(vocab.values()) + 1
    text["model"]["merges"].append(merge)
    assert bpe.table(text) is None
