"""store/tokenizer_files.py: a checkpoint's tokenizer read and checked against its vocabulary.

BPE dropout is turned off in the tokenizer a build reads. A model without a tokenizer, a tokenizer that
cannot be read, and added tokens that name no row are told. A tokenizer from vocab.json and merges.txt is
GPT-2's."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from tokenizers import AddedToken, Tokenizer

from gpt2emb import registry
from gpt2emb.errors import BadModel
from gpt2emb.store import tokenizer_files

from checkpoints import FIX, folder_of, refused
from tinymodel import Tiny, safetensors_bytes, vocab_and_merges


def test_a_tokenizer_saved_with_dropout_splits_each_word_one_way(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {})
    saved = json.loads(tiny.tokenizer.to_str())
    saved["model"]["dropout"] = 0.9  # nine merges in ten skipped, at random, on every call
    (folder / "tokenizer.json").write_text(json.dumps(saved))
    text, parsed, library = tokenizer_files.tokenizer(registry.resolve(str(folder)), "local", len(tiny.wte))
    assert parsed["model"]["dropout"] is None and json.loads(text)["model"]["dropout"] is None
    want = tiny.tokenizer.encode(" kingdom of cats").ids  # the tokenizer without dropout
    assert {tuple(library.encode(" kingdom of cats").ids) for _ in range(20)} == {tuple(want)}


def test_a_model_without_a_tokenizer(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    (folder / "tokenizer.json").unlink()
    refused(
        ["neighbors", "cat", "-m", str(folder)],
        f"{folder} has no tokenizer (tokenizer.json, or vocab.json with merges.txt)",
    )


def with_added_token(tiny: Tiny, folder: Path) -> int:
    """tiny's tokenizer.json in folder with an added token "<|x|>" past its vocabulary; the token's id."""
    tok = Tokenizer.from_str(tiny.tokenizer.to_str())
    tok.add_tokens([AddedToken("<|x|>", special=True)])
    (folder / "tokenizer.json").write_text(tok.to_str())
    x = tok.token_to_id("<|x|>")
    assert x is not None
    return x


def test_an_added_token_must_name_a_row(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {})
    x = with_added_token(tiny, folder)
    ref = registry.resolve(str(folder))
    assert tokenizer_files.tokenizer(ref, "local", x + 1)[1]["added_tokens"][-1]["id"] == x  # the last row
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", x)
    assert e.value.message == (
        f"{folder}/tokenizer.json gives the token <|x|> the id {x}, but wte has rows 0 to {x - 1}: the "
        "tokenizer and the table disagree; save the model and its tokenizer again"
    )


def test_a_tokenizer_that_cannot_be_read(tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = folder_of(tiny, tmp_path / "model", {})
    ref = registry.resolve(str(folder))
    text = tiny.tokenizer.to_str().encode()
    cut = text.index(b'"vocab"')
    (folder / "tokenizer.json").write_bytes(text[:cut] + b"\xe9" + text[cut:])
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", 1000)
    assert (
        e.value.message == f"{folder}/tokenizer.json is damaged: it is not UTF-8 text (byte {cut + 1}){FIX}"
    )
    read_bytes = Path.read_bytes

    def failing(self: Path) -> bytes:
        if self.name == "tokenizer.json":
            raise OSError(errno.EIO, "Input/output error")
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", failing)
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", 1000)
    assert e.value.message == f"cannot read {folder}/tokenizer.json: Input/output error"


def test_a_tokenizer_from_vocab_and_merges_is_gpt2s(tiny: Tiny, tmp_path: Path) -> None:
    """Without tokenizer.json, vocab.json with merges.txt make GPT-2's tokenizer: byte-level, no space put
    before a text; either file alone makes none, and a vocab.json the library cannot read is damage."""
    vocab, merges = vocab_and_merges(tiny)
    folder = folder_of(tiny, tmp_path / "model", {"vocab.json": vocab, "merges.txt": merges})
    (folder / "tokenizer.json").unlink()
    ref = registry.resolve(str(folder))
    made = Tokenizer.from_str(tokenizer_files.tokenizer(ref, "local", len(tiny.vocab))[0])
    for text in ("king", " king", "kingdom of cats", "é"):
        assert made.encode(text).ids == tiny.tokenizer.encode(text).ids, text
    (folder / "vocab.json").write_bytes(b"{")
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", len(tiny.vocab))
    assert e.value.message.startswith(
        f"{folder}/vocab.json with {folder}/merges.txt is damaged: the tokenizers library cannot read them ("
    )
    for alone in ("vocab.json", "merges.txt"):
        (folder / alone).rename(tmp_path / alone)
        with pytest.raises(BadModel) as e:
            tokenizer_files.tokenizer(ref, "local", len(tiny.vocab))
        assert e.value.message == f"{folder} has no tokenizer (tokenizer.json, or vocab.json with merges.txt)"
        (tmp_path / alone).rename(folder / alone)


def test_a_tokenizer_without_ids_names_every_kind_that_has_them(tiny: Tiny, tmp_path: Path) -> None:
    """The kinds of the tokenizers library whose vocabulary is a JSON object of piece -> id: BPE, WordPiece
    and WordLevel (Unigram's is a list of [piece, score])."""
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    parsed = json.loads((folder / "tokenizer.json").read_text())
    pieces = sorted(parsed["model"]["vocab"].items(), key=lambda p: p[1])
    parsed["model"] = {"type": "Unigram", "unk_id": 0, "vocab": [[piece, -float(i)] for piece, i in pieces]}
    (folder / "tokenizer.json").write_text(json.dumps(parsed))
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(registry.resolve(str(folder)), "local", len(tiny.wte))
    assert e.value.message == (
        f"{folder}/tokenizer.json holds a Unigram tokenizer; gpt2emb reads BPE, WordPiece and WordLevel "
        "tokenizers, whose vocabulary maps each piece to its id: use a model with one of those"
    )
