"""Windows file semantics, simulated: a file that a process has memory-mapped can be neither removed nor
replaced, and a folder holding one can be neither removed nor renamed. The cache must never count on doing
either: `cache clear` says what it could not remove, a rebuild goes beside the old entry, and every answer
stays right.

Every removing or renaming call the cache can make (os.remove, os.unlink, os.rmdir, os.rename, os.replace,
shutil.rmtree; pathlib's unlink, rmdir, rename and replace call those) refuses, as Windows does (a
PermissionError with winerror 32), a path that a live mapping holds. The mappings are the real ones: every
np.load(mmap_mode=...) is recorded with a weak reference to its mmap, so a mapping lasts exactly as long as
something still holds the array, as on Windows. Two rules are simulated: "folder" refuses anything inside a
folder holding a mapped file (stricter than Windows); "files" refuses the mapped files and the folders holding
them, and lets the other files of such a folder go, as Windows does.
"""

from __future__ import annotations

import dataclasses
import errno
import gc
import json
import os
import shutil
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import registry
from gpt2emb.store import build, entries

from conftest import COMMIT, run_cli
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files

REPO = "openai-community/gpt2"
NEWER = "c" * 40
OTHER = "someone/gpt2-copy"
OTHER_COMMIT = "e" * 40
TOP3 = [" cats", " kitten", " dog"]


class Windows:
    """Which paths a live mapping holds, and the patched calls that refuse them."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        self.maps: list[tuple[Path, weakref.ref[Any]]] = []
        self.refused: list[str] = []  # the calls refused, to show the simulation was met

    def mapped(self) -> list[Path]:
        return [path for path, mapping in self.maps if mapping() is not None]

    def holds(self, path: Any) -> bool:
        p = Path(os.path.abspath(os.fspath(path)))
        for f in self.mapped():
            if p == f or p in f.parents:  # the file, or a folder holding it
                return True
            if self.rule == "folder" and f.parent in p.parents:  # anything beside it
                return True
        return False

    def refuse(self, call: str, path: Any) -> None:
        self.refused.append(call)
        error = PermissionError(
            errno.EACCES,
            "The process cannot access the file because it is being used by another process",
            os.fspath(path),
        )
        error.winerror = 32  # type: ignore[attr-defined]  # as Windows raises it: ERROR_SHARING_VIOLATION
        raise error


@pytest.fixture(params=["folder", "files"])
def windows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Windows]:
    win = Windows(request.param)
    real_load = np.load

    def load(file: Any, mmap_mode: Any = None, **kwargs: Any) -> Any:
        array = real_load(file, mmap_mode=mmap_mode, **kwargs)
        if isinstance(array, np.memmap):
            win.maps.append((Path(os.path.abspath(os.fspath(file))), weakref.ref(array._mmap)))  # type: ignore[attr-defined]
        return array

    monkeypatch.setattr(np, "load", load)

    def one_path(name: str) -> None:
        real: Callable[..., Any] = getattr(os, name)

        def patched(path: Any, *args: Any, **kwargs: Any) -> Any:
            # rmtree's own calls name a path inside dir_fd: shutil.rmtree itself is checked below
            if kwargs.get("dir_fd") is None and win.holds(path):
                win.refuse(name, path)
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, patched)

    def two_paths(name: str) -> None:
        real: Callable[..., Any] = getattr(os, name)

        def patched(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
            for path in (src, dst):
                if win.holds(path):
                    win.refuse(name, path)
            return real(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, name, patched)

    for name in ("remove", "unlink", "rmdir"):
        one_path(name)
    for name in ("rename", "replace"):
        two_paths(name)
    real_rmtree = shutil.rmtree

    def rmtree(path: Any, ignore_errors: bool = False, *args: Any, **kwargs: Any) -> None:
        root = Path(os.path.abspath(os.fspath(path)))
        if win.holds(root) or any(root in f.parents for f in win.mapped()):
            if ignore_errors:  # what Windows leaves: we say nothing of it was removed
                return
            win.refuse("rmtree", path)
        real_rmtree(path, ignore_errors, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    yield win


@pytest.fixture(autouse=True)
def only_this_tests_objects() -> Iterator[None]:
    """What the collections after each command (see cli) walk: the objects this test makes. Those of the
    modules and tests before it are set aside (gc.freeze) once their garbage is collected: with torch's
    loaded, a full collection took a quarter of a second."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def cli(*args: str) -> Any:
    """A command in-process; afterwards nothing of it is mapped, as when its process has ended."""
    result = run_cli(*args)
    gc.collect()
    return result


def as_json(*args: str, code: int = 0) -> Any:
    result = cli(*args, "--json")
    assert result.exit_code == code, result.stdout + result.stderr
    return json.loads(result.stdout)


def top3(*args: str) -> list[str]:
    return [n["token"] for n in as_json("neighbors", "cat", "-k", "3", *args)["items"][0]["neighbors"]]


def listed() -> list[str]:
    return [e["path"] for e in as_json("cache", "list")["entries"]]


def folders(caches: dict[str, Path], repo: str = REPO) -> list[str]:
    """The entry folders of a repo on disk, live or not."""
    parent = caches["cache"] / "hub" / repo.replace("/", "--")
    return sorted(p.name for p in parent.iterdir() if p.is_dir() and p.name not in ("refs", "info"))


def cleared(code: int, *model: str) -> dict[str, Any]:
    """`cache clear --json`, checked against the file system: what it says it removed is gone, what it says
    it kept is there."""
    doc: dict[str, Any] = as_json("cache", "clear", *model, code=code)
    assert all(not Path(e["path"]).exists() for e in doc["entries"]), doc
    assert all(Path(k["path"]).is_dir() for k in doc["kept"]), doc
    assert doc["total_bytes"] == sum(e["bytes"] for e in doc["entries"])
    return doc


def live_folder(caches: dict[str, Path], name: str) -> str:
    return str(caches["cache"] / "hub" / "openai-community--gpt2" / name)


def open_gpt2() -> entries.OpenedEntry:
    return build.open_model(registry.resolve("gpt2"))


def damage(m: entries.OpenedEntry) -> None:
    """Zeros over the end of wte.npy: found on the next open (a sampled block) and by cache verify."""
    with (m.path / "wte.npy").open("r+b") as f:
        f.seek(-256, os.SEEK_END)
        f.write(b"\0" * 256)


def test_clear_keeps_an_entry_in_use_whole_and_says_so(
    windows: Windows, hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    hub.repos[OTHER] = Repo(OTHER_COMMIT, hub_files(tiny))
    as_json("neighbors", "cat", "-m", OTHER)  # cached, and not in use
    m = open_gpt2()  # in use: mapped by this process

    doc = cleared(6)
    assert [(e["name"], e["commit"]) for e in doc["entries"]] == [(OTHER, OTHER_COMMIT)]
    assert doc["kept"] == [
        {"name": "gpt2", "repo": REPO, "commit": COMMIT, "path": str(m.path), "reason": "in use"}
    ]
    assert "unlink" in windows.refused
    error = json.loads(cli("cache", "clear", "--json").stderr)["error"]
    assert error == {
        "type": "in_use",
        "code": 6,
        "message": f"could not remove gpt2 ({COMMIT[:12]}): in use; "
        "close the programs using it, then run gpt2emb cache clear again",
    }
    # whole, and still the live entry: it answers, with no network (what main names was cleared with it)
    assert listed() == [str(m.path)]
    hub.fault = lambda method, path: "drop"
    assert top3("--revision", COMMIT) == TOP3
    np.testing.assert_array_equal(m.wte, tiny.wte)

    table = cli("cache", "clear", "gpt2")
    assert table.exit_code == 6
    shown = " ".join(table.stdout.split())
    assert shown.startswith(f"removed nothing from {caches['cache']} could not remove 1 entry, left whole")
    # at 80 columns the entry's long path cannot share a table's row: a record, a line per column
    assert f"model gpt2 commit {COMMIT[:12]} why in use path {m.path}" in shown
    assert table.stderr.strip() == (
        f"gpt2emb: could not remove gpt2 ({COMMIT[:12]}): in use; "
        "close the programs using it, then run gpt2emb cache clear gpt2 again"
    )

    path = m.path
    del m  # the program using it ends
    gc.collect()
    doc = cleared(0)
    assert [(e["name"], e["path"]) for e in doc["entries"]] == [("gpt2", str(path))] and doc["kept"] == []
    assert not list(caches["cache"].rglob("*"))  # nothing at all is left
    assert cli("cache", "clear").stdout.startswith("nothing to remove")


def test_a_damaged_entry_in_use_is_rebuilt_beside_it(
    windows: Windows, hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    m = open_gpt2()
    damage(m)
    result = cli("neighbors", "cat", "-k", "3", "--json")
    assert result.exit_code == 0, result.stderr
    assert [n["token"] for n in json.loads(result.stdout)["items"][0]["neighbors"]] == TOP3
    assert "cannot be trusted" in json.loads(result.stderr)["note"]
    assert folders(caches) == [COMMIT, f"{COMMIT}+1"]  # the old one could not go: the new one is beside it
    # a copy that was replaced never comes back: where Windows lets its manifest go, it is no entry at all
    assert (m.path / "manifest.json").exists() == (windows.rule == "folder")
    live = live_folder(caches, f"{COMMIT}+1")
    assert listed() == [live]
    assert [(e["path"], e["ok"]) for e in as_json("cache", "verify")["entries"]] == [(live, True)]
    again = open_gpt2()
    assert str(again.path) == live and again.commit == COMMIT
    np.testing.assert_array_equal(again.wte, tiny.wte)
    del again  # a refused removal in the sweep keeps its frames, and this model, in a reference cycle
    gc.collect()  # (found when the runs stopped allocating enough to collect by chance)

    doc = cleared(6)  # the old copy is still mapped here
    assert [e["path"] for e in doc["entries"]] == [live]
    assert [(k["path"], k["reason"]) for k in doc["kept"]] == [(str(m.path), "in use")]
    assert listed() == ([str(m.path)] if windows.rule == "folder" else [])
    assert top3() == TOP3  # built again (or, where the damaged copy is still whole, rebuilt beside it)
    assert len(listed()) == 1

    del m  # the old copy is no longer in use: the next open removes it
    gc.collect()
    assert top3() == TOP3
    assert folders(caches) == [f"{COMMIT}+1"] and listed() == [live]


def test_verify_repair_while_the_damaged_entry_is_in_use(
    windows: Windows, hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    m = open_gpt2()
    damage(m)
    (entry,) = as_json("cache", "verify", code=6)["entries"]
    assert (entry["ok"], entry["damaged"]) == (False, ["wte.npy"])

    (entry,) = as_json("cache", "verify", "--repair")["entries"]
    assert (entry["ok"], entry["repaired"]) == (True, "rebuilt")
    assert folders(caches) == [COMMIT, f"{COMMIT}+1"]
    live = live_folder(caches, f"{COMMIT}+1")
    assert listed() == [live]
    assert [(e["path"], e["ok"]) for e in as_json("cache", "verify")["entries"]] == [(live, True)]
    hub.fault = lambda method, path: "drop"  # the repaired entry answers alone
    assert top3() == TOP3
    row = as_json("vector", "id:5", "--full")["items"][0]["vector"]
    np.testing.assert_array_equal(np.float32(row), tiny.wte[5])  # the stored float32, unchanged through JSON

    path = m.path
    del m
    gc.collect()
    doc = cleared(0)
    assert sorted(e["path"] for e in doc["entries"]) == sorted([str(path), live])
    assert not list(caches["cache"].rglob("*"))


def test_refresh_rebuilds_a_moved_branch_while_the_old_commit_is_in_use(
    windows: Windows, hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    m = open_gpt2()  # main's commit, recorded and mapped
    wte = tiny.wte.copy()
    wte[tiny.id("kitten")] = np.random.default_rng(2).normal(0, 1, wte.shape[1])  # no longer like cat
    hub.repos[REPO].push(NEWER, hub_files(dataclasses.replace(tiny, wte=wte)))  # main moves on the Hub
    assert top3() == TOP3  # still the recorded commit
    (moved,) = as_json("cache", "refresh")["revisions"]
    assert (moved["old_commit"], moved["new_commit"], moved["rebuilt"]) == (COMMIT, NEWER, True)
    assert folders(caches) == sorted([COMMIT, NEWER])
    assert " kitten" not in top3()  # main is the newer commit now
    np.testing.assert_array_equal(m.wte, tiny.wte)  # and the old one still serves whoever has it open
    assert top3("--revision", COMMIT) == TOP3

    doc = cleared(6)
    assert [e["commit"] for e in doc["entries"]] == [NEWER]
    assert [(k["commit"], k["reason"]) for k in doc["kept"]] == [(COMMIT, "in use")]
