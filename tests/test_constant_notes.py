"""A note is about the run it comes with: what would be said the same on every run (what layer 0 of context
is, lab's caveat about GPT-2) is in the docs, not on the screen. Each command that takes input is run on two
inputs: no note of one run is a note of the other."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from fakehub import FakeHub

RUNS = [
    (
        ["context", "king", "the cat and king", "hello king is a man"],
        ["context", "cat", "the cat sat", "a cat and dog"],
    ),
    (["input", "the king sat"], ["input", "hello cat"]),
    (["vector", "cat", "kingdom"], ["vector", "dog", "queens"]),
    (["neighbors", "cat", "kingdom"], ["neighbors", "king", "queens"]),
    (["analogy", "king", "man", "woman"], ["analogy", "cat", "cats", "dog"]),
    (["similarity", "cat", "dog"], ["similarity", "king", "queen"]),
    (["positions", "0", "1"], ["positions", "2", "700"]),
    (["positions", "--heatmap", "--cells", "4"], ["positions", "--heatmap", "--cells", "8"]),
    (["tying", "--grad", "the cat sat"], ["tying", "--grad", "hello king is a man"]),
    (["lab", "--word", "king"], ["lab", "--word", "cat"]),
]


def notes(args: list[str]) -> set[str]:
    """The notes of a run: the notes of its JSON (at any depth), and the first line of each note the table
    and stderr show."""
    shown = run_cli(*args)
    assert shown.exit_code == 0, shown.output
    lines = f"{shown.stdout}\n{shown.stderr}".splitlines()
    found = {line.split("note: ", 1)[1] for line in lines if line.startswith(("note: ", "gpt2emb: note: "))}
    stack = [json.loads(run_cli(*args, "--json").stdout)]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found |= {f"json: {n}" for n in value.get("notes") or ()}
            stack += value.values()
        elif isinstance(value, list):
            stack += value
    return found


@pytest.mark.parametrize(("one", "other"), RUNS, ids=[r[0][0] + "-" + r[0][1] for r in RUNS])
def test_no_note_is_the_same_on_two_runs(hub: FakeHub, one: list[str], other: list[str]) -> None:
    assert notes(one) & notes(other) == set()


def test_context_and_lab_say_nothing_the_same_on_every_run(hub: FakeHub) -> None:
    context = run_cli("context", "king", "the cat and king", "hello king is a man")
    assert context.exit_code == 0 and "layer 0 is" not in context.stdout and "note:" not in context.stdout
    lab = run_cli("lab")
    assert lab.exit_code == 0 and "comes out on top" not in lab.stdout
