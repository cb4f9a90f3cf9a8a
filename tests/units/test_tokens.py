"""tokens.py's Vocab: a token's entry and text, lookups that need no tokenizer, and the tokenizer's faults.

How a token without a vocabulary entry is shown (an added token by its text, a row past the tokenizer by its
id), which rows start a word, entries read from pieces.txt's bytes, GPT-2's real vocabulary encoded as its
tokenizer encodes it, a text that is no Unicode, a damaged tokenizer, and a WordPiece word found without the
tokenizer.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest
from tokenizers import AddedToken, Tokenizer

from gpt2emb import piece_lines
from gpt2emb.bpe import to_byte_level
from gpt2emb.choices import Pool
from gpt2emb.errors import BadModel, UsageError
from gpt2emb.tokens import Vocab, display
from vocab_entries import PIECES, byte_level_entry, make_vocab, wordpiece_entry

from conftest import GPT2_VOCAB
from tinymodel import Tiny


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


def entry_with_added(tiny: Tiny, folder: Path, added: list[str], extra_rows: int) -> tuple[Vocab, int]:
    """An entry whose tokenizer has tokens added past its vocabulary, and extra_rows rows past those; and
    the first added id."""
    tok = Tokenizer.from_str(tiny.tokenizer.to_str())
    first = tok.get_vocab_size(with_added_tokens=True)
    tok.add_tokens([AddedToken(t, special=False) for t in added])
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    vocab = json.loads(tok.to_str())["model"]["vocab"]
    (folder / "pieces.txt").write_bytes(piece_lines.written(vocab))
    return Vocab(folder, first + len(added) + extra_rows), first


def test_an_added_token_is_shown_by_its_text_and_a_row_past_it_by_its_id(tiny: Tiny, tmp_path: Path) -> None:
    added = ["<|mine|>", "another one"]
    vocab, first = entry_with_added(tiny, tmp_path / "entry", added, extra_rows=2)
    assert first == len(tiny.vocab)  # the added tokens have no vocabulary entry
    shown = [vocab.token(first + i) for i in range(len(added) + 2)]
    assert shown == [*added, f"<id {first + 2}>", f"<id {first + 3}>"]
    assert vocab.token(first) == "<|mine|>"  # asked again: the same
    pieces, texts = vocab.texts()
    assert pieces[first:] == [""] * 4 and texts[first:] == [""] * 4


def test_an_added_token_stands_for_its_own_text(tiny: Tiny, tmp_path: Path) -> None:
    """An added token has no vocabulary entry, so what it holds is read from its own text.

    Its text decides whether it is white space and whether it holds a character. A row past the tokenizer
    holds nothing.
    """
    vocab, first = entry_with_added(tiny, tmp_path / "entry", ["\u3000\u3000", "<|mine|>"], extra_rows=1)
    assert [vocab.white_space(first + i) for i in range(3)] == [True, False, False]
    assert [vocab.holds_a_character(first + i) for i in range(3)] == [False, True, False]


def test_token_0_is_shown_by_its_text(tmp_path: Path) -> None:
    vocab, ids = byte_level_entry(tmp_path / "entry")
    assert ids["Ġa"] == 0
    assert [vocab.token(0), vocab.token(ids["Ġking"]), vocab.token(ids["Ã©"])] == [" a", " king", "é"]
    assert vocab.holds_a_character(0)


def test_every_row_has_one_text_and_a_fragment_is_no_whole_word(tmp_path: Path) -> None:
    vocab, ids = byte_level_entry(tmp_path / "entry")  # as many rows as pieces
    pieces, texts = vocab.texts()
    assert pieces == PIECES and len(texts) == vocab.n_rows == 265
    leading, whole = vocab.word_starts
    assert len(leading) == len(whole) == 265
    starts = {p for p, yes in zip(PIECES, leading, strict=True) if yes}
    assert starts == {"Ġa", "Ġ", "Ġk", "Ġki", "Ġkin", "Ġking", "ĠÃ"}
    # " " holds only the space, and " \xc3" holds half a character, so neither is a whole word.
    assert {p for p, yes in zip(PIECES, whole, strict=True) if yes} == {"Ġa", "Ġk", "Ġki", "Ġkin", "Ġking"}
    assert texts[ids["ĠÃ"]] == " \\xc3"


def test_a_text_that_is_no_unicode_is_refused_with_its_start(tmp_path: Path) -> None:
    vocab, _ = byte_level_entry(tmp_path / "entry")
    with pytest.raises(UsageError) as refused:
        vocab.tokenize("a" * 50 + "\udcff")
    assert str(refused.value).startswith(f'"{"a" * 40}"... is not Unicode text: it holds U+DCFF, ')


def test_a_library_fault_while_encoding_is_a_damaged_model(tmp_path: Path) -> None:
    vocab, _ = byte_level_entry(tmp_path / "entry")

    class Failing:
        def encode(self, text: str, add_special_tokens: bool) -> Any:
            raise ValueError("a damaged merge")

    vocab.__dict__["_tokenizer"] = Failing()  # what the cached property would have loaded
    with pytest.raises(BadModel) as refused:
        vocab.tokenize("a b")  # two pre-tokens: no shortcut, no bpe.npy: the library
    assert str(refused.value) == (
        'the tokenizers library fails on "a b" with this model\'s tokenizer.json (a damaged merge): the '
        "tokenizer is damaged; save the model's tokenizer again"
    )


def test_a_library_fault_on_a_long_text_quotes_its_first_40_characters(tmp_path: Path) -> None:
    # Found by seed 13. It is test_a_library_fault_while_encoding_is_a_damaged_model on a text of 41
    # characters.
    vocab, _ = byte_level_entry(tmp_path / "entry")

    class Failing:
        def encode(self, text: str, add_special_tokens: bool) -> Any:
            raise ValueError("a damaged merge")

    vocab.__dict__["_tokenizer"] = Failing()
    text = "a b" + "c" * 38  # 41 characters
    with pytest.raises(BadModel) as refused:
        vocab.tokenize(text)
    assert str(refused.value).startswith(f'the tokenizers library fails on "{text[:40]}"... with this model')


def test_a_pickle_in_place_of_bpe_npy_is_never_unpickled(tmp_path: Path) -> None:
    vocab, _ = byte_level_entry(tmp_path / "entry")
    (tmp_path / "entry" / "added.json").write_text("[]", encoding="utf-8")
    marker = tmp_path / "unpickled"

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return os.mkdir, (str(marker),)

    (tmp_path / "entry" / "bpe.npy").write_bytes(pickle.dumps(Payload()))
    with contextlib.suppress(Exception):  # refused, however: what is pinned is that nothing ran
        vocab.tokenize("a b")  # two pre-tokens: no shortcut, so bpe.npy is loaded
    assert not marker.exists()


def test_a_wordpiece_word_is_found_without_the_tokenizer(tmp_path: Path) -> None:
    vocab = wordpiece_entry(tmp_path / "entry")
    assert vocab.query("king", exact=False, pool=Pool.mean).ids == (4,)
    assert vocab.tokenize("play") == (5,)
    assert "_tokenizer" not in vocab.__dict__  # the tokenizers library was never asked: pieces.txt answered
