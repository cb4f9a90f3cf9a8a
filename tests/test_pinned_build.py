"""store/build.py, pinned where a mutation run (scripts/mutate.py, seed 13) found its tests loose: the ids a
tokenizer puts around a text (RoBERTa's <s> and </s>), and a build that fails before its fetch thread starts
(a tokenizer the library cannot read) telling that failure, not another; the build's bars reaching their
end; a failed build waiting for wte's write under way before it removes its temporary folder; the temporary
entry of a cache that cannot be written removed when the process ends; an entry that cannot be read for want
of permission told, not rebuilt; a link named as a killed build's leftover, neither followed nor in the way; a
warm open that leaves the sweep of replaced copies to later while another process holds the lock, and sweeps
nothing where there is nothing to sweep; a note made during the fetch reaches the reporter; a fetch thread
that never keeps an interrupted run waiting; no mapping of a landed wte left when a failed build's folder
goes; the temporary entry removed at the end quietly, even where it is gone already; a failed build stopping
the fetch at its next chunk; a model's file that cannot be read told as such, not as a cache that cannot be
written."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import gpt2emb
from gpt2emb.report import BUILDING
from gpt2emb.store import build, entries
from tiny_roberta import train_tokenizer

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def test_the_ids_around_a_text_are_roberta_s_s_and_end() -> None:
    tok = train_tokenizer()
    assert tok.token_to_id("<s>") == 0 and tok.token_to_id("</s>") == 2  # RobertaProcessing's ids
    assert build._wraps(tok.to_str()) == [[0], [2]]


def test_a_tokenizer_the_library_cannot_read_is_told_and_builds_nothing(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "F")
    (folder / "tokenizer.json").write_text('{"model": {"type": "BPE"}}')  # JSON, but no tokenizer
    result = run_cli("vector", "cat", "-m", str(folder))
    assert result.exit_code == 6 and result.stdout == "", result.output
    said = result.stderr
    assert said.startswith(
        f"gpt2emb: {folder / 'tokenizer.json'} is damaged: the tokenizers library cannot read it ("
    )
    assert said.endswith("); save the checkpoint again or use another model\n") and said.count("\n") == 1


class Bars:
    """A reporter that keeps each bar's label, its total and how far it was advanced."""

    def __init__(self) -> None:
        self.bars: list[tuple[str, int]] = []
        self.done: list[int] = []

    def note(self, message: str) -> None:
        pass

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Bars]:
        self.bars.append((label, total))
        self.done.append(0)
        yield self

    def advance(self, n: int) -> None:
        self.done[-1] += n


def test_the_fetch_s_and_the_build_s_bars_reach_their_end(hub: FakeHub, tiny: Tiny) -> None:
    bars = Bars()
    gpt2emb.open("gpt2", reporter=bars)
    assert [label for label, _ in bars.bars] == ["fetching gpt2 embeddings", f"{BUILDING} of gpt2"]
    assert [total for _, total in bars.bars] == bars.done, (bars.bars, bars.done)
    assert bars.bars[0][1] > tiny.wte.nbytes and bars.bars[1][1] > tiny.wte.nbytes


def test_a_failed_build_waits_for_the_write_under_way_before_removing_its_folder(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed, seen, ended = build._hashed, [], threading.Event()

    def fails(rows: np.ndarray) -> np.ndarray:
        raise MemoryError  # while wte's file is being hashed beside (written, where it did not land)

    def slow(path: Path, array: np.ndarray) -> str:
        if path.name == "wte.npy":
            time.sleep(0.5)  # still hashing when the sums fail
            seen.append(path.parent.is_dir())
            ended.set()
        return hashed(path, array)

    monkeypatch.setattr(build, "_hashed", slow)
    monkeypatch.setattr(build, "row_crcs", fails)
    result = run_cli("vector", "cat")
    assert result.exit_code != 0 and result.stdout == ""
    assert ended.is_set() and seen and all(seen)  # before the command returned, in the folder still there


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


def test_an_entry_that_cannot_be_read_for_want_of_permission_is_told_not_rebuilt(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpt2emb.open("gpt2")  # the entry is built
    served, opened, calls = len(hub.requests), entries.open_entry, []

    def refused(*args: object, **kwargs: object) -> object:
        calls.append(args)
        if len(calls) == 1:  # (root reads any file: the refusal is made here)
            raise PermissionError(13, "Permission denied")
        return opened(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "open_entry", refused)
    with pytest.raises(PermissionError):
        gpt2emb.open("gpt2")
    assert len(calls) == 1 and len(hub.requests) == served  # no second build, nothing fetched


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


def test_a_note_made_during_the_fetch_reaches_the_reporter() -> None:
    class Noted(Bars):
        def __init__(self) -> None:
            super().__init__()
            self.notes: list[str] = []

        def note(self, message: str) -> None:
            self.notes.append(message)

    reporter = Noted()
    build._Stoppable(reporter, threading.Event()).note("resuming")
    assert reporter.notes == ["resuming"]


def test_the_fetch_thread_never_keeps_an_interrupted_run_waiting() -> None:
    """A daemon thread: the interpreter ends without waiting for a download under way."""
    release = threading.Event()
    build._Background(release.wait, "gpt2emb-test-fetch")
    try:
        [thread] = [t for t in threading.enumerate() if t.name == "gpt2emb-test-fetch"]
        assert thread.daemon
    finally:
        release.set()


def test_a_warm_open_of_one_entry_folder_sweeps_nothing(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    gpt2emb.open("gpt2")
    swept: list[object] = []
    monkeypatch.setattr(build, "_sweep", lambda *args: swept.append(args))
    gpt2emb.open("gpt2")
    assert swept == []  # no lock taken on a warm open: there is no replaced copy to remove


def test_a_failed_build_leaves_no_mapping_of_its_landed_wte_when_its_folder_goes(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Windows removes no mapped file: the temporary folder would stay, holding wte.npy.)"""
    if not Path("/proc/self/maps").exists():
        pytest.skip("reads Linux's /proc/self/maps")
    removed, rmtree = [], shutil.rmtree

    def fails(rows: np.ndarray) -> np.ndarray:
        raise MemoryError  # after wte landed, its mapping held by the failed frames

    def remove(path: Path, ignore_errors: bool = False) -> None:
        if Path(path).name.startswith("."):  # the build's temporary folder
            mapped = str(path) in Path("/proc/self/maps").read_text()
            removed.append((Path(path / "wte.npy").exists(), mapped))
        rmtree(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(build, "row_crcs", fails)
    monkeypatch.setattr(shutil, "rmtree", remove)
    with pytest.raises(MemoryError):
        gpt2emb.open("gpt2")
    assert removed == [(True, False)]  # wte had landed; nothing of the folder was mapped any more


FOLDER_GONE_FIRST = """
import shutil, sys, types
from gpt2emb.store import build

def register(fn, *args):
    build_register(fn, *args)
    build_register(shutil.rmtree, args[0])  # run first (last in, first out): the folder is gone before

import atexit
build_register = atexit.register
build.atexit = types.SimpleNamespace(register=register)
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


def test_a_build_that_fails_stops_the_fetch_at_its_next_chunk() -> None:
    stop, bars = threading.Event(), Bars()
    with build._Stoppable(bars, stop).progress("fetching", 10) as task:
        task.advance(4)
        stop.set()  # the build failed meanwhile (a tokenizer found wrong while the tables arrive)
        with pytest.raises(build._Stopped):
            task.advance(4)
    assert bars.done == [4]


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
