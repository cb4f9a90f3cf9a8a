"""handle.py pinned where a mutation run (scripts/mutate.py) found it loose: each method called with its
defaults answers as its command does with none of its options (the documented defaults: -k 10, no --exact,
no --keep-inputs), and ten neighbours by count."""

from __future__ import annotations

import pytest

import gpt2emb
from gpt2emb import commands, handle
from gpt2emb.errors import UsageError, WrongType
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


def test_a_stems_own_function_is_offered_by_the_handle_checked(
    m: handle.Embeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no stem offers one today: a declaration naming a function of its own puts it on the handle
    offered = commands.Method("words_of_pinned", {"words": "cat"}, function="gpt2emb.contract:words_of")
    monkeypatch.setattr(commands, "methods", lambda: [offered])
    monkeypatch.delattr(handle.Embeddings, "words_of_pinned", raising=False)
    handle._offered()
    try:
        assert handle.Embeddings.words_of_pinned("cat") == ["cat"]  # type: ignore[attr-defined]
        with pytest.raises(WrongType, match=r"^words are given as a str or a list of str, not 3$"):
            handle.Embeddings.words_of_pinned(3)  # type: ignore[attr-defined]
    finally:
        delattr(handle.Embeddings, "words_of_pinned")
