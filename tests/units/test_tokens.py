"""Words to tokens (tokens.py's Vocab): a word as in running text, a split word shown split, token ids, words
with no answer and what is not a word refused with the reason, --exact white space, bytes that are not
characters shown, GPT-2's real vocabulary."""

import json
from pathlib import Path

import pytest

from gpt2emb import piece_lines
from gpt2emb.bpe import to_byte_level
from gpt2emb.choices import Pool
from gpt2emb.errors import UsageError
from gpt2emb.tokens import Vocab, display

from conftest import GPT2_VOCAB, run_cli
from tinymodel import Tiny, save_local


def make_vocab(folder: Path, tokenizer_json: str) -> Vocab:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    (folder / "pieces.txt").write_bytes(piece_lines.written(vocab))
    return Vocab(folder, len(vocab) + 1)


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
    # whitespace that splits is pooled as a split word is: its pieces are whole characters, not byte parts;
    # an ideographic space, which the tiny vocabulary has only as its three bytes, is refused
    with pytest.raises(UsageError, match="raw bytes"):
        vocab.query("\u3000", exact=True, pool=Pool.mean)
    for text in ("  ", " \n"):
        q = vocab.query(text, exact=True, pool=Pool.mean)
        assert q.ids == tuple(tiny.tokenizer.encode(text).ids) and len(q.ids) == 2
        assert q.note is not None and "splits into 2 tokens" in q.note


def test_a_split_into_whole_characters_is_answered(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

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


def test_display_shows_bytes_that_are_not_characters() -> None:
    assert display(to_byte_level(" king")) == " king"
    assert display(to_byte_level("é")) == "é"
    assert display(to_byte_level("é")[:1]) == "\\xc3"  # half of a UTF-8 character


def test_real_gpt2_vocabulary(tmp_path: Path) -> None:
    """The dictionary fast path gives exactly what GPT-2's tokenizer gives, for every word it can answer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(GPT2_VOCAB / "vocab.json"), str(GPT2_VOCAB / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    vocab = make_vocab(tmp_path / "entry", tok.to_str())
    assert vocab.query("king", exact=False, pool=Pool.mean).ids == (5822,)
    assert vocab.query("queen", exact=False, pool=Pool.mean).ids == (16599,)
    gato = vocab.query("gato", exact=False, pool=Pool.mean)
    assert [vocab.token(i) for i in gato.ids] == [" g", "ato"]
    assert vocab.query("🙂", exact=False, pool=Pool.mean).ids == (32485,)  # GPT-2 has " 🙂" as one token
    uber = vocab.query("über", exact=False, pool=Pool.mean)  # ü is cut in two, but "ber" is text
    assert [vocab.token(i) for i in uber.ids] == [" \\xc3", "\\xbc", "ber"] and "splits into 3" in uber.note
    for word in ("😀", "日本"):  # only fragments of their characters' bytes
        with pytest.raises(UsageError, match="raw bytes"):
            vocab.query(word, exact=False, pool=Pool.mean)
    checked = 0
    for piece in json.loads((GPT2_VOCAB / "vocab.json").read_text(encoding="utf-8")):
        text = display(piece)
        if text.strip().isascii() and (text.strip().isalpha() or text.strip().isdigit()) and text.strip():
            for word in (text, text + "s", text.upper()):
                assert vocab.encode(word) == tuple(tok.encode(word).ids), word
            checked += 1
    assert checked > 30000


def test_a_special_token_is_refused_where_the_tokenizer_does_not_list_it(tiny: Tiny, tmp_path: Path) -> None:
    # a folder whose tokenizer.json lists no added tokens: the family's pattern still knows <|endoftext|>,
    # and the vocabulary gives its id
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


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a",
        "\n",
        "a\nb\nb\n\nĠcat\nc",
        "\nx\n\n",
        "é\r\nĠdog\rcat\n\r\nx",  # a \r is part of an entry: only \n ends a line
        "Ġcat\nĠcat",
        "x\nĠcatx\nĠcat",
    ],
)
def test_an_entry_looked_up_in_the_bytes_is_the_split_list_s(tmp_path: Path, text: str) -> None:
    """A warm command reads a few lines of pieces.txt from its bytes (piece_lines.line_of, Vocab._piece), not
    splitting all of them: the same entries, at the same ids, as the list of the file's lines."""
    (tmp_path / "pieces.txt").write_bytes(text.encode("utf-8"))
    listed = text.split("\n")
    lazy = Vocab(tmp_path, 3)
    for i in range(-2, len(listed) + 3):
        expected = listed[i] if 0 <= i < len(listed) else ""
        assert lazy._piece(i) == expected, i
    assert "_pieces" not in lazy.__dict__  # answered from the bytes alone
    for piece in {*listed, "zz", "Ġca", "at", "a\nb", "\ud800", "é\r"}:
        expected_id = listed.index(piece) if piece in listed and piece else None  # "": no entry
        assert Vocab(tmp_path, 3).id_of(piece) == expected_id, repr(piece)
    split = Vocab(tmp_path, 3)
    split._pieces  # noqa: B018  (the list made, as a command that shows every token makes it)
    assert [split._piece(i) for i in range(len(listed) + 1)] == [*listed, ""]
