"""tokens.py pinned where a mutation run (scripts/mutate.py) found it loose: how a token without a vocabulary
entry is shown (an added token by its text, a row past the tokenizer by its id), the limits of a word and of
an id, the messages' quoting, the tokenizers library's faults, the edges of the split and the hints, and
what a WordPiece vocabulary answers without its tokenizer. Each answer is worked out by hand from a
vocabulary the test itself lays out (which pieces, which merges), never read back from tokens.py."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, processors

from gpt2emb import piece_lines
from gpt2emb.choices import Pool
from gpt2emb.errors import BadModel, UsageError
from gpt2emb.families.bert import WordPiece
from gpt2emb.tokens import LibraryFault, Vocab, check_word, library_faults, quote

from tinymodel import Tiny


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


# ---------------------------------------------------------------- before any model: check_word, quote


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


def test_quote_escapes_control_characters_and_cuts_a_long_text() -> None:
    # U+0007 and U+0085 are below 256: \xNN; U+2028 (a line separator) is not: \uNNNN; a space stays
    assert quote("a\x07\x85\u2028 b") == '"a\\x07\\x85\\u2028 b"'
    assert quote("abcdef", 3) == '"abc"...'
    assert quote("abc", 3) == '"abc"'


# ---------------------------------------------------------------- the tokenizers library's faults


def test_library_faults_silences_descriptor_2_in_a_process_of_one_thread() -> None:
    # in a process of its own: this one runs the fake Hub's threads
    code = (
        "import os\nfrom gpt2emb.tokens import library_faults\nwith library_faults():\n"
        "    os.write(2, b\"thread '<unnamed>' panicked at a Rust backtrace\\n\")\nos.write(2, b'after\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "after\n")


def test_library_faults_makes_one_fault(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(LibraryFault, match=r"^no such piece$"), library_faults():
        raise ValueError("no such piece")

    class PanicException(BaseException):  # what pyo3 raises for a Rust panic: no Exception
        pass

    with pytest.raises(LibraryFault, match=r"^it panicked$"), library_faults():
        raise PanicException("it panicked")
    with pytest.raises(KeyboardInterrupt), library_faults():
        raise KeyboardInterrupt  # an interrupt stays one
    os.write(2, b"after\n")  # descriptor 2 is itself again
    assert capfd.readouterr().err == "after\n"


def test_library_faults_leaves_descriptor_2_alone_while_another_thread_runs(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Descriptor 2 is the whole process's: pointed at /dev/null, what another thread prints (a batch's
    reader, a notebook's own threads) would be lost: it is left alone while one runs."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with library_faults():
            os.write(2, b"printed by another thread meanwhile\n")
        with pytest.raises(LibraryFault, match=r"^no such piece$"), library_faults():
            raise ValueError("no such piece")
    finally:
        stop.set()
        other.join()
    assert capfd.readouterr().err == "printed by another thread meanwhile\n"


# ---------------------------------------------------------------- a byte-level vocabulary laid out here

# The byte alphabet in byte order (GPT-2's mapping), after one piece of id 0 that is not a single byte
# (" a"), then the pieces the merges below make. Known answers, from the merges alone:
#   " abcdefgh" -> " a" b c d e f g h (8 pieces), " abcdefghi" 9;
#   " xy" -> " " + "xy" (no merge puts x after a space); " king" one piece; "é" (C3 A9) one piece;
#   " \xc3" (a space and half of é) a piece that starts a word but holds no whole character.
_MERGES = [("Ġ", "a"), ("x", "y"), ("Ġ", "k"), ("Ġk", "i"), ("Ġki", "n"), ("Ġkin", "g")]
_MERGES += [("Ã", "©"), ("Ġ", "Ã")]


def gpt2_byte_alphabet() -> list[str]:
    """GPT-2's character for each byte, in byte order (its encoder.py's bytes_to_unicode): the printable
    Latin-1 bytes stand for themselves, the others for 256, 257, ... in order."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = iter(range(256, 512))
    return [chr(b) if b in kept else chr(next(moved)) for b in range(256)]


_PLAIN = "<☃>"  # an entry stored as plain text (☃ is no character of the byte alphabet), added as a token
_PIECES = ["Ġa", *gpt2_byte_alphabet(), *(a + b for a, b in _MERGES[1:]), _PLAIN]


def byte_level_entry(folder: Path, n_rows: int | None = None) -> tuple[Vocab, dict[str, int]]:
    """An entry (tokenizer.json and pieces.txt, nothing else: tokens.py's oldest layout) of the vocabulary
    above, with n_rows rows (default: one per piece); and the vocabulary."""
    vocab = {p: i for i, p in enumerate(_PIECES)}
    assert len(vocab) == len(_PIECES) == 265
    tok = Tokenizer(models.BPE(vocab, _MERGES))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.add_tokens([AddedToken(_PLAIN, special=False)])
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    (folder / "pieces.txt").write_bytes(piece_lines.written(vocab))
    return Vocab(folder, len(vocab) if n_rows is None else n_rows), vocab


def test_token_0_is_shown_by_its_text(tmp_path: Path) -> None:
    vocab, ids = byte_level_entry(tmp_path / "entry")
    assert ids["Ġa"] == 0
    assert [vocab.token(0), vocab.token(ids["Ġking"]), vocab.token(ids["Ã©"])] == [" a", " king", "é"]
    assert vocab.holds_a_character(0)


def test_every_row_has_one_text_and_a_fragment_is_no_whole_word(tmp_path: Path) -> None:
    vocab, ids = byte_level_entry(tmp_path / "entry")  # as many rows as pieces
    pieces, texts = vocab.texts()
    assert pieces == _PIECES and len(texts) == vocab.n_rows == 265
    leading, whole = vocab.word_starts
    assert len(leading) == len(whole) == 265
    starts = {p for p, yes in zip(_PIECES, leading, strict=True) if yes}
    assert starts == {"Ġa", "Ġ", "Ġk", "Ġki", "Ġkin", "Ġking", "ĠÃ"}
    # " " holds only the space, " \xc3" half a character: neither is a whole word
    assert {p for p, yes in zip(_PIECES, whole, strict=True) if yes} == {"Ġa", "Ġk", "Ġki", "Ġkin", "Ġking"}
    assert texts[ids["ĠÃ"]] == " \\xc3"


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
    # "Ã©" typed is " " + the bytes of Ã (C3 83) and © (C2 A9): no whole character, refused with the hint
    # to ask for "é", which this vocabulary has only inside a word (--exact)
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
    assert vocab.token(ids[_PLAIN]) == _PLAIN and vocab.holds_a_character(ids[_PLAIN])
    q = vocab.query(_PLAIN * 2, exact=True, pool=Pool.mean)
    assert q.ids == (ids[_PLAIN], ids[_PLAIN])
    pieces = f'("{_PLAIN}" + "{_PLAIN}")'
    assert q.note == f'"{_PLAIN * 2}" splits into 2 tokens {pieces}; using the mean of their rows (pool)'


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


# ---------------------------------------------------------------- a WordPiece vocabulary laid out here

_WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "king", "play", "##ing", "##s"]


def wordpiece_entry(folder: Path) -> Vocab:
    """A BERT-style entry as the cache builds one (tokenizer.json, pieces.txt, added.json): an uncased
    WordPiece with [CLS] text [SEP] around a text, the four specials its only added tokens."""
    vocab = {p: i for i, p in enumerate(_WORDPIECE)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens([AddedToken(s, special=True) for s in _WORDPIECE[:4]])
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    (folder / "pieces.txt").write_bytes(piece_lines.written(vocab))
    added = [{"content": s, "id": vocab[s], "special": True} for s in _WORDPIECE[:4]]
    (folder / "added.json").write_text(json.dumps(added), encoding="utf-8")
    return Vocab(folder, len(vocab), words=WordPiece())


def test_a_wordpiece_word_is_found_without_the_tokenizer(tmp_path: Path) -> None:
    vocab = wordpiece_entry(tmp_path / "entry")
    assert vocab.query("king", exact=False, pool=Pool.mean).ids == (4,)
    assert vocab.tokenize("play") == (5,)
    assert "_tokenizer" not in vocab.__dict__  # the tokenizers library was never asked: pieces.txt answered


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


def test_an_empty_word_names_the_option_that_looks_up_whitespace(hub: Any) -> None:
    # (seed 13) the advice names the option turned on, in the caller's words: exact=True from Python, --exact
    # on the command line
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


def test_a_library_fault_on_a_long_text_quotes_its_first_40_characters(tmp_path: Path) -> None:
    # (seed 13) as test_a_library_fault_while_encoding_is_a_damaged_model, on a text of 41 characters
    vocab, _ = byte_level_entry(tmp_path / "entry")

    class Failing:
        def encode(self, text: str, add_special_tokens: bool) -> Any:
            raise ValueError("a damaged merge")

    vocab.__dict__["_tokenizer"] = Failing()
    text = "a b" + "c" * 38  # 41 characters
    with pytest.raises(BadModel) as refused:
        vocab.tokenize(text)
    assert str(refused.value).startswith(f'the tokenizers library fails on "{text[:40]}"... with this model')
