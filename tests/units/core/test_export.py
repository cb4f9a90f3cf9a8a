"""core/export.py pinned where a mutation run (scripts/mutate.py) found it loose: how the Projector's
metadata spells a token at the edges of its escapes (the last control character below 0x80 and the first
above it, the last character of four hex digits and the first of eight), each spelt here from the rule the
docstring of export.shown gives; the note on rows keyed by id (five named), and the progress of an export
(the bytes of its rows, all of them)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from gpt2emb.choices import Format, Table
from gpt2emb.core import export

from checkpoints import Recording
from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("\x7f", '"\\x7f"'),  # DEL: a control character below 0x80, as its byte
        ("\x80", '"\\u0080"'),  # the character U+0080, not the byte 0x80 (which is "\\x80")
        ("\x9f", '"\\u009f"'),
        ("\uffff", '"\\uffff"'),  # the last of four hex digits
        ("\U00010000", '"\U00010000"'),  # printable (LINEAR B SYLLABLE B008 A): itself
        ("\U000effff", '"\\U000effff"'),  # a noncharacter past four digits: eight
        ("\ufeff", '"\\ufeff"'),
    ],
)
def test_escapes_at_their_edges(text: str, field: str) -> None:
    assert export.shown(text.encode("utf-8")) == field


def test_a_byte_and_the_character_of_the_same_number_are_told_apart() -> None:
    assert export.shown(b"\x80") == '"\\x80"' and export.shown("\x80".encode()) == '"\\u0080"'


# ---------------------------------------------------------------- through the command and the core


@pytest.mark.parametrize("spaced", [5, 6, 7])
def test_the_note_names_the_first_five_rows_keyed_by_id(tiny: Tiny, tmp_path: Path, spaced: int) -> None:
    """Added tokens that hold a space cannot be word2vec keys: each is keyed id:N, and the note names five."""
    n = len(tiny.wte)
    tok = Tokenizer.from_str(tiny.tokenizer.to_str())
    tok.add_tokens([f"two words {i}" for i in range(spaced)])
    rows = np.vstack([tiny.wte, np.full((spaced, tiny.wte.shape[1]), 0.5, dtype=np.float32)])
    config = {**tiny.config, "vocab_size": n + spaced}
    folder = save_local(dataclasses.replace(tiny, tokenizer=tok, wte=rows, config=config), tmp_path / "m")
    result = run_cli(
        "export", "-m", str(folder), "--format", "word2vec", "-o", str(tmp_path / "v.txt"), "--json"
    )
    assert result.exit_code == 0, result.stderr
    ids = [f"id:{n + i}" for i in range(spaced)]
    named = ", ".join(ids[:5]) + (", ..." if spaced > 5 else "")
    assert json.loads(result.stdout)["notes"] == [
        f"{spaced} rows keyed by id ({named}): no vocabulary entry without whitespace, or one that repeats "
        "another"
    ]


@pytest.mark.parametrize(("table", "rows"), [(Table.wte, 343), (Table.wpe, 1024)])
def test_the_progress_of_an_export_counts_the_bytes_of_its_rows(
    hub: FakeHub, tmp_path: Path, table: Table, rows: int
) -> None:
    reporter = Recording()
    export.export("gpt2", Format.word2vec, str(tmp_path / "v.txt"), table, reporter=reporter)
    (line,) = [x for x in reporter.lines if x[0].startswith("exporting")]
    label, total, task = line
    assert (label, total, task.done) == (f"exporting {table.value} of gpt2", rows * 32 * 4, rows * 32 * 4)
