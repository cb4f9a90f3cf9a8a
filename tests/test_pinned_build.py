"""store/build.py, pinned where a mutation run (scripts/mutate.py, seed 13) found its tests loose: the ids a
tokenizer puts around a text (RoBERTa's <s> and </s>), and a build that fails before its fetch thread starts
(a tokenizer the library cannot read) telling that failure, not another; the build's bar reaching its end."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import gpt2emb
from gpt2emb.report import BUILDING
from gpt2emb.store import build
from tiny_roberta import train_tokenizer

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def test_the_ids_around_a_text_are_roberta_s_s_and_end() -> None:
    tok = train_tokenizer()
    assert tok.token_to_id("<s>") == 0 and tok.token_to_id("</s>") == 2  # RobertaProcessing's ids
    assert build._wraps(tok.to_str()) == [[0], [2]]


def test_a_tokenizer_the_library_cannot_read_is_told_and_builds_nothing(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "F")
    (folder / "tokenizer.json").write_text('{"model": {"type": "BPE"}}')  # JSON, but no tokenizer
    result = run_cli("vector", "cat", "-m", str(folder))
    assert result.exit_code == 6 and result.stdout == "", result.output
    said = result.stderr
    assert said.startswith(
        f"gpt2emb: {folder / 'tokenizer.json'} is damaged: the tokenizers library cannot read it ("
    )
    assert said.endswith("); save the checkpoint again or use another model\n") and said.count("\n") == 1


class Bars:
    """A reporter that keeps each bar's label, its total and how far it was advanced."""

    def __init__(self) -> None:
        self.bars: list[tuple[str, int]] = []
        self.done: list[int] = []

    def note(self, message: str) -> None:
        pass

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Bars]:
        self.bars.append((label, total))
        self.done.append(0)
        yield self

    def advance(self, n: int) -> None:
        self.done[-1] += n


def test_the_fetch_s_and_the_build_s_bars_reach_their_end(hub: FakeHub, tiny: Tiny) -> None:
    bars = Bars()
    gpt2emb.open("gpt2", reporter=bars)
    assert [label for label, _ in bars.bars] == ["fetching gpt2 embeddings", f"{BUILDING} of gpt2"]
    assert [total for _, total in bars.bars] == bars.done, (bars.bars, bars.done)
    assert bars.bars[0][1] > tiny.wte.nbytes and bars.bars[1][1] > tiny.wte.nbytes
