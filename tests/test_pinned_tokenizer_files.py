"""store/tokenizer_files.py, pinned where a mutation run (scripts/mutate.py, seed 13) found its tests loose:
BPE dropout turned off in the tokenizer a build reads (tests/test_vocab_roundtrip.py checks it through the
commands, and is not among the files a run of this module traces)."""

from __future__ import annotations

import json
from pathlib import Path

from gpt2emb import registry
from gpt2emb.store import tokenizer_files
from test_checkpoint import folder_of

from tinymodel import Tiny


def test_a_tokenizer_saved_with_dropout_splits_each_word_one_way(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {})
    saved = json.loads(tiny.tokenizer.to_str())
    saved["model"]["dropout"] = 0.9  # nine merges in ten skipped, at random, on every call
    (folder / "tokenizer.json").write_text(json.dumps(saved))
    text, parsed, library = tokenizer_files.tokenizer(registry.resolve(str(folder)), "local", len(tiny.wte))
    assert parsed["model"]["dropout"] is None and json.loads(text)["model"]["dropout"] is None
    want = tiny.tokenizer.encode(" kingdom of cats").ids  # the tokenizer without dropout
    assert {tuple(library.encode(" kingdom of cats").ids) for _ in range(20)} == {tuple(want)}
