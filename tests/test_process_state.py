"""Cross-cutting: what gpt2emb leaves of the process it runs in (its environment, the libraries' logging and
bars), and the true message when loading a model fails for want of memory, disk space or permission."""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from gpt2emb import heavy
from gpt2emb.report import HUB_BARS
from gpt2emb.store import hub as store_hub

from conftest import COMMIT, run_cli
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, save_local

CONTEXT = ("context", "king", "the king sat", "a king ran")


def test_a_run_leaves_the_environment_as_it_found_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    before = dict(os.environ)
    assert run_cli("sizes", "--json").exit_code == 0
    assert dict(os.environ) == before


@pytest.mark.parametrize("bars", [True, False])
def test_the_hubs_bar_for_a_checkpoint_follows_the_run(
    hub: FakeHub, tiny: Tiny, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, bars: bool
) -> None:
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setenv("TQDM_POSITION", "-1")  # huggingface_hub's bar even off a terminal (as in a notebook)
    hub.repos["someone/gpt2-bin"] = Repo(COMMIT, hub_files(tiny, weights="bin"))
    capsys.readouterr()
    token = HUB_BARS.set(bars)
    try:
        store_hub.file("someone/gpt2-bin", "pytorch_model.bin", COMMIT, bar=True)
    finally:
        HUB_BARS.reset(token)
    assert ("pytorch_model.bin" in capsys.readouterr().err) == bars


def test_the_hubs_logging_is_quieted_once_and_then_left_to_the_program() -> None:
    from huggingface_hub.utils import logging as hub_logging

    with store_hub.errors_of("someone/model"):
        pass
    assert logging.getLogger("huggingface_hub").getEffectiveLevel() == logging.ERROR
    hub_logging.set_verbosity_warning()  # type: ignore[no-untyped-call]  # a program's own choice
    try:
        with store_hub.errors_of("someone/model"):
            pass
        assert logging.getLogger("huggingface_hub").getEffectiveLevel() == logging.WARNING
    finally:
        hub_logging.set_verbosity_error()  # type: ignore[no-untyped-call]


def test_transformers_logging_is_quieted_once_and_then_left_to_the_program(tiny: Tiny) -> None:
    from transformers.utils import logging as tf_logging

    classes = ("GPT2Config", "GPT2Model", "GPT2LMHeadModel")
    heavy.meta_model_ties(tiny.config, classes)
    assert tf_logging.get_verbosity() == logging.ERROR
    tf_logging.set_verbosity_warning()  # type: ignore[no-untyped-call]
    try:
        heavy.meta_model_ties(tiny.config, classes)
        assert tf_logging.get_verbosity() == logging.WARNING
    finally:
        tf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]


# ---------------------------------------------------------------- a load that fails, not for the model


def _loading_fails(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """transformers' loader raises error, as it would on this machine (none can be made to happen here)."""
    from transformers import PreTrainedModel

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(PreTrainedModel, "from_pretrained", classmethod(failing))


def _one_line(tiny: Tiny, tmp_path: Path) -> tuple[int, str, Path]:
    folder = save_local(tiny, tmp_path / "m")
    result = run_cli(*CONTEXT, "-m", str(folder))
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return result.exit_code, lines[0], folder.resolve()


def test_out_of_memory_while_loading_says_so(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _loading_fails(monkeypatch, MemoryError())
    code, line, folder = _one_line(tiny, tmp_path)
    assert code == 6
    assert line == (
        f"gpt2emb: there is not enough memory to load the model in {folder}: close other programs and run "
        "again, or use a smaller model"
    )


def test_a_full_disk_while_loading_says_so(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _loading_fails(monkeypatch, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    code, line, folder = _one_line(tiny, tmp_path)
    assert code == 6
    assert line.startswith(f"gpt2emb: the disk is full: loading the model in {folder} needs space to write")
    assert line.endswith("free some space and run again") and "save" not in line


def test_a_permission_error_while_loading_names_the_file(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = str(tmp_path / "m" / "model.safetensors")
    _loading_fails(monkeypatch, PermissionError(errno.EACCES, os.strerror(errno.EACCES), weights))
    code, line, _ = _one_line(tiny, tmp_path)
    assert code == 6
    assert line.startswith(f'gpt2emb: cannot use "{weights}": Permission denied')
    assert "save" not in line


def test_a_permission_error_in_the_json_errors_is_of_its_type(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    weights = str(tmp_path / "m" / "model.safetensors")
    _loading_fails(monkeypatch, PermissionError(errno.EACCES, os.strerror(errno.EACCES), weights))
    folder = save_local(tiny, tmp_path / "m")
    result = run_cli(*CONTEXT, "-m", str(folder), "--json")
    assert result.exit_code == 6
    assert json.loads(result.stderr)["error"]["type"] == "permission"
