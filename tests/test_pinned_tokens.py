"""tokens.py pinned where a mutation run (scripts/mutate.py) found it loose: how a token without a vocabulary
entry is shown (an added token by its text, a row past the tokenizer by its id), each against what the
test itself put there."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import AddedToken, Tokenizer

from gpt2emb.store import build
from gpt2emb.tokens import Vocab

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
    (folder / "pieces.txt").write_text(build._pieces_text(vocab), encoding="utf-8")
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
