import json
from pathlib import Path

import pytest

from gpt2emb import store
from gpt2emb.choices import Pool
from gpt2emb.errors import UsageError
from gpt2emb.tokens import Vocab, display, to_byte_level

from conftest import SHARED_VOCAB
from tinymodel import Tiny


def make_vocab(folder: Path, tokenizer_json: str) -> Vocab:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    (folder / "pieces.txt").write_text(store._pieces_text(vocab), encoding="utf-8")
    return Vocab(folder, len(vocab) + 1)


@pytest.fixture
def vocab(tiny: Tiny, tmp_path: Path) -> Vocab:
    return make_vocab(tmp_path / "entry", tiny.tokenizer.to_str())


def test_a_word_means_the_word_in_running_text(vocab: Vocab, tiny: Tiny) -> None:
    q = vocab.query("king", exact=False, pool=Pool.mean)
    assert q.ids == (tiny.id("king"),) and vocab.token(q.ids[0]) == " king" and q.note == ""
    assert vocab.query(" king", exact=False, pool=Pool.mean).ids == q.ids  # a typed space is not doubled
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


def test_special_token_and_odd_text(vocab: Vocab, tiny: Tiny) -> None:
    assert vocab.query("<|endoftext|>", exact=False, pool=Pool.mean).ids == (tiny.vocab["<|endoftext|>"],)
    for word in ("\x07", "日本", "🙂", "a\tb"):
        q = vocab.query(word, exact=False, pool=Pool.mean)
        assert q.ids == tuple(tiny.tokenizer.encode(" " + word).ids)


def test_display_shows_bytes_that_are_not_characters() -> None:
    assert display(to_byte_level(" king")) == " king"
    assert display(to_byte_level("é")) == "é"
    assert display(to_byte_level("é")[:1]) == "\\xc3"  # half of a UTF-8 character


@pytest.mark.skipif(not SHARED_VOCAB.is_dir(), reason="needs ../shared/gpt2-vocab")
def test_real_gpt2_vocabulary(tmp_path: Path) -> None:
    """The dictionary fast path gives exactly what GPT-2's tokenizer gives, for every word it can answer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(SHARED_VOCAB / "vocab.json"), str(SHARED_VOCAB / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    vocab = make_vocab(tmp_path / "entry", tok.to_str())
    assert vocab.query("king", exact=False, pool=Pool.mean).ids == (5822,)
    assert vocab.query("queen", exact=False, pool=Pool.mean).ids == (16599,)
    gato = vocab.query("gato", exact=False, pool=Pool.mean)
    assert [vocab.token(i) for i in gato.ids] == [" g", "ato"]
    checked = 0
    for piece in json.loads((SHARED_VOCAB / "vocab.json").read_text(encoding="utf-8")):
        text = display(piece)
        if text.strip().isascii() and (text.strip().isalpha() or text.strip().isdigit()) and text.strip():
            for word in (text, text + "s", text.upper()):
                assert vocab.encode(word) == tuple(tok.encode(word).ids), word
            checked += 1
    assert checked > 30000
