"""bpe.py's merge loop gives the tokenizers library's ids on long and repetitive words, as on short ones.

The merge loop is a heap over a linked list of pieces (issue 24: the scan it replaced took 47 s for 10,000
letters). Compared with the library's BPE model on the same pre-token (`model.tokenize`, so that CJK, emoji
and any bytes are compared too, which `Bpe.encode` leaves to the library) and with the library's whole
`encode` where `Bpe.encode` answers; on hand-made merge lists whose answers are known, on a BPE trained here
on runs (it learns aa, aaa, aaaa, abab, ...: overlapping runs are where a heap most easily goes wrong), on
the tiny fixture's tokenizer and on GPT-2's real one.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpt2emb import bpe
from gpt2emb.bpe import Bpe
from units.test_bpe import encoder, real_tokenizer, tokenizer_of

from conftest import FUZZ
from tinymodel import build

UNITS = {  # what long words repeat
    "aaaa": "a",
    "abab": "ab",
    "digits": "0123456789",
    "CJK": "東京大学の日本語",
    "mixed": "aé1" + "Ελλάδα" + "東京🙂_-ß" + "Россия",  # apart: ruff flags Greek in a Latin word
    "emoji": "🙂👍🏽🇫🇷",
    "words": "kingqueenthe",
}
LENGTHS = (2_500, 10_000, 20_000)
REAL = pytest.param(
    "real",
    marks=[pytest.mark.realvocab],
)
VOCABS = ["tiny", "runs", REAL]


def handmade(merges: list[tuple[str, str]]) -> Any:
    """A byte-level BPE of the 256 byte pieces and these merges (in rank order), as a library Tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(bpe._byte_encoder().values())}
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tok


def runs_tokenizer() -> str:
    """A byte-level BPE trained on runs of each unit, 1 to 40 long, and on its prefixes thrice."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    runs = [unit * k for unit in UNITS.values() for k in range(1, 41)]
    heads = [unit[:k] * 3 for unit in UNITS.values() for k in range(1, 10)]
    tok.train_from_iterator(runs + heads, trainer)
    text: str = tok.to_str()
    return text


@functools.cache
def pair(which: str) -> tuple[Bpe, Any]:
    """Our encoder and the library's tokenizer, both from the same tokenizer.json."""
    makers = {"tiny": lambda: build().tokenizer.to_str(), "runs": runs_tokenizer, "real": real_tokenizer}
    text = makers[which]()
    return encoder(text), tokenizer_of(text)


def library_ids(theirs: Any, chars: str) -> list[int]:
    """The library's BPE model alone on one pre-token spelled byte-level."""
    return [t.id for t in theirs.model.tokenize(chars)]


def assert_word(ours: Bpe, theirs: Any, text: str) -> None:
    chars = bpe.to_byte_level(text)
    assert ours.word(chars) == library_ids(theirs, chars), f"{text[:40]!r}... ({len(text)} characters)"


def assert_encode(ours: Bpe, theirs: Any, text: str) -> None:
    """encode gives the library's ids, or declines (CJK, emoji: the caller asks the library)."""
    found = ours.encode(text)
    safe = set(text) <= bpe._classes()[2]
    assert (found is not None) == safe
    if found is not None:
        assert list(found) == theirs.encode(text, add_special_tokens=False).ids, repr(text[:40])


# ---------------------------------------------------------------- known answers


@pytest.mark.parametrize(
    ("merges", "text", "pieces"),
    [
        # the leftmost pair of a run merges first: aaa is "aa a", never "a aa"
        ([("a", "a")], "aaa", ["aa", "a"]),
        ([("a", "a")], "aaaaa", ["aa", "aa", "a"]),
        # (aa, a), pushed at 0 by the first merge, finds (aa, aa) once 2-3 merged: stale, skipped
        ([("a", "a"), ("aa", "a")], "aaaa", ["aa", "aa"]),
        ([("a", "a"), ("aa", "a")], "aaaaa", ["aa", "aaa"]),
        ([("a", "a"), ("aa", "a")], "aaa", ["aaa"]),
        # (aa, a) pushed at 0 now finds (aa, aa), which has a merge too, but a later one: still skipped
        ([("a", "a"), ("aa", "a"), ("aa", "aa")], "aaaaa", ["aa", "aaa"]),
        ([("a", "a"), ("aa", "a"), ("a", "b"), ("aa", "aa")], "aaaaab", ["aa", "aaa", "b"]),
        ([("a", "a"), ("aa", "aa"), ("aaaa", "a")], "a" * 9, ["aaaa", "aaaaa"]),
        # the lowest rank first wherever it is, then the pairs it made with its neighbours
        ([("b", "c"), ("a", "b"), ("a", "bc")], "abc", ["abc"]),
        ([("b", "c"), ("a", "b")], "abcab", ["a", "bc", "ab"]),
        ([("a", "b"), ("b", "a"), ("ab", "ab")], "ababa", ["abab", "a"]),
        ([("b", "a"), ("a", "b"), ("ab", "ab")], "ababa", ["a", "ba", "ba"]),
        # a merge ranked before the merge that makes its left piece: taken as soon as that piece exists
        ([("aa", "b"), ("a", "a")], "aab", ["aab"]),
        ([("aa", "b"), ("a", "a")], "aaab", ["aa", "a", "b"]),
    ],
)
def test_hand_made_merges_give_the_known_pieces(
    merges: list[tuple[str, str]], text: str, pieces: list[str]
) -> None:
    theirs = handmade(merges)
    ours = encoder(theirs.to_str())
    vocab = theirs.get_vocab()
    expected = [vocab[p] for p in pieces]
    assert library_ids(theirs, text) == expected  # the known answer is the library's
    assert ours.word(text) == expected
    assert ours.encode(text) == tuple(expected)


def test_the_runs_tokenizer_learned_overlapping_runs() -> None:
    """The trained vocabulary holds the pieces that make runs hard: aa, aaa, aaaa and abab."""
    theirs = pair("runs")[1]
    vocab = theirs.get_vocab()
    assert {"aa", "aaa", "aaaa", "abab", "0123"} <= set(vocab)
    assert len(library_ids(theirs, "a" * 41)) < 5


# ---------------------------------------------------------------- long and repetitive words


@pytest.mark.parametrize("which", VOCABS)
@pytest.mark.parametrize("kind", UNITS)
def test_long_words_give_the_librarys_ids(which: str, kind: str) -> None:
    ours, theirs = pair(which)
    for length in LENGTHS:
        text = (UNITS[kind] * length)[:length]
        assert_word(ours, theirs, text)
        assert_encode(ours, theirs, text)
        assert_encode(ours, theirs, f"x {text}, {text[: length // 3]}!")


@pytest.mark.parametrize("which", VOCABS)
def test_every_run_length_up_to_200(which: str) -> None:
    """Each length of each run, and a run with another piece around it: the ends of a run are where a
    leftmost-first merge and a rightmost-first one part."""
    ours, theirs = pair(which)
    for unit in UNITS.values():
        for k in range(1, 201, 1 if len(unit) < 3 else 7):
            run = (unit * k)[:k]
            for text in (run, "b" + run, run + "b", "ab" + run + "ba", "1" + run):
                assert_word(ours, theirs, text)


@pytest.mark.parametrize("which", VOCABS)
def test_random_unicode_words(which: str) -> None:
    """Long words of random characters (Latin, Greek, Cyrillic, kana, CJK, emoji), and of a few characters
    (runs by chance)."""
    ours, theirs = pair(which)
    rng = random.Random(24)
    planes = [(0x20, 0x2FF), (0x370, 0x52F), (0x3040, 0x30FF), (0x4E00, 0x9FFF), (0x1F300, 0x1FAFF)]
    for length in (100, 2_500, 20_000):
        spread = "".join(chr(rng.randint(*rng.choice(planes))) for _ in range(length))
        few = "".join(rng.choice("aab1東🙂") for _ in range(length))
        for text in (spread, few):
            assert_word(ours, theirs, text)


# ---------------------------------------------------------------- random texts

# texts of a few characters (runs by chance) and of any characters
FEW = st.sampled_from("aab01 東🙂é'\n")
TEXTS = st.text(FEW, max_size=60) | st.text(st.characters(codec="utf-8"), max_size=60)


@FUZZ
@given(text=TEXTS, repeat=st.integers(1, 30))
def test_random_texts_give_the_librarys_ids(text: str, repeat: int) -> None:
    for which in ("tiny", "runs"):
        ours, theirs = pair(which)
        assert_word(ours, theirs, text * repeat)
        assert_encode(ours, theirs, text * repeat)


@pytest.mark.realvocab
@FUZZ
@given(text=TEXTS, repeat=st.integers(1, 30))
def test_random_texts_give_gpt2s_ids(text: str, repeat: int) -> None:
    ours, theirs = pair("real")
    assert_word(ours, theirs, text * repeat)
    assert_encode(ours, theirs, text * repeat)


def test_a_tokenizer_without_merges_leaves_the_bytes() -> None:
    theirs = handmade([])
    ours = encoder(theirs.to_str())
    for text in ("", "a", "aaaa", "東京"):
        chars = bpe.to_byte_level(text)
        assert ours.word(chars) == library_ids(theirs, chars) == [theirs.get_vocab()[c] for c in chars]
