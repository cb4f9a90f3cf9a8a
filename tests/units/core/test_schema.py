"""What core/schema.py gives the shell's completion of `schema`, pinned where a mutation run found it loose
(issue 43, point 4): the commands that print JSON, word by word, and a command's modes."""

from __future__ import annotations

from test_completions import complete_in_bash


def test_schema_completes_the_commands_and_their_modes() -> None:
    assert complete_in_bash("gpt2emb", "schema", "cache", "") == [
        "list",
        "clear",
        "verify",
        "refresh",
        "path",
    ]
    assert complete_in_bash("gpt2emb", "schema", "e") == ["export", "error"]
    assert complete_in_bash("gpt2emb", "schema", "neighbors", "--mode", "") == [
        "json",
        "jsonl",
        "side-by-side",
        "stdin",
    ]
