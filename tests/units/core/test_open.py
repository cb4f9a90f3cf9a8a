"""What core/open.py decides for every command, pinned where a mutation run found it loose (issue 43,
point 4): -k may be exactly the number of tokens a model has, and no more, on the command line (a folder: the
bound known once the model is open) and in the handle (the bound known at once)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

import pytest

import gpt2emb
from gpt2emb.errors import UsageError
from gpt2emb.report import QuietReporter, Task

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def test_k_may_be_every_token_of_the_model_and_no_more(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    rows = len(tiny.wte)  # the tiny model's tokens, from the weights it was built with
    m = gpt2emb.open("gpt2", reporter=QuietReporter())
    whole = m.neighbors("king", k=rows).to_dict()
    # every token ranked but king itself (the query is left out unless kept)
    assert len(whole["items"][0]["neighbors"]) == rows - 1
    with pytest.raises(
        UsageError, match=f"must be at most {rows:,} \\(the number of tokens\\), not {rows + 1:,}"
    ):
        m.neighbors("king", k=rows + 1)
    folder = str(save_local(tiny, tmp_path / "tiny-gpt2"))
    doc = run_json("neighbors", "king", "-k", str(rows), "-m", folder)
    assert len(doc["items"][0]["neighbors"]) == rows - 1
    refused = run_cli("neighbors", "king", "-k", str(rows + 1), "-m", folder)
    assert refused.exit_code == 2
    assert f"-k/--top must be at most {rows:,} (the number of tokens), not {rows + 1:,}" in refused.stderr


def test_a_tokenizer_that_adds_one_token_before_a_text_leaves_one_position_fewer(
    tiny: Tiny, tmp_path: Path
) -> None:
    """A GPT-2 folder whose tokenizer puts <|endoftext|> before a text in use (and nothing after it): a text
    as typed has one position fewer, 1,023 of the 1,024 the model learned."""
    from tokenizers import Tokenizer
    from tokenizers.processors import TemplateProcessing

    tokenizer = Tokenizer.from_str(tiny.tokenizer.to_str())  # a copy: the session's tiny model stays as it is
    eot = tiny.vocab["<|endoftext|>"]
    tokenizer.post_processor = TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", eot)]
    )
    folder = save_local(tiny, tmp_path / "bos-gpt2")
    (folder / "tokenizer.json").write_text(tokenizer.to_str())
    assert tokenizer.encode(" king", add_special_tokens=False).ids == [tiny.id("king")]
    text = " king" * 1024  # one token a word
    refused = run_cli("input", text, "-m", str(folder))
    assert refused.exit_code == 2
    assert (
        f"the text is 1,024 tokens, but 1,023 fit: {folder} learned 1,024 positions, 0 to 1023, and its "
        "tokenizer adds 1 special tokens to a text in use" in refused.stderr
    )
    doc = run_json("input", text, "--truncate", "-m", str(folder))
    assert len(doc["tokens"]) == 1023
    assert len(run_json("input", " king" * 1023, "-m", str(folder))["tokens"]) == 1023


class Recording:
    """A reporter that keeps what it is told."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        self.notes.append(message)

    def progress(self, label: str, total: int) -> AbstractContextManager[Task]:
        return QuietReporter().progress(label, total)


def test_the_handle_reports_through_the_reporter_it_was_given(hub: FakeHub, tiny: Tiny) -> None:
    """What a later call of the handle reports (context's and tying's notes and bars) goes to the reporter
    gpt2emb.open was given, not to a quiet one; without one, to a quiet one."""
    mine = Recording()
    assert gpt2emb.open("gpt2", reporter=mine).reporter is mine
    assert isinstance(gpt2emb.open("gpt2").reporter, QuietReporter)
