"""targets.py pinned where a mutation run (scripts/mutate.py) found it loose: a folder this user cannot write
refused by name before anything is written (root's override dropped, as test_unreadable.py does), Windows'
device names being plain names elsewhere, a new file's mode and the process's umask left as they were, a
failed write worded, and a target that a symbolic link re-pointed while it was written."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpt2emb import targets
from gpt2emb.errors import UsageError
from test_unreadable import modes_obeyed, run_as_user  # noqa: F401  (modes_obeyed: a fixture used by name)

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


@pytest.mark.skipif(os.name == "nt", reason="Windows keeps these names for its devices")
@pytest.mark.parametrize("name", ["nul.txt", "COM1", "con"])
def test_windows_device_names_are_plain_file_names_elsewhere(hub: FakeHub, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    result = run_cli("export", "--format", "word2vec", "--limit", "2", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith("2 32\n")  # 2 rows of the tiny model's 32 numbers


@pytest.fixture
def umask_022() -> Iterator[None]:
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.mark.usefixtures("umask_022")
def test_new_files_are_made_to_be_shared_and_the_umask_is_left_alone(hub: FakeHub, tmp_path: Path) -> None:
    folder = tmp_path / "projector"
    result = run_cli("export", "--format", "projector", "-o", str(folder))
    assert result.exit_code == 0, result.stderr
    assert [(folder / f).stat().st_mode & 0o777 for f in ("vectors.tsv", "metadata.tsv")] == [0o644, 0o644]
    assert os.umask(0o022) == 0o022  # the process's umask, read back: as it was


@pytest.mark.usefixtures("modes_obeyed")
@pytest.mark.parametrize("there", [True, False])
def test_a_folder_this_user_cannot_write_is_refused_by_name(tiny: Tiny, tmp_path: Path, there: bool) -> None:
    model = save_local(tiny, tmp_path / "model")
    locked = tmp_path / "locked"
    locked.mkdir()
    out = locked / "out.txt"
    if there:
        out.write_text("mine")
    locked.chmod(0o555)
    try:
        done = run_as_user("export", "-m", str(model), "--format", "word2vec", "-o", str(out))
    finally:
        locked.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"gpt2emb: cannot write -o {out}: {locked} is not writable; choose a folder you can write to"
    )
    assert os.listdir(locked) == (["out.txt"] if there else [])
    assert not there or out.read_text() == "mine"


def test_a_failed_write_is_worded_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    out.write_text("mine")

    def fill(f: Any) -> None:
        f.write(b"<html>")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # the disk full, as a write finds it

    with pytest.raises(UsageError) as raised:
        targets.save(targets.Target(out, f"--html {out}", "give a file's path"), fill)
    assert str(raised.value) == (
        f"cannot write --html {out}: {os.strerror(errno.ENOSPC)}; choose a folder you can write to"
    )
    assert os.listdir(tmp_path) == ["page.html"] and out.read_text() == "mine"


def test_a_link_pointed_elsewhere_while_written_is_refused(tmp_path: Path) -> None:
    first, second, link = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "out.txt"
    first.write_text("a")
    second.write_text("b")
    link.symlink_to(first)

    def fill(f: Any) -> None:
        f.write(b"rows")
        link.unlink()
        link.symlink_to(second)  # re-pointed while the rows are written

    with pytest.raises(UsageError) as raised:
        targets.write([(targets.Target(link, f"-o {link}", "give a file's path"), fill)])
    assert str(raised.value) == f"-o {link} changed while it was written; run the command again"
    assert (first.read_text(), second.read_text()) == ("a", "b")  # neither replaced
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt", "out.txt"]  # no temporary left
