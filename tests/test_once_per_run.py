"""Cross-cutting: a run resolves its model once and checks each option once, at the edge where it comes in
(issue 43; scripts/trace_run.py counts the same on the docs' tiny model)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from gpt2emb import registry
from gpt2emb.core import open as core_open

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local

COUNTED: dict[Any, str] = {
    registry.resolve.__code__: "resolve",
    registry.find.__code__: "find",
    core_open.check_top.__code__: "check_top",
    core_open.check_top_fits.__code__: "check_top_fits",
}


def counted(*args: str) -> Counter[str]:
    """The calls of COUNTED's functions in one run of the app (sys.setprofile: nothing of gpt2emb replaced;
    through CliRunner, not run_cli, whose checks of the output resolve the model again)."""
    from typer.testing import CliRunner

    from gpt2emb.cli import app

    calls: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in COUNTED:
            calls[COUNTED[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        result = CliRunner().invoke(app, list(args))
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.stdout + result.stderr
    return calls


@pytest.mark.parametrize("args", [["neighbors", "king", "-k", "3"], ["neighbors", "king", "--json"]])
def test_a_warm_neighbors_of_a_folder_resolves_its_model_once(
    tiny: Tiny, tmp_path: Path, args: list[str]
) -> None:
    folder = str(save_local(tiny, tmp_path / "m"))
    assert run_cli(*args, "-m", folder).exit_code == 0  # the entry built: the run counted is warm
    calls = counted(*args, "-m", folder)
    # -k: its value before the model is opened, its bound once a folder's size is known (when it is open)
    assert calls == {"resolve": 1, "find": 1, "check_top": 1, "check_top_fits": 1}


def test_a_warm_neighbors_of_a_named_model_resolves_it_once(hub: FakeHub) -> None:
    assert run_cli("neighbors", "king").exit_code == 0
    calls = counted("neighbors", "king", "-k", "3")
    assert calls == {"resolve": 1, "find": 1, "check_top": 1}  # the registry knows its size before opening


def test_a_warm_context_resolves_its_model_once(tiny: Tiny, tmp_path: Path) -> None:
    folder = str(save_local(tiny, tmp_path / "m"))
    args = ("context", "king", "the king sat", "a king ran", "-m", folder)
    assert run_cli(*args).exit_code == 0
    assert counted(*args) == {"resolve": 1, "find": 1}
