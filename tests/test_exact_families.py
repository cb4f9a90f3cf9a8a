"""--exact in every family: the text as typed, not starting a word (tokens.py's Vocab.query, each family's
Words.exact). Byte-level BPE's tokenizer takes a text as typed already; SentencePiece's puts "▁" before it
(a Llama's "at" is the piece "at", not "▁at"); WordPiece's first piece always starts a word (BERT's "ing" is
"##ing"), and a text it spells only as a word's start is refused, naming id:N. Without --exact nothing
changes. A vocabulary's own marks typed as text ("##ing", "Ġking") are read as text, with a hint naming the
entry they spell.

Oracles: the tiny models' own vocabularies (the ids of the pieces "at", "##ing") and their tokenizers'
encodings of the texts as words, whose pieces after the first word are the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tiny_bert import TinyBert
from tiny_bert import build as build_bert
from tiny_distilbert import build as build_distilbert
from tiny_llama import TinyLlama
from tiny_llama import build as build_llama

from conftest import copy_model, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> TinyLlama:
    return build_llama(tmp_path_factory.mktemp("llama"))


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> TinyBert:
    return build_bert(tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="module")
def distilbert(tmp_path_factory: pytest.TempPathFactory) -> TinyBert:
    return build_distilbert(tmp_path_factory.mktemp("distilbert"))


def tokens(*args: str) -> list[tuple[int, str]]:
    """The ids and tokens `vector` answers for one word."""
    item = run_json("vector", *args)["items"][0]
    return [(t["id"], t["token"]) for t in item["tokens"]]


def refused(*args: str) -> str:
    result = run_cli("vector", *args)
    assert result.exit_code == 2, result.output
    return str(result.stderr)


def piece(tok: Any, entry: str) -> int:
    found = tok.token_to_id(entry)
    assert found is not None, entry
    return int(found)


# ---------------------------------------------------------------- SentencePiece (Llama, Mistral)


def llama2_style(llama: TinyLlama, folder: Path) -> Path:
    """The tiny Llama with Llama 2's and Mistral's tokenizer.json: "▁" put before a text by a Prepend
    normalizer (spaces replaced by "▁"), no pre-tokenizer, in place of a Metaspace pre-tokenizer."""
    files = llama.files()
    parsed = json.loads(files["tokenizer.json"])
    parsed["normalizer"] = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    }
    parsed["pre_tokenizer"] = None
    copy_model(files, folder)
    (folder / "tokenizer.json").write_text(json.dumps(parsed), encoding="utf-8")
    return folder


@pytest.mark.parametrize("layout", ["metaspace", "prepend"])
def test_sentencepiece_exact_is_the_piece_without_a_word_start(
    llama: TinyLlama, tmp_path: Path, layout: str
) -> None:
    model = str(llama.folder if layout == "metaspace" else llama2_style(llama, tmp_path / "llama2"))
    tok = llama.tokenizer
    at, start = piece(tok, "at"), piece(tok, "▁at")
    assert at in tok.encode("gato", add_special_tokens=False).ids  # the bare piece, as inside a word
    assert tokens("at", "--exact", "-m", model) == [(at, "at")]
    assert tokens("ing", "--exact", "-m", model) == [(piece(tok, "ing"), "ing")]
    # a typed space starts a word, as in GPT-2 (" king" with --exact is " king")
    assert tokens(" at", "--exact", "-m", model) == [(start, " at")]
    # after the first word, the pieces are the tokenizer's own
    words = tok.encode("at home", add_special_tokens=False).ids
    assert words[0] == start
    assert [i for i, _ in tokens("at home", "--exact", "-m", model)] == [at, *words[1:]]
    # without --exact nothing changes: the word as in running text
    assert tokens("at", "-m", model) == [(start, " at")]
    gato = tok.encode("gato", add_special_tokens=False).ids
    assert [i for i, _ in tokens("gato", "-m", model)] == gato


# ---------------------------------------------------------------- WordPiece (BERT, DistilBERT)


@pytest.mark.parametrize("which", ["bert", "distilbert"])
def test_wordpiece_exact_is_the_pieces_that_continue_a_word(
    bert: TinyBert, distilbert: TinyBert, which: str
) -> None:
    tiny = bert if which == "bert" else distilbert
    model, tok = str(tiny.folder), tiny.tokenizer
    ing = (tiny.id("##ing"), "ing")
    assert tokens("ing", "--exact", "-m", model) == [ing]
    assert tokens("ING", "--exact", "-m", model) == [ing]  # the uncased normalizer still applies
    # a text that must split: continuation pieces only, the longest first
    assert tokens("ings", "--exact", "-m", model) == [ing, (tiny.id("##s"), "s")]
    # after the first word, the pieces are the tokenizer's own
    home = tok.encode("home", add_special_tokens=False).ids
    assert [i for i, _ in tokens("ing home", "--exact", "-m", model)] == [ing[0], *home]
    # a typed space starts a word
    words = tok.encode("ing", add_special_tokens=False).ids
    assert [i for i, _ in tokens(" ing", "--exact", "-m", model)] == words
    # without --exact nothing changes: "ing" starts a word, " in" + "g"
    assert words == [tiny.id("in"), tiny.id("##g")]
    assert tokens("ing", "-m", model) == [(tiny.id("in"), " in"), (tiny.id("##g"), "g")]
    assert tokens("king", "-m", model) == [(tiny.id("king"), " king")]


def test_wordpiece_refuses_what_it_spells_only_as_a_word_start(bert: TinyBert) -> None:
    model = str(bert.folder)
    assert "##k" not in bert.tokenizer.get_vocab()  # no piece continues a word with k: king cannot
    king = refused("king", "--exact", "-m", model)
    assert king.startswith(
        'gpt2emb: "king" cannot be spelt in this vocabulary without starting a word, as --exact asks: '
        "WordPiece spells it only as a word's start, or not at all; drop --exact for the word as it starts "
        "one, or ask for a piece by its id (id:N)"
    )
    assert f'writes the token " king": ask for it by its id (id:{bert.id("king")}) or as king' in king
    comma = refused(",", "--exact", "-m", model)  # punctuation always starts a word in BERT
    assert "cannot be spelt in this vocabulary without starting a word" in comma
    with_pool = run_cli("vector", "kingdom", "--exact", "--pool", "first", "-m", model)
    assert with_pool.exit_code == 2 and "(id:N)" in with_pool.stderr


def test_a_vocabulary_s_marks_typed_as_text(bert: TinyBert, hub: FakeHub, tiny: Tiny) -> None:
    """##ing is text to the tokenizer, as GPT-2's Ġking is: answered as text where the vocabulary spells it
    (here BERT has no "#": [UNK], refused), with a hint naming the entry and how to ask for it."""
    model, ing = str(bert.folder), bert.id("##ing")
    hint = (
        f'"##ing" is how this vocabulary writes the token "ing": ask for it by its id (id:{ing}) or as '
        "ing with --exact"
    )
    exact = refused("##ing", "--exact", "-m", model)
    assert "cannot be spelt in this vocabulary without starting a word" in exact and hint in exact
    plain = refused("##ing", "-m", model)
    assert "[UNK]" in plain and hint in plain
    assert tokens(f"id:{ing}", "-m", model) == [(ing, "ing")]
    # GPT-2: Ġ is a character (Maltese), so "Ġking" is the text's bytes, and the note names the entry
    doc = run_json("vector", "Ġking")["items"][0]
    assert tiny.id("king") not in [t["id"] for t in doc["tokens"]]
    assert doc["note"].endswith(
        f'"Ġking" is how this vocabulary writes the token " king": ask for it by its id '
        f"(id:{tiny.id('king')}) or as king"
    )
    # a word that is itself a piece, split when it starts a word (" " + "oman"), is no vocabulary spelling
    split = run_json("vector", "oman")["items"][0]
    assert len(split["tokens"]) == 2 and "is how this vocabulary writes" not in split["note"]


# ---------------------------------------------------------------- byte-level BPE


def test_byte_level_exact_is_unchanged_and_needs_no_tokenizer(tiny: Tiny, tmp_path: Path) -> None:
    """GPT-2's tokenizer takes a text as typed: "king" is the piece "king", answered without loading the
    tokenizers library."""
    from gpt2emb import piece_lines
    from gpt2emb.choices import Pool
    from gpt2emb.store import encoder_files
    from gpt2emb.tokens import Vocab

    text = tiny.tokenizer.to_str()
    parsed = json.loads(text)
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / "tokenizer.json").write_text(text, encoding="utf-8")
    (entry / "pieces.txt").write_bytes(piece_lines.written(parsed["model"]["vocab"]))
    for name, data in encoder_files.written(text, parsed).items():
        if isinstance(data, bytes):
            (entry / name).write_bytes(data)
        else:
            import numpy as np

            np.save(entry / name, data)
    vocab = Vocab(entry, len(parsed["model"]["vocab"]))
    king = vocab.query("king", exact=True, pool=Pool.mean)
    assert king.ids == (piece(tiny.tokenizer, "king"),) == tuple(tiny.tokenizer.encode("king").ids)
    assert vocab.query("king", exact=False, pool=Pool.mean).ids == (tiny.id("king"),)
    assert "_tokenizer" not in vocab.__dict__
