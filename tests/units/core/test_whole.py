"""What core/whole.py decides for the commands that run a model whole, pinned where a mutation run found it
loose (issue 43, point 4): a text of exactly as many tokens as the model learned positions runs, one more is
refused."""

from __future__ import annotations

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


def test_a_text_at_the_wall_runs_and_one_token_more_is_refused(hub: FakeHub, tiny: Tiny) -> None:
    assert tiny.tokenizer.encode(" king" * 3).ids == [tiny.id("king")] * 3  # one token a word
    doc = run_json("tying", "--grad", " king" * 1024)
    assert len(doc["gradient"]["tokens"]) == 1024
    refused = run_cli("tying", "--grad", " king" * 1025)
    assert refused.exit_code == 2
    assert (
        "has 1,025 tokens, but position 1024 does not exist: gpt2 learned 1,024 positions" in refused.stderr
    )
