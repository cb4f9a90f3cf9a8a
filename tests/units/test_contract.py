"""contract.py pinned where a mutation run (scripts/mutate.py) found it loose: the handle's refusals word for
word, with a long value cut at 60 characters and `...`, and a model name checked as a name, not looked up
on the file system."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpt2emb
from gpt2emb import commands, contract, handle
from gpt2emb.errors import UnknownModel, UsageError, WrongType
from gpt2emb.report import QuietReporter

from fakehub import FakeHub
from tinymodel import Tiny, save_local


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


def test_a_handle_made_in_a_fresh_process_checks_its_parameters(tiny: Tiny, tmp_path: Path) -> None:
    # the checks are put on the methods when gpt2emb.handle is imported: a process of its own sees them
    folder = save_local(tiny, tmp_path / "model")
    program = (
        "import gpt2emb\n"
        f"m = gpt2emb.open({str(folder)!r})\n"
        "try:\n"
        "    m.neighbors('cat', k='3')\n"
        "except TypeError as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "WrongType k must be a whole number (an int), not '3'\n"


def test_a_stem_may_declare_only_a_check_the_contract_has(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        monkeypatch.setattr(commands, "checks", lambda: {"width": "no_such_check"})
        contract._declared_checks.cache_clear()
        with pytest.raises(ValueError, match=r"^a stem declares checks the contract has not: \{'width'"):
            contract.checked(lambda width: width)
        monkeypatch.setattr(commands, "checks", lambda: {"width": "flag"})
        contract._declared_checks.cache_clear()
        checked = contract.checked(lambda width: width)
        assert checked(width=True) is True
        with pytest.raises(WrongType, match=r"^width must be a bool \(True or False\), not 1$"):
            checked(width=1)
    finally:
        monkeypatch.undo()
        contract._declared_checks.cache_clear()


def test_a_path_the_platform_refuses_outright_is_quoted_to_60_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(path: str) -> None:
        raise ValueError("stat: path too long for Windows")  # as Windows' Python says it

    monkeypatch.setattr(os, "stat", refused)
    with pytest.raises(UsageError) as caught:
        contract.path("out", "y" * 100)
    assert str(caught.value) == 'out "' + "y" * 60 + '"... is not a path this system can use'


def test_sizes_of_an_empty_list_of_models_is_refused(hub: FakeHub) -> None:
    with pytest.raises(UsageError, match=r"^models is None or at least one model, not an empty list$"):
        gpt2emb.sizes(models=[])
