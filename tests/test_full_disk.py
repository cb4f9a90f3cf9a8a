"""A disk that fills while a cache entry is built: the run answers without the cache, with a note, and leaves
nothing in the cache that a later run would trust; a partial download stays, named in the note with its
size. Every write of a first use fails in turn, as numpy says a write cut short (an OSError of no errno)
and as ENOSPC; then a real small tmpfs, where one can be mounted."""

from __future__ import annotations

import errno
import json
import os
import pathlib
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb.store import partial, writing

from conftest import run_cli, run_process
from fakehub import FakeHub
from tinymodel import Tiny, save_local

NEIGHBORS = [" cats", " kitten", " dog"]


class FullDisk:
    """Fails the nth write into the cache (counting only those), as a full disk fails it: "short", as
    np.save says a write the disk cut short; "enospc", as the system says it of any write, a new folder,
    a file's room reserved or a rename."""

    def __init__(self, root: Path, how: str, n: int) -> None:
        self.root, self.how, self.n, self.count, self.failed = root.resolve(), how, n, 0, ""

    def _ours(self, target: Any) -> bool:
        if isinstance(target, int):  # a descriptor
            try:
                target = os.readlink(f"/proc/self/fd/{target}")
            except OSError:
                return False
        if not isinstance(target, str | os.PathLike):  # a file written: np.save's, or build's hashing one
            target = getattr(getattr(target, "_f", target), "name", None)
        return isinstance(target, str | os.PathLike) and Path(os.path.realpath(target)).is_relative_to(
            self.root
        )

    def wrap(self, function: Callable[..., Any], at: int = 0, short: bool = False) -> Callable[..., Any]:
        def failing(*args: Any, **kwargs: Any) -> Any:
            if self._ours(args[at]) and (short or self.how == "enospc"):
                self.count += 1
                if self.count == self.n:
                    self.failed = f"{function.__name__} {args[at]}"
                    if self.how == "short":
                        raise OSError("32768 requested and 20448 written")  # numpy's words, no errno
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return function(*args, **kwargs)

        return failing

    def patch(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(np, "save", self.wrap(np.save, short=True))
        for name in ("write_text", "write_bytes"):
            monkeypatch.setattr(pathlib.Path, name, self.wrap(getattr(pathlib.Path, name)))
        monkeypatch.setattr(writing._HashingFile, "write", self.wrap(writing._HashingFile.write))
        for name in ("write", "posix_fallocate", "mkdir"):
            monkeypatch.setattr(os, name, self.wrap(getattr(os, name)))
        monkeypatch.setattr(os, "replace", self.wrap(os.replace, at=1))


def entries(cache: Path) -> list[Path]:
    return sorted(p.parent for p in cache.rglob("manifest.json"))


def first_uses(
    caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch, how: str, model: str
) -> Iterator[tuple[int, FullDisk, Any]]:
    """A first use that fails at its 1st, 2nd, ... write into the cache, until one has no write left to
    fail: each disk and the run's result."""
    for n in range(1, 200):
        shutil.rmtree(caches["cache"], ignore_errors=True)
        disk = FullDisk(caches["cache"].parent, how, n)  # the cache folder itself is made in it
        with monkeypatch.context() as patched:
            patched.setenv("GPT2EMB_CACHE_DIR", str(caches["cache"]))
            disk.root = caches["cache"].resolve()
            disk.patch(patched)
            result = run_cli("neighbors", "cat", "-k", "3", "-m", model, "--json")
        yield n, disk, result
        if not disk.failed:
            return
    raise AssertionError("a first use with more than 200 writes")


@pytest.mark.parametrize("how", ["short", "enospc"])
@pytest.mark.parametrize("where", ["hub", "folder"])
def test_a_full_disk_at_any_write_of_a_build_still_answers(
    hub: FakeHub,
    tiny: Tiny,
    caches: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    where: str,
) -> None:
    monkeypatch.setattr(partial, "KEEP_AFTER", 0.0)  # a download kept as it lands, as one that takes a while
    monkeypatch.setattr(partial, "BLOCK", 16384)  # wte's 44 KB: three blocks, each a write and its CRC's
    model = "gpt2" if where == "hub" else str(save_local(tiny, tmp_path / "tiny"))
    failed = 0
    for n, disk, result in first_uses(caches, monkeypatch, how, model):
        said = (n, disk.failed, result.stderr)
        assert result.exit_code == 0, said
        assert [x["token"] for x in json.loads(result.stdout)["items"][0]["neighbors"]] == NEIGHBORS, said
        assert not list(caches["cache"].rglob(".*.tmp-*")), said  # nothing of the failed build stays
        built = entries(caches["cache"])
        if disk.failed and not built:  # the build failed: the run answered without the cache, and said so
            failed += 1
            assert "cannot write the cache in" in result.stderr and "working without it" in result.stderr, (
                said
            )
        if built:  # whatever is in place is whole
            assert run_cli("cache", "verify").exit_code == 0, said
    assert failed >= 5, failed  # each array file of an entry at least


def test_a_partial_download_is_named_in_the_note_and_stays(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The partial file kept while the build ran takes room: the run answers all the same, and the note names
    the file and its size; it stays for a later run to resume."""
    monkeypatch.setattr(partial, "KEEP_AFTER", 0.0)
    monkeypatch.setattr(partial, "BLOCK", 4096)
    disk = FullDisk(caches["cache"].parent, "short", 1)
    with monkeypatch.context() as patched:
        disk.patch(patched)
        result = run_cli("neighbors", "cat", "-k", "3", "--json")
    assert result.exit_code == 0, result.stderr
    assert disk.failed.startswith("save"), disk.failed
    [kept] = caches["cache"].rglob(f"*{partial.SUFFIX}")
    size = kept.stat().st_size
    assert size > 40_000  # wte's and wpe's ranges
    line = " ".join(result.stderr.split())
    assert "a write was cut short (32768 requested and 20448 written): the disk is full, most likely" in line
    assert f"the partial download {kept} ({size / 1e6:.1f} MB) stays, for a later run to use" in line
    hub.requests.clear()
    assert run_cli("neighbors", "cat", "-k", "3", "--json").exit_code == 0  # room again: it is resumed
    assert entries(caches["cache"]) and not kept.exists()


def _mount(where: Path, size: str) -> str | None:
    """A tmpfs of size mounted at where; why not, when it cannot be."""
    where.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        return "mounting a tmpfs needs root and mount(8)"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True
    )
    return None if done.returncode == 0 else f"cannot mount a tmpfs here: {done.stderr.strip()}"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    why = _mount(where, "256k")
    if why is not None:
        pytest.skip(why)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.mark.parametrize("fill", [60_000, 102_400, 120_000, 140_000, 180_000])
def test_a_real_full_disk_still_answers(tiny: Tiny, tmp_path: Path, small_disk: Path, fill: int) -> None:
    """The issue's tmpfs of 256 KB, filled before a first use of a folder: each fill runs out of room at
    another write."""
    folder = save_local(tiny, tmp_path / "tiny")
    (small_disk / "fill").write_bytes(bytes(fill))
    done = run_process(
        "neighbors", "cat", "-k", "3", "-m", str(folder), "--json",
        env={"GPT2EMB_CACHE_DIR": str(small_disk / "cache")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [x["token"] for x in json.loads(done.stdout)["items"][0]["neighbors"]] == NEIGHBORS
    if not entries(small_disk / "cache"):
        assert "cannot write the cache in" in done.stderr, done.stderr
    assert "internal error" not in done.stderr
    assert not list((small_disk / "cache").rglob(".*.tmp-*"))
    if sys.platform == "linux":
        assert os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize < 256_000
