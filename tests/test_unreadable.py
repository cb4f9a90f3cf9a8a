"""A model's file or folder, or a cache entry, that this user may not read, and a model's file that is no
file (issue 37, items 6, 7 and 10): one true line naming the path, exit 6, never an internal error nor a
false note that the cache cannot be written.

Root reads whatever the modes say: the runs that need a permission to be refused drop root's override
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) before gpt2emb starts, and are skipped where that is impossible."""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import run_cli
from tinymodel import Tiny, save_local

EXE = str(Path(sys.executable).with_name("gpt2emb"))
PR_CAPBSET_DROP, OVERRIDES = 24, (1, 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


def _as_a_user() -> None:
    """In the child, before exec: without root's override, modes are obeyed (a no-op for another user)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in OVERRIDES:
            libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def run_as_user(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
        preexec_fn=_as_a_user,
    )


@pytest.fixture(scope="module")
def modes_obeyed(tmp_path_factory: pytest.TempPathFactory) -> None:
    probe = tmp_path_factory.mktemp("probe") / "secret"
    probe.write_text("x")
    probe.chmod(0)
    done = subprocess.run(
        [sys.executable, "-c", f"open({str(probe)!r}).read()"], capture_output=True, preexec_fn=_as_a_user
    )
    if done.returncode == 0:
        pytest.skip("a file of mode 000 is still read here (root's override could not be dropped)")


@pytest.fixture
def folder(tiny: Tiny, tmp_path: Path) -> Iterator[Path]:
    made = save_local(tiny, tmp_path / "F")
    yield made
    made.chmod(0o755)
    for p in made.iterdir():  # pytest removes it afterwards
        if not p.is_symlink():
            p.chmod(0o755)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "internal error" not in lines[0] and "cannot write the cache" not in lines[0], lines
    return lines[0]


@pytest.mark.usefixtures("modes_obeyed")
@pytest.mark.parametrize(
    "what, change",
    [
        ("weights 000", lambda f: (f / "model.safetensors").chmod(0)),
        ("folder 000", lambda f: f.chmod(0)),
        ("folder 0444", lambda f: f.chmod(0o444)),
    ],
)
def test_an_unreadable_model_is_one_line_naming_the_path(
    folder: Path, what: str, change: Callable[[Path], None]
) -> None:
    change(folder)
    done = run_as_user("vector", "cat", "-m", str(folder))
    assert done.returncode == 6, done.stderr
    line = one_line(done)
    named = "model.safetensors" if what.startswith("weights") else "config.json"
    assert f'cannot use "{folder / named}": Permission denied' in line, line


@pytest.mark.usefixtures("modes_obeyed")
def test_an_unreadable_pickle_is_not_called_unsafe(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "B", weights="bin")
    (folder / "pytorch_model.bin").chmod(0)
    done = run_as_user("vector", "cat", "-m", str(folder))
    assert done.returncode == 6, done.stderr
    line = one_line(done)
    assert "pytorch_model.bin" in line and "Permission denied" in line and "safetensors" not in line, line


@pytest.mark.usefixtures("modes_obeyed")
@pytest.mark.parametrize(
    "command", [["neighbors", "cat"], ["cache", "verify", "--repair"], ["cache", "clear"]]
)
def test_an_unreadable_cache_entry_is_one_line_naming_it(
    folder: Path, caches: dict[str, Path], command: list[str]
) -> None:
    assert run_cli("vector", "cat", "-m", str(folder)).exit_code == 0
    (entry,) = (p.parent for p in (caches["cache"] / "local").glob("*/*/manifest.json"))
    entry.chmod(0)
    try:
        done = run_as_user(*command, *(["-m", str(folder)] if command[0] == "neighbors" else []))
    finally:
        entry.chmod(0o755)
    assert done.returncode == 6, done.stderr
    assert f'cannot use "{entry}' in one_line(done)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _loop(path: Path) -> None:
    path.symlink_to(path.name)


def _dir(path: Path) -> None:
    path.mkdir()


def _socket(path: Path) -> None:
    socket.socket(socket.AF_UNIX).bind(str(path))


@pytest.mark.parametrize("name", ["config.json", "model.safetensors"])
@pytest.mark.parametrize(
    "kind, make, said",
    [
        ("folder", _dir, "is a folder, not a file"),
        ("fifo", _fifo, "is a FIFO (named pipe), not a file"),
        ("loop", _loop, "is a symbolic link that loops"),
    ],
)
def test_a_model_file_that_is_no_file_is_not_called_missing(
    folder: Path, name: str, kind: str, make: Callable[[Path], None], said: str
) -> None:
    (folder / name).unlink()
    make(folder / name)
    result = run_cli("vector", "cat", "-m", str(folder))
    assert result.exit_code == 6, result.stderr
    assert f"{folder / name} {said}" in result.stderr, result.stderr
    assert "has no" not in result.stderr and "holds no" not in result.stderr
