"""contract.py pinned where a mutation run (scripts/mutate.py) found it loose: the handle's refusals word for
word, with a long value cut at 60 characters and `...`, and a model name checked as a name, not looked up
on the file system."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpt2emb
from gpt2emb import handle
from gpt2emb.errors import UnknownModel, UsageError, WrongType
from gpt2emb.report import QuietReporter

from fakehub import FakeHub


@pytest.fixture
def m(hub: FakeHub) -> handle.Embeddings:
    return gpt2emb.open("gpt2", reporter=QuietReporter())


def test_a_wrong_value_is_quoted_to_60_characters(m: handle.Embeddings) -> None:
    with pytest.raises(WrongType) as refused:
        m.neighbors("cat", k="x" * 100)  # type: ignore[arg-type]
    # repr("xx...") is a quote and 100 x's and a quote: its first 60 characters, then ...
    assert str(refused.value) == "k must be a whole number (an int), not '" + "x" * 59 + "..."
    with pytest.raises(WrongType) as refused:
        m.neighbors("cat", k="x" * 58)  # type: ignore[arg-type]  # a repr of 60 characters: shown whole
    assert str(refused.value) == "k must be a whole number (an int), not '" + "x" * 58 + "'"


def test_a_path_too_long_is_quoted_to_60_characters(m: handle.Embeddings, tmp_path: Path) -> None:
    out = str(tmp_path / ("x" * 5000))
    with pytest.raises(UsageError) as refused:
        m.export("word2vec", out=out)
    assert str(refused.value) == (
        f'out "{out[:60]}"... is not a path this system can use (File name too long); give a shorter one'
    )


def test_a_model_name_too_long_for_a_path_is_no_model_i_know(hub: FakeHub) -> None:
    with pytest.raises(UnknownModel, match=r"^x{100}\.\.\. is not a model I know; known models: gpt2, "):
        gpt2emb.sizes(models=["x" * 5000])
