"""store/install.py: a built entry put in place under its commit's lock, and a temporary cache.

A killed build's leftover is removed, but a link named like one is neither followed nor in the way. A warm
open does not wait for another process's lock to sweep replaced copies. A cache that cannot be written gives
a temporary entry, gone when the process ends. A model's file that cannot be read is told as such."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import gpt2emb

from conftest import COMMIT, run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def test_the_temporary_entry_of_a_cache_that_cannot_be_written_is_gone_when_the_process_ends(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unwritable = str(Path(os.devnull) / "cache")
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", unwritable)
    assert (
        run_cli("neighbors", "cat", "-k", "1").exit_code == 0
    )  # in this process too: a mutation run traces it
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-m", "gpt2emb", "neighbors", "cat", "-k", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0 and '" cats"' in done.stdout, done.stderr
    assert "working without it" in done.stderr
    assert list(temp.iterdir()) == []


def test_a_link_named_as_a_killed_build_s_leftover_neither_stops_a_build_nor_loses_what_it_points_at(
    hub: FakeHub, caches: dict[str, Path], tmp_path: Path
) -> None:
    gpt2emb.open("gpt2")
    [manifest] = caches["cache"].rglob("manifest.json")
    entry = manifest.parent
    shutil.rmtree(entry)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("mine")
    (entry.parent / f".{entry.name}.tmp-old").symlink_to(elsewhere)  # not a folder of ours to remove
    killed = entry.parent / f".{entry.name}.tmp-killed"  # a build killed half-way: removed
    killed.mkdir()
    (killed / "wte.npy").write_bytes(b"half")
    result = run_cli("vector", "cat", "--json")
    assert result.exit_code == 0, result.stderr
    assert (entry / "manifest.json").is_file() and (elsewhere / "notes.txt").read_text() == "mine"
    assert not killed.exists()


def test_a_warm_open_does_not_wait_for_another_process_s_lock_to_sweep_replaced_copies(
    hub: FakeHub, caches: dict[str, Path]
) -> None:
    gpt2emb.open("gpt2")
    [manifest] = caches["cache"].rglob("manifest.json")
    entry = manifest.parent
    os.replace(entry, entry.with_name(f"{entry.name}+1"))  # the live one now, as after a rebuild on Windows
    shutil.copytree(entry.with_name(f"{entry.name}+1"), entry)  # the replaced copy, in use then
    holder = subprocess.Popen(  # another process holds the commit's lock (it may be building)
        [sys.executable, "-c", HOLD, str(entry.with_name(f"{entry.name}.lock"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        opened = _Opening()
        assert opened.done.wait(60), "the open waited for the lock"
        assert opened.error is None and entry.is_dir()  # answered; the sweep was skipped, not waited for
    finally:
        holder.communicate("")  # lets it go
    gpt2emb.open("gpt2")
    assert not entry.exists() and entry.with_name(f"{entry.name}+1").is_dir()  # swept once the lock is free


HOLD = """
import sys
from filelock import FileLock
with FileLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


class _Opening:
    """gpt2emb.open("gpt2") in a thread of its own: done is set once it returns or fails."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None

        def run() -> None:
            try:
                gpt2emb.open("gpt2")
            except BaseException as e:  # told in the test, not lost in the thread
                self.error = e
            finally:
                self.done.set()

        threading.Thread(target=run, daemon=True).start()


FOLDER_GONE_FIRST = """
import shutil, sys, types
from gpt2emb.store import install

def register(fn, *args):
    build_register(fn, *args)
    build_register(shutil.rmtree, args[0])  # run first (last in, first out): the folder is gone before

import atexit
build_register = atexit.register
install.atexit = types.SimpleNamespace(register=register)
sys.argv = ["gpt2emb", "neighbors", "cat", "-k", "1"]
from gpt2emb.cli.root import main
main()
"""


def test_the_temporary_entry_gone_before_the_process_ends_is_no_error_at_its_end(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(Path(os.devnull) / "cache"))  # cannot be written
    done = subprocess.run(
        [sys.executable, "-c", FOLDER_GONE_FIRST], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and '" cats"' in done.stdout, done.stderr
    assert "working without it" in done.stderr and "Exception" not in done.stderr, done.stderr


def test_a_model_file_that_cannot_be_read_is_told_as_such_not_as_a_cache_that_cannot_be_written(
    tiny: Tiny, tmp_path: Path, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.store import tokenizer_files

    folder = save_local(tiny, tmp_path / "F")

    def refused(*args: object) -> object:
        raise PermissionError(13, "Permission denied", str(folder / "tokenizer.json"))

    monkeypatch.setattr(tokenizer_files, "read", refused)
    result = run_cli("vector", "cat", "-m", str(folder))
    assert result.exit_code != 0 and result.stdout == ""
    assert str(folder / "tokenizer.json") in result.stderr and "working without it" not in result.stderr


def _holding(lock: Path) -> subprocess.Popen[str]:
    """Another process that holds the lock until its stdin is closed (communicate)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_a_first_use_waits_for_the_lock_another_process_holds(hub: FakeHub, caches: dict[str, Path]) -> None:
    """Processes started together build an entry once: a first use waits while another holds the commit's
    lock (it may be building), for as long as that takes, and then answers."""
    from gpt2emb import registry
    from gpt2emb.store.entries import repo_dir

    parent = repo_dir(registry.resolve("gpt2"))
    parent.mkdir(parents=True)
    holder = _holding(parent / f"{COMMIT}.lock")
    try:
        opened = _Opening()
        assert not opened.done.wait(3), opened.error  # still waiting, longer than a second
    finally:
        holder.communicate("")  # lets it go
    assert opened.done.wait(60) and opened.error is None, opened.error
    assert len(list(caches["cache"].rglob("manifest.json"))) == 1


def test_an_entry_another_process_built_while_this_one_waited_is_opened_not_built_again(
    hub: FakeHub, caches: dict[str, Path]
) -> None:
    """Once the lock is free, a first use that waited for it opens the entry the other process built,
    fetching nothing."""
    from gpt2emb import registry
    from gpt2emb.report import QuietReporter
    from gpt2emb.store import build, checkpoint
    from gpt2emb.store.entries import repo_dir

    ref = registry.resolve("gpt2")
    parent = repo_dir(ref)
    parent.mkdir(parents=True)
    holder = _holding(parent / f"{COMMIT}.lock")
    try:
        opened = _Opening()
        assert not opened.done.wait(1), opened.error
        # the other process builds the entry while it holds the lock
        built = build.build_entry(ref, checkpoint.read_info(ref, COMMIT), parent, QuietReporter())
        served = len(hub.requests)
    finally:
        holder.communicate("")  # lets it go
    assert opened.done.wait(60) and opened.error is None, opened.error
    assert len(hub.requests) == served  # nothing fetched again
    assert [p.parent for p in caches["cache"].rglob("manifest.json")] == [built]


def test_a_lock_not_waited_for_is_tried_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not blocking, the lock is tried once: held by another process at that moment, it is refused, even if
    that process lets it go half a second after the try begins. Once free, it is taken at once."""
    from filelock import FileLock, Timeout

    from gpt2emb.store import install

    holder = _holding(tmp_path / f"{COMMIT}.lock")
    letting_go = threading.Timer(0.5, holder.communicate, [""])
    real_acquire = FileLock.acquire

    def acquire(self: FileLock, *args: Any, **kwargs: Any) -> Any:
        letting_go.start()  # the half second runs from the try itself, not from before the call
        return real_acquire(self, *args, **kwargs)

    monkeypatch.setattr(FileLock, "acquire", acquire)
    try:
        with pytest.raises(Timeout), install.locked(tmp_path, COMMIT, blocking=False):
            pass
    finally:
        monkeypatch.undo()
        if letting_go.ident is None:  # the try never came: let the holder go now
            holder.communicate("")
        else:
            letting_go.join()
    with install.locked(tmp_path, COMMIT, blocking=False):
        assert (tmp_path / f"{COMMIT}.lock").exists()


def test_a_cache_that_is_a_link_to_a_file_is_told_by_the_system_s_reason(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a link to nothing is said to be one: a link to a file that exists is a cache the system cannot
    write for its own reason (not a directory), and the answer comes all the same."""
    (tmp_path / "a file").write_text("not a folder")
    (tmp_path / "link").symlink_to(tmp_path / "a file")
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(tmp_path / "link"))
    result = run_cli("neighbors", "cat", "-k", "1")
    assert result.exit_code == 0 and '" cats"' in result.stdout, result.stderr
    said = " ".join(result.stderr.split())
    assert f"cannot write the cache in {tmp_path / 'link'} (Not a directory); working without it" in said
    assert "symbolic link" not in said


def test_a_replaced_copy_that_cannot_all_go_loses_its_manifest_first(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replaced copy whose wte.npy cannot be removed (mapped by a process on Windows) is no entry any more
    after a sweep: its manifest goes first, and what stays serves only the process that maps it."""
    from gpt2emb.store import install

    gpt2emb.open("gpt2")
    [manifest] = caches["cache"].rglob("manifest.json")
    entry = manifest.parent
    live = entry.with_name(f"{entry.name}+1")
    os.replace(entry, live)  # the live one now, as after a rebuild on Windows
    shutil.copytree(live, entry)  # the replaced copy, in use
    real_unlink = os.unlink

    def unlink(path: str | os.PathLike[str], *args: Any, **kwargs: Any) -> None:
        if Path(path) == entry / "wte.npy":
            raise PermissionError(errno.EACCES, "in use", os.fspath(path))
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    install.sweep(entry.parent, entry.name)
    assert (entry / "wte.npy").is_file() and not (entry / "manifest.json").exists()
    assert (live / "manifest.json").is_file()
