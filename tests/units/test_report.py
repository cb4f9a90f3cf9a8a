"""report.py pinned where a mutation run (scripts/mutate.py) found it loose: outside a command (a Python
program), huggingface_hub's own download bar of a whole checkpoint is shown, as a notebook expects; the
command line sets the switch per run (test_process_state.py). Run in a process of its own, as a program
starts: the switch's default is what it sees."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import COMMIT
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files


def test_a_python_program_sees_the_hubs_bar_for_a_checkpoint(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setenv("TQDM_POSITION", "-1")  # huggingface_hub's bar even off a terminal (as in a notebook)
    hub.repos["someone/gpt2-bin"] = Repo(COMMIT, hub_files(tiny, weights="bin"))
    program = (
        "from gpt2emb.store import hub\n"
        f"hub.file('someone/gpt2-bin', 'pytorch_model.bin', {COMMIT!r}, bar=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=dict(os.environ), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "pytorch_model.bin" in done.stderr
