"""queries.py: a typed word resolved to token ids, or refused with the reason and the way to ask instead.

A word as in running text, a split word shown split, token ids, words with no answer and what is not a word
refused with the reason, --exact white space, the limits of a word and of an id, the edges of the split and
the hints, and a WordPiece vocabulary's splits and unknowns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from gpt2emb.choices import Pool
from gpt2emb.errors import UsageError
from gpt2emb.queries import check_word
from gpt2emb.tokens import Vocab
from vocab_entries import PLAIN, byte_level_entry, make_vocab, wordpiece_entry

from conftest import run_cli
from tinymodel import Tiny, save_local


@pytest.fixture
def vocab(tiny: Tiny, tmp_path: Path) -> Vocab:
    return make_vocab(tmp_path / "entry", tiny.tokenizer.to_str())


def test_a_word_means_the_word_in_running_text(vocab: Vocab, tiny: Tiny) -> None:
    q = vocab.query("king", exact=False, pool=Pool.mean)
    assert q.ids == (tiny.id("king"),) and vocab.token(q.ids[0]) == " king" and q.note == ""
    assert vocab.query(" king", exact=False, pool=Pool.mean).ids == q.ids  # a typed space is not doubled
    for pasted in ("king ", "  king  "):  # nor does one around the word change it (as on stdin)
        assert vocab.query(pasted, exact=False, pool=Pool.mean) == q, repr(pasted)  # its word too
    assert vocab.query(" id:3 ", exact=False, pool=Pool.mean).ids == (3,)
    assert vocab.query("king ", exact=True, pool=Pool.mean).ids == tuple(tiny.tokenizer.encode("king ").ids)
    exact = vocab.query("king", exact=True, pool=Pool.mean)
    assert exact.ids == tuple(tiny.tokenizer.encode("king").ids) and exact.ids != q.ids


def test_a_split_word_is_shown_split_never_cut(vocab: Vocab, tiny: Tiny) -> None:
    expected = tuple(tiny.tokenizer.encode(" gato").ids)
    assert len(expected) > 1
    q = vocab.query("gato", exact=False, pool=Pool.mean)
    assert q.ids == expected
    assert f"splits into {len(expected)} tokens" in q.note and "mean" in q.note
    assert "first piece" in vocab.query("gato", exact=False, pool=Pool.first).note
    with pytest.raises(UsageError, match="is not one token"):
        vocab.query("gato", exact=False, pool=Pool.strict)


def test_token_ids(vocab: Vocab) -> None:
    assert vocab.query("id:5", exact=False, pool=Pool.mean).ids == (5,)
    for bad, message in (
        ("id:-1", "does not exist"),
        ("id:99999", "does not exist"),
        ("id:abc", "not a token id"),
        ("id:", "not a token id"),
    ):
        with pytest.raises(UsageError, match=message):
            vocab.query(bad, exact=False, pool=Pool.mean)


@pytest.mark.parametrize("word", ["", "   ", "x" * 5000])
def test_words_that_have_no_answer(vocab: Vocab, word: str) -> None:
    with pytest.raises(UsageError):
        vocab.query(word, exact=False, pool=Pool.mean)


@pytest.mark.parametrize(
    ("word", "exact", "message"),
    [
        ("\x07", False, "control character U\\+0007"),
        ("a\x1bb", True, "control character U\\+001B"),
        ("<|endoftext|>", False, "special token, not a word.*id:0"),  # the tiny vocabulary's id
        (" <|endoftext|> ", True, "special token"),
        ("🙂", False, "raw bytes"),  # the tiny vocabulary has no token for it: only its four bytes
        ("日本", False, "raw bytes"),
        ("supercalifragilisticexpialidocious", False, "splits into [0-9]+ tokens .*: more than the 8"),
    ],
)
def test_what_is_not_a_word_is_refused_with_the_reason(
    vocab: Vocab, word: str, exact: bool, message: str
) -> None:
    for pool in Pool:
        with pytest.raises(UsageError, match=message):
            vocab.query(word, exact=exact, pool=pool)


def test_whitespace_tokens_with_exact(vocab: Vocab, tiny: Tiny) -> None:
    assert vocab.query("\n", exact=True, pool=Pool.mean).ids == tuple(tiny.tokenizer.encode("\n").ids)
    assert len(vocab.query("\t", exact=True, pool=Pool.mean).ids) == 1
    # White space that splits is pooled as a split word is, because its pieces are whole characters. An
    # ideographic space is refused, because the tiny vocabulary has it only as its three bytes.
    with pytest.raises(UsageError, match="raw bytes"):
        vocab.query("\u3000", exact=True, pool=Pool.mean)
    for text in ("  ", " \n"):
        q = vocab.query(text, exact=True, pool=Pool.mean)
        assert q.ids == tuple(tiny.tokenizer.encode(text).ids) and len(q.ids) == 2
        assert q.note is not None and "splits into 2 tokens" in q.note


def test_a_split_into_whole_characters_is_answered(tmp_path: Path) -> None:
    from tokenizers import models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok.train_from_iterator(["é " * 50 + " caf" * 50], trainers.BpeTrainer(initial_alphabet=alphabet))
    vocab = make_vocab(tmp_path / "entry", tok.to_str())
    q = vocab.query("café", exact=False, pool=Pool.mean)
    assert [vocab.token(i) for i in q.ids] == [" caf", "é"]  # é is two bytes, merged into one token
    assert "splits into 2 tokens" in q.note


def test_a_word_with_some_whole_characters_is_answered_with_its_bytes_shown(vocab: Vocab, tiny: Tiny) -> None:
    q = vocab.query("kingé", exact=False, pool=Pool.mean)  # the tiny BPE never saw é: " king" + its 2 bytes
    assert q.ids == (tiny.id("king"), *tiny.tokenizer.encode("é").ids) and len(q.ids) == 3
    assert '(" king" + "\\xc3" + "\\xa9")' in q.note  # as the tables show them: one backslash


def test_a_special_token_is_refused_where_the_tokenizer_does_not_list_it(tiny: Tiny, tmp_path: Path) -> None:
    # This folder's tokenizer.json lists no added tokens. The family's pattern still knows <|endoftext|>, and
    # the vocabulary gives its id.
    folder = save_local(tiny, tmp_path / "model")
    doc = json.loads((folder / "tokenizer.json").read_text())
    doc["added_tokens"] = []
    (folder / "tokenizer.json").write_text(json.dumps(doc))
    result = run_cli("vector", "<|endoftext|>", "-m", str(folder))
    assert result.exit_code == 2
    assert "<|endoftext|> is a special token, not a word: ask for its row by id (id:0)" in result.stderr
    assert run_cli("vector", "king", "-m", str(folder)).exit_code == 0
    other = run_cli("vector", "<|im_start|>", "-m", str(folder))  # another tokenizer's special token
    assert other.exit_code == 2 and "this model's vocabulary has no such token" in other.stderr


def test_a_word_may_have_1000_characters_and_no_more() -> None:
    assert check_word("x" * 1000, exact=False) is None
    with pytest.raises(UsageError) as refused:
        check_word("x" * 1001, exact=False)
    assert str(refused.value) == "a word of 1,001 characters is too long: at most 1,000"


def test_an_id_may_be_written_with_up_to_30_digits() -> None:
    assert check_word("id:" + "0" * 29 + "7", exact=False) == 7  # 30 digits: read as the number it is
    with pytest.raises(UsageError) as refused:  # 31: past any vocabulary, whatever their value
        check_word("id:" + "0" * 30 + "7", exact=False)
    assert str(refused.value) == f"id:{'0' * 30} does not exist: token ids are 0 or more"


def test_an_empty_word_is_refused_with_exact_too() -> None:
    with pytest.raises(UsageError) as refused:
        check_word("", exact=True)
    assert str(refused.value) == "an empty word has no token; type a word"


def test_a_control_character_is_named_after_the_word_s_first_40_characters() -> None:
    with pytest.raises(UsageError) as refused:
        check_word("a" * 45 + "\x07", exact=False)
    assert str(refused.value).startswith(f'"{"a" * 40}" holds the control character U+0007: ')


def test_an_empty_word_names_the_option_that_looks_up_whitespace(hub: Any) -> None:
    # Found by seed 13. The advice names the option in the caller's words: exact=True from Python, and
    # --exact on the command line.
    with pytest.raises(UsageError) as refused:
        check_word("  ", exact=False)
    assert str(refused.value) == (
        "an empty word has no token; type a word, or use exact=True to look up whitespace itself"
    )
    from conftest import run_cli

    result = run_cli("vector", " ")
    assert result.exit_code == 2
    assert "an empty word has no token; type a word, or use --exact to look up whitespace itself" in " ".join(
        result.stderr.split()
    )


def test_an_id_goes_up_to_the_last_row(tmp_path: Path) -> None:
    vocab, _ = byte_level_entry(tmp_path / "entry", n_rows=300)  # rows past the vocabulary are rows too
    assert vocab.query("id:299", exact=False, pool=Pool.mean).ids == (299,)
    with pytest.raises(UsageError) as refused:
        vocab.query("id:300", exact=False, pool=Pool.mean)
    assert str(refused.value) == "id:300 does not exist: token ids go from 0 to 299"


def test_a_word_may_split_into_8_pieces_and_no_more(tmp_path: Path) -> None:
    vocab, ids = byte_level_entry(tmp_path / "entry")
    q = vocab.query("abcdefgh", exact=False, pool=Pool.mean)
    assert q.ids == (ids["Ġa"], *(ids[ch] for ch in "bcdefgh"))
    assert q.note == (
        '" abcdefgh" splits into 8 tokens (" a" + "b" + "c" + "d" + "e" + "f" + "g" + "h"); '
        "using the mean of their rows (pool)"
    )
    with pytest.raises(UsageError) as refused:
        vocab.query("abcdefghi", exact=False, pool=Pool.mean)
    assert str(refused.value) == (
        '" abcdefghi" splits into 9 tokens (" a" + "b" + "c" + "d" + "e" + "f" + "g" + "h" + ...): more than '
        "the 8 a word may have here; ask for a piece by its id (id:N)"
    )


def test_a_word_that_is_a_piece_of_its_own_text_gets_no_hint(tmp_path: Path) -> None:
    vocab, ids = byte_level_entry(tmp_path / "entry")
    q = vocab.query("xy", exact=False, pool=Pool.mean)
    assert q.ids == (ids["Ġ"], ids["xy"])
    assert q.note == '" xy" splits into 2 tokens (" " + "xy"); using the mean of their rows (pool)'


def test_the_hints_for_a_piece_typed_as_the_vocabulary_writes_it(tmp_path: Path) -> None:
    vocab, ids = byte_level_entry(tmp_path / "entry")
    for _ in range(20):  # many words looked up first: the lookups switch from a scan to a dict (at 17)
        assert vocab.query("king", exact=False, pool=Pool.mean).ids == (ids["Ġking"],)
    # "Ġking" typed is the text " Ġking": the space, Ġ's two bytes (C4 A0: "Ä", "ł"), k, i, n, g
    q = vocab.query("Ġking", exact=False, pool=Pool.mean)
    assert q.ids == tuple(ids[p] for p in ("Ġ", "Ä", "ł", "k", "i", "n", "g"))
    assert q.note.endswith(
        f'; "Ġking" is how this vocabulary writes the token " king": ask for it by its id '
        f"(id:{ids['Ġking']}) or as king"
    )
    # "Ã©" typed is " " and the bytes of Ã (C3 83) and © (C2 A9), with no whole character. It is refused
    # with the hint to ask for "é", which this vocabulary has only inside a word (--exact).
    with pytest.raises(UsageError) as refused:
        vocab.query("Ã©", exact=False, pool=Pool.mean)
    assert str(refused.value) == (
        '" Ã©" has no token that holds even one of its characters whole: the tokenizer sees only raw bytes '
        '(" \\xc3" + "\\x83" + "\\xc2" + "\\xa9"), and rows of byte fragments do not make a word; ask for '
        f'a piece by its id (id:N); "Ã©" is how this vocabulary writes the token "é": ask for it by its id '
        f"(id:{ids['Ã©']}) or as é with exact=True"
    )


def test_a_word_of_plain_text_entries_alone_is_answered(tmp_path: Path) -> None:
    """An entry stored as plain text holds whole characters: a word made of two of them is a split like any
    other, not a word of byte fragments."""
    vocab, ids = byte_level_entry(tmp_path / "entry")
    assert vocab.token(ids[PLAIN]) == PLAIN and vocab.holds_a_character(ids[PLAIN])
    q = vocab.query(PLAIN * 2, exact=True, pool=Pool.mean)
    assert q.ids == (ids[PLAIN], ids[PLAIN])
    pieces = f'("{PLAIN}" + "{PLAIN}")'
    assert q.note == f'"{PLAIN * 2}" splits into 2 tokens {pieces}; using the mean of their rows (pool)'


def test_a_wordpiece_split_is_the_pieces_alone(tmp_path: Path) -> None:
    vocab = wordpiece_entry(tmp_path / "entry")
    q = vocab.query("playing", exact=False, pool=Pool.mean)  # play + ##ing; no [CLS] nor [SEP] around them
    assert q.ids == (5, 6)
    assert q.note == '"playing" splits into 2 tokens (" play" + "ing"); using the mean of their rows (pool)'
    assert vocab.tokenize("kings play") == (4, 7, 5)


def test_a_wordpiece_unknown_is_refused(tmp_path: Path) -> None:
    vocab = wordpiece_entry(tmp_path / "entry")
    with pytest.raises(UsageError) as refused:
        vocab.query("kingx", exact=False, pool=Pool.mean)  # no ##x: the whole word is [UNK]
    assert str(refused.value) == (
        '"kingx" holds characters this vocabulary has no piece for: the tokenizer makes [UNK] (id:1) of it, '
        "its token for what it cannot spell; type another word"
    )


def test_a_wordpiece_word_start_is_refused_with_exact(tmp_path: Path) -> None:
    vocab = wordpiece_entry(tmp_path / "entry")
    assert vocab.query("ing", exact=True, pool=Pool.mean).ids == (6,)  # "##ing"
    with pytest.raises(UsageError) as refused:
        vocab.query("play", exact=True, pool=Pool.mean)  # no ##play: only as a word's start
    assert str(refused.value) == (
        '"play" cannot be spelt in this vocabulary without starting a word, as exact=True asks: WordPiece '
        "spells it only as a word's start, or not at all; drop exact=True for the word as it starts one, or "
        'ask for a piece by its id (id:N); "play" is how this vocabulary writes the token " play": ask for '
        "it by its id (id:5) or as play"
    )
