"""stdout that cannot be written (issue 37, items 8 and 9), in real processes: a full device is one line,
`cannot write output`, exit 8, whoever writes (a result, a table, --help, schema); a reader that left the
pipe ends the run quietly with 0, --help included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from conftest import run_cli
from tinymodel import Tiny, save_local

EXE = str(Path(sys.executable).with_name("gpt2emb"))


@pytest.fixture(scope="module")
def model(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(save_local(tiny, tmp_path_factory.mktemp("m") / "tiny-gpt2"))


def run_into(stdout: int | IO[Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, env=dict(os.environ)
    )


COMMANDS = [
    ["models"],
    ["neighbors", "cat", "-m", "{model}"],
    ["neighbors", "cat", "-m", "{model}", "--json"],
    ["vector", "cat", "-m", "{model}", "--jsonl"],
    ["schema"],
    ["--help"],
    ["vector", "-h"],
    ["cache", "list"],
    ["--version"],
]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_full_stdout_is_one_line_and_exit_8(model: str, command: list[str]) -> None:
    args = [a.format(model=model) for a in command]
    assert run_into(subprocess.DEVNULL, *args).returncode == 0  # the model is cached: only stdout fails
    with open("/dev/full", "w") as full:
        done = run_into(full, *args)
    assert done.returncode == 8, done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "cannot write output (stdout): No space left on device" in said[0], said
    assert "internal error" not in done.stderr and "cannot write the cache" not in done.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_reader_that_left_ends_the_run_quietly(model: str, command: list[str]) -> None:
    args = [a.format(model=model) for a in command]
    assert run_into(subprocess.DEVNULL, *args).returncode == 0
    read, write = os.pipe()
    os.close(read)  # `| true`: the reader is gone before anything is written
    try:
        done = run_into(write, *args)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


ESCAPES = "\x1b[31mRED\x1b[0m\nfake line"


@pytest.mark.parametrize(
    "command", [["neighbors", "cat", "-k", "1", "-m"], ["positions", "0", "-m"], ["cache", "list"]]
)
def test_a_path_holding_a_terminal_s_escapes_is_printed_escaped(
    tiny: Tiny, tmp_path: Path, command: list[str]
) -> None:
    """Issue 37, item 10: a folder named with escapes is shown as \\x1b and \\n in titles, cache list and
    messages, as tokens are: it colours nothing and forges no line."""
    folder = save_local(tiny, tmp_path / ESCAPES)
    assert run_cli("vector", "cat", "-m", str(folder)).exit_code == 0
    result = run_cli(*command, *([str(folder)] if command[-1] == "-m" else []))
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\nfake line" not in result.stdout, result.stdout
    assert "\\x1b[31mRED\\x1b[0m\\nfake" in result.stdout, result.stdout  # (a line may wrap at its space)
    refused = run_cli("positions", "5000", "-m", str(folder))
    assert refused.exit_code == 2 and "\x1b" not in refused.stderr and "\\x1b[31mRED" in refused.stderr
