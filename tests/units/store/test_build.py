"""store/build.py: an entry built beside the tokenizer's checks, and open_model.

A build that fails before its fetch thread starts tells that failure, not another. The build's bars reach
their end. A failed build waits for wte's write under way before it removes its temporary folder, leaves no
mapping of a landed wte, and stops the fetch at its next chunk. An entry that cannot be read for want of
permission is told, not rebuilt. A warm open of one entry folder sweeps nothing. A note made during the fetch
reaches the reporter, and the fetch thread never keeps an interrupted run waiting."""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import gpt2emb
from gpt2emb.report import BUILDING
from gpt2emb.store import build, entries, install, writing

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


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
    hashed, seen, ended = writing.hashed, [], threading.Event()

    def fails(rows: np.ndarray) -> np.ndarray:
        raise MemoryError  # while wte's file is being hashed beside (written, where it did not land)

    def slow(path: Path, array: np.ndarray) -> str:
        if path.name == "wte.npy":
            time.sleep(0.5)  # still hashing when the sums fail
            seen.append(path.parent.is_dir())
            ended.set()
        return hashed(path, array)

    monkeypatch.setattr(writing, "hashed", slow)
    monkeypatch.setattr(writing, "row_crcs", fails)
    result = run_cli("vector", "cat")
    assert result.exit_code != 0 and result.stdout == ""
    assert ended.is_set() and seen and all(seen)  # before the command returned, in the folder still there


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
    monkeypatch.setattr(install, "sweep", lambda *args: swept.append(args))
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

    monkeypatch.setattr(writing, "row_crcs", fails)
    monkeypatch.setattr(shutil, "rmtree", remove)
    with pytest.raises(MemoryError):
        gpt2emb.open("gpt2")
    assert removed == [(True, False)]  # wte had landed; nothing of the folder was mapped any more


def test_a_build_that_fails_stops_the_fetch_at_its_next_chunk() -> None:
    stop, bars = threading.Event(), Bars()
    with build._Stoppable(bars, stop).progress("fetching", 10) as task:
        task.advance(4)
        stop.set()  # the build failed meanwhile (a tokenizer found wrong while the tables arrive)
        with pytest.raises(build._Stopped):
            task.advance(4)
    assert bars.done == [4]


def test_a_folder_removed_while_its_files_are_read_is_told_as_changed(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder gone half-way through a first use is said to have changed while being read, with the fix
    of running again, not as the missing file that the read stumbled on."""
    from gpt2emb import registry
    from gpt2emb.errors import BadModel
    from gpt2emb.store import tokenizer_files

    folder = save_local(tiny, tmp_path / "F")

    def removed(*args: object) -> object:
        shutil.rmtree(folder)
        raise FileNotFoundError(2, "No such file or directory", str(folder / "tokenizer.json"))

    monkeypatch.setattr(tokenizer_files, "read", removed)
    with pytest.raises(BadModel) as e:
        build.open_model(registry.resolve(str(folder)))
    assert e.value.message == (
        f"the files of {folder} changed while being read (one was written, cut short or removed); "
        "run the command again once they are whole"
    )


def test_a_folder_that_can_no_longer_be_listed_while_read_is_told_as_changed(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the folder's files cannot be looked at again after a failed read (a permission taken away, say),
    they are not known to be those the run began with: the failure is told as a change, not as damage."""
    import errno

    from gpt2emb import registry
    from gpt2emb.errors import BadModel
    from gpt2emb.store import tokenizer_files

    folder = save_local(tiny, tmp_path / "F")

    def cut(*args: object) -> object:
        raise BadModel(f"{folder}/tokenizer.json is damaged: it is not JSON")

    def unreadable(path: Path) -> str:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    ref = registry.resolve(str(folder))
    monkeypatch.setattr(tokenizer_files, "read", cut)
    monkeypatch.setattr(build, "folder_fingerprint", unreadable)
    with pytest.raises(BadModel) as e:
        build.open_model(ref)
    assert e.value.message.startswith(f"the files of {folder} changed while being read")


def test_an_entry_file_that_cannot_be_read_is_named_in_the_rebuild_s_note(hub: FakeHub, tiny: Tiny) -> None:
    """A file of the entry that is there but cannot be read (a folder in wpe.npy's place) is named with the
    system's reason, and the entry is rebuilt."""
    from gpt2emb import registry

    entry = build.open_model(registry.resolve("gpt2")).path
    (entry / "wpe.npy").unlink()
    (entry / "wpe.npy").mkdir()
    notes: list[str] = []

    class Noting(Bars):
        def note(self, message: str) -> None:
            notes.append(message)

    again = build.open_model(registry.resolve("gpt2"), Noting())
    assert notes == [
        "the cache entry for gpt2 cannot be trusted (wpe.npy cannot be read (Is a directory)); rebuilding it"
    ]
    np.testing.assert_array_equal(again.wte, tiny.wte)
