"""store/landing.py: a first use fetches a float32 wte straight into the entry's wte.npy, which is then the
file np.save would write of it, byte for byte, made as the entry's other files are; the ranges fetched behind
it are copied out before the file is cut to wte's end, once it is no longer mapped (Windows refuses to cut a
mapped file), and neither mapping nor descriptor is left; a download that fails inside says its own error, the
mapping closed at once where no view of it is left; a file in the way is not written through."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpt2emb
from gpt2emb.store import landing

from conftest import FUZZ, run_cli
from fakehub import FakeHub
from tinymodel import Tiny


def saved(array: np.ndarray) -> bytes:
    f = io.BytesIO()
    np.save(f, array, allow_pickle=False)
    return f.getvalue()


@FUZZ
@given(st.lists(st.integers(1, 40), min_size=1, max_size=3))
def test_the_header_is_the_one_np_save_writes(shape: list[int]) -> None:
    array = np.zeros(shape, np.float32)
    assert saved(array) == landing.header(tuple(shape)) + array.tobytes()


def test_a_first_use_s_wte_npy_is_np_save_s_file_of_the_table(
    hub: FakeHub, caches: dict[str, Path], tiny: Tiny
) -> None:
    gpt2emb.open("gpt2")
    [manifest] = caches["cache"].rglob("manifest.json")
    written = (manifest.parent / "wte.npy").read_bytes()
    modes = {f: (manifest.parent / f).stat().st_mode for f in ("wte.npy", "wpe.npy")}
    assert modes["wte.npy"] == modes["wpe.npy"]  # made as open() makes a file, as the entry's others are
    assert written == saved(np.ascontiguousarray(tiny.wte, np.float32))  # landed, then cut to wte's end
    assert json.loads(manifest.read_text())["sha256"]["wte.npy"] == hashlib.sha256(written).hexdigest()
    np.testing.assert_array_equal(  # wpe came behind wte in the landing file, and was copied out whole
        np.load(manifest.parent / "wpe.npy"), np.ascontiguousarray(tiny.wpe, np.float32)
    )
    assert run_cli("cache", "verify").exit_code == 0


def open_files() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed since
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
    return found


def test_the_bytes_behind_wte_are_cut_off_and_the_buffer_released(tmp_path: Path) -> None:
    path = tmp_path / "wte.npy"
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    with landing.landed(path, (3, 4), rows.nbytes + 8) as into:
        into[: rows.nbytes] = rows.tobytes()
        into[rows.nbytes :] = b"behind!!"
        behind = bytes(into[rows.nbytes :])  # copied out before the block ends
    assert behind == b"behind!!"
    with pytest.raises(ValueError, match="released"):
        into[0]
    np.testing.assert_array_equal(np.load(path), rows)
    assert path.read_bytes() == saved(rows)
    if Path("/proc/self/maps").exists():  # Linux: neither mapped nor open any more
        assert str(path) not in Path("/proc/self/maps").read_text() and str(path) not in open_files()


def test_a_failure_inside_is_raised_as_it_is_while_views_of_the_buffer_live(tmp_path: Path) -> None:
    held = []
    with (
        pytest.raises(ConnectionError, match="dropped"),
        landing.landed(tmp_path / "wte.npy", (3, 4), 48) as into,
    ):
        held.append(np.frombuffer(into, np.uint8))  # as a failed download's frames may hold
        raise ConnectionError("the connection dropped")
    assert held[0].size == 48


def test_a_file_in_the_way_is_not_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"mine")
    (tmp_path / "wte.npy").symlink_to(target)
    with pytest.raises(FileExistsError), landing.landed(tmp_path / "wte.npy", (3, 4), 48):
        pass
    assert target.read_bytes() == b"mine"


def test_a_failure_inside_with_no_view_left_closes_the_mapping_at_once(tmp_path: Path) -> None:
    """(On Windows a mapped file cannot be removed: the build's temporary folder goes right after.)"""
    with pytest.raises(ConnectionError), landing.landed(tmp_path / "wte.npy", (3, 4), 48) as into:
        raise ConnectionError("the connection dropped")
    with pytest.raises(ValueError, match="released"):
        into[0]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
def test_the_file_is_cut_only_once_no_longer_mapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(Windows refuses to cut a file that is mapped.)"""
    path, cuts, ftruncate = tmp_path / "wte.npy", [], os.ftruncate

    def cut(fd: int, length: int) -> None:
        cuts.append((length, str(path) in Path("/proc/self/maps").read_text()))
        ftruncate(fd, length)

    monkeypatch.setattr(os, "ftruncate", cut)
    with landing.landed(path, (3, 4), 48 + 8) as into:
        into[:] = bytes(range(56))
    assert cuts[-1] == (len(landing.header((3, 4))) + 48, False)  # to wte's end, unmapped by then


class _Header(io.BytesIO):
    """A file that keeps np.save's first write (the header) and refuses the rows after it."""

    def write(self, data: object) -> int:
        if self.tell():
            raise EOFError
        return super().write(data)  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", [(50257, 768), (50257, 1600), (151936, 8192), (1, 1)])
def test_the_header_of_real_shapes_is_np_save_s(shape: tuple[int, int]) -> None:
    f = _Header()
    with pytest.raises(EOFError):  # the rows of a table no test need hold: one float32 broadcast
        np.save(f, np.broadcast_to(np.float32(0), shape), allow_pickle=False)
    assert f.getvalue() == landing.header(shape)


def written_files(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files a build writes from now on (store/writing.py's write), as they are written."""
    from gpt2emb.store import writing

    written, write = [], writing.write

    def spy(path: Path, content: bytes | np.ndarray) -> str:
        written.append(path.name)
        return write(path, content)

    monkeypatch.setattr(writing, "write", spy)
    return written


def test_an_f32_wte_from_the_hub_lands_and_is_never_written(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    written = written_files(monkeypatch)
    gpt2emb.open("gpt2")
    assert "wpe.npy" in written and "wte.npy" not in written


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="macOS: nothing lands")
def test_a_disk_too_full_for_the_landing_file_costs_the_cache_not_the_answer(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its room is reserved before it is mapped: a full disk is ENOSPC there, never SIGBUS in the download."""
    reserve, calls = os.posix_fallocate, []

    def full(fd: int, offset: int, length: int) -> None:
        calls.append(length)
        if len(calls) == 1:  # the cache's disk is full; the temporary folder's is not
            raise OSError(errno.ENOSPC, "No space left on device")
        reserve(fd, offset, length)

    monkeypatch.setattr(os, "posix_fallocate", full)
    result = run_cli("neighbors", "cat", "-k", "1", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["items"][0]["neighbors"][0]["token"] == " cats"
    assert "No space left on device" in result.stderr and "working without it" in result.stderr
    assert len(calls) == 2 and list(caches["cache"].rglob("manifest.json")) == []


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
def test_a_download_cut_inside_releases_the_buffer_at_once(tmp_path: Path) -> None:
    """partial.fetch hands each range's part to the fill in a block that releases it, even as the fill fails:
    the failure's frames hold no view, and the mapping is closed at once."""
    from gpt2emb.store import partial

    def cut(start: int, part: memoryview, landed: object) -> None:
        part[:8] = b"arrived!"
        raise ConnectionError("the connection dropped")

    path = tmp_path / "wte.npy"
    with pytest.raises(ConnectionError) as failed, landing.landed(path, (3, 4), 48) as into:
        partial.fetch(cut, [(0, 48)], None, None, into)
    assert failed.value.__traceback__ is not None  # its frames are still at hand
    assert str(path) not in Path("/proc/self/maps").read_text()


def test_where_no_room_can_be_reserved_nothing_lands_and_a_file_that_grows_serves_windows(
    hub: FakeHub, caches: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without posix_fallocate on a system other than Windows (macOS), a mapped page that finds the disk full
    would kill the process: wte is received into memory and written, as before. On Windows (simulated: the
    file grows to its size, its room the file system's) landing works as everywhere."""
    monkeypatch.delattr(os, "posix_fallocate", raising=False)
    assert not landing.possible()
    written = written_files(monkeypatch)
    gpt2emb.open("gpt2")
    assert "wte.npy" in written
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    with landing.landed(tmp_path / "wte.npy", (3, 4), rows.nbytes + 8) as into:
        into[: rows.nbytes] = rows.tobytes()
    assert (tmp_path / "wte.npy").read_bytes() == saved(rows)
