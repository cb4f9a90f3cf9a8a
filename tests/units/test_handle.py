"""handle.py pinned where a mutation run (scripts/mutate.py) found it loose: each method called with its
defaults answers as its command does with none of its options (the documented defaults: -k 10, no --exact,
no --keep-inputs), and ten neighbours by count."""

from __future__ import annotations

import pytest

import gpt2emb
from gpt2emb import handle
from gpt2emb.errors import UsageError
from gpt2emb.report import QuietReporter

from conftest import run_json
from fakehub import FakeHub


@pytest.fixture
def m(hub: FakeHub) -> handle.Embeddings:
    return gpt2emb.open("gpt2", reporter=QuietReporter())


def test_neighbors_by_default_are_the_commands_ten(m: handle.Embeddings) -> None:
    result = m.neighbors("cat")
    assert len(result.items[0].neighbors) == 10
    assert result.to_dict() == run_json("neighbors", "cat")


def test_an_analogy_by_default_is_the_commands(m: handle.Embeddings) -> None:
    result = m.analogy("king", "man", "woman")
    assert result.to_dict() == run_json("analogy", "king", "man", "woman")
    assert len(result.to_dict()["results"]) == 10


def test_a_split_word_is_pooled_by_default_as_the_command_does(m: handle.Embeddings) -> None:
    mine, its = m.vector("kingdomzz").to_dict()["items"][0], run_json("vector", "kingdomzz")["items"][0]
    assert len(mine["tokens"]) == 5 and mine["pool"] == "mean"
    assert (mine["tokens"], mine["vector"]) == (its["tokens"], its["vector"])
    assert mine["note"].endswith("using the mean of their rows (pool)")  # the parameter, in Python's words


def test_side_by_side_refuses_analogies_of_different_questions(m: handle.Embeddings) -> None:
    one, other = m.analogy("king", "man", "woman", k=3), m.analogy("queen", "woman", "man", k=3)
    assert one.expression != other.expression
    shown = " and ".join(sorted([repr(one.expression), repr(other.expression)]))
    with pytest.raises(UsageError) as refused:
        gpt2emb.side_by_side([one, other])
    assert str(refused.value) == (
        f"the results answer different questions ({shown}): give each model the same words"
    )
