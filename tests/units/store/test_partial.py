"""store/partial.py: an interrupted first use resumes from the bytes it kept.

The bytes a first use fetched are kept beside the cache entries in a partial file named by commit and ETag,
and the next first use fetches only the rest. Nothing partial is ever used as an entry, whatever lies in the
partial file's place. A download kept whole is not asked of the Hub again, a kept file of other ranges is
started anew, a download cut twice resumes after both runs' blocks, and the kept file is closed whatever
happens to the disk. A download whole within KEEP_AFTER is not kept."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpt2emb import registry
from gpt2emb.store import build, partial

from conftest import FUZZ, run_cli
from fakehub import FakeHub, Fault
from tinymodel import Tiny

CHECKPOINT = "model.safetensors"


def test_a_download_kept_whole_is_not_fetched_again(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.store import install, partial

    monkeypatch.setattr(partial, "KEEP_AFTER", 0.0)  # kept from its start, as a download that takes a while

    def stopped(*args: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C once every byte arrived, before the entry went in place

    with monkeypatch.context() as patched:
        patched.setattr(install, "install", stopped)
        with pytest.raises(KeyboardInterrupt):
            build.open_model(registry.resolve("gpt2"))
    [kept] = caches["cache"].rglob("*.partial")
    hub.requests.clear()
    result = run_cli("vector", "cat", "--json")
    assert result.exit_code == 0, result.stderr
    assert [r for r in hub.requests if CHECKPOINT in r[1] and r[0] == "GET"] == []
    assert not kept.exists()  # in the entry now


def test_a_kept_file_of_other_ranges_is_never_read_past_what_this_download_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partial file whose header names other ranges (a gpt2emb that fetched other tensors) is started
    anew: its blocks, whole and matching their CRC-32s though they are, hold other bytes, and must not be
    read back after the blocks that this download wrote before it too was cut."""
    from gpt2emb.store import partial

    source = _blocks_of_4k(monkeypatch, 3, 64 * 1024)
    monkeypatch.setattr(partial, "KEEP_AFTER", 0.0)  # the earlier download, whole, is kept
    path = tmp_path / "c0ffee.etag.partial"

    def fill_from(data: bytes, cut_after: int | None = None) -> Any:
        def fill(start: int, into: memoryview, landed: Any) -> None:
            for at in range(0, len(into), 4096):
                if cut_after is not None and start + at >= cut_after:
                    raise ConnectionError("the connection dropped")
                n = min(4096, len(into) - at)
                into[at : at + n] = data[start + at : start + at + n]
                landed(n)

        return fill

    other = [(0, 40_000)]  # the ranges an earlier download asked, kept whole
    partial.fetch(fill_from(bytes(reversed(source))), other, path, None)
    wanted = [(100, 20_000), (30_000, 20_000)]  # 40,000 bytes too
    with pytest.raises(ConnectionError):
        partial.fetch(fill_from(source, cut_after=100 + 8192), wanted, path, None)
    got = partial.fetch(fill_from(source), wanted, path, None)
    assert bytes(got) == source[100:20_100] + source[30_000:50_000]


def _blocks_of_4k(monkeypatch: pytest.MonkeyPatch, seed: int, n: int = 40_000) -> bytes:
    """Blocks of 4 KiB; n random bytes to fetch."""
    from gpt2emb.store import partial

    monkeypatch.setattr(partial, "BLOCK", 4096)
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _counting_fill(data: bytes, sent: list[int], cut_after: int | None = None, chunk: int = 1000) -> Any:
    def fill(start: int, into: memoryview, landed: Any) -> None:
        for at in range(0, len(into), chunk):
            if cut_after is not None and start + at >= cut_after:
                raise ConnectionError("the connection dropped")
            n = min(chunk, len(into) - at)
            into[at : at + n] = data[start + at : start + at + n]
            sent[0] += n
            landed(n)

    return fill


def test_a_download_cut_twice_resumes_after_all_that_both_runs_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.store import partial

    source = _blocks_of_4k(monkeypatch, 4)
    path, spans = tmp_path / "c0ffee.etag.partial", [(0, 40_000)]
    for cut in (9_000, 21_000):  # blocks 0-1 kept, then 2-4 as well
        with pytest.raises(ConnectionError):
            partial.fetch(_counting_fill(source, [0], cut), spans, path, None)
    sent = [0]
    assert bytes(partial.fetch(_counting_fill(source, sent), spans, path, None)) == source
    assert sent[0] == 40_000 - 5 * 4096  # only what follows the five whole blocks


def test_the_kept_file_is_closed_whatever_descriptor_it_got(tmp_path: Path) -> None:
    """With the standard input closed, the partial file gets descriptor 0: it is closed all the same (on
    Windows an open file cannot be removed once the entry is in place)."""
    import subprocess
    import sys

    program = f"""
import os
from pathlib import Path
from gpt2emb.store import partial
os.close(0)
data = bytes(range(256)) * 40
got = partial.fetch(lambda s, into, landed: (into.__setitem__(slice(None), data[s : s + len(into)]),
                    landed(len(into))), [(0, len(data))], Path({str(tmp_path / "x.partial")!r}), None)
assert bytes(got) == data
try:
    os.fstat(0)
except OSError:
    print("closed")
else:
    print("open")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "closed\n"), done.stderr


def test_a_disk_that_fails_while_keeping_closes_the_kept_file_and_the_download_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    from gpt2emb.store import partial

    source = _blocks_of_4k(monkeypatch, 5)
    monkeypatch.setattr(partial, "KEEP_AFTER", 0.0)  # kept from its start, as a download that takes a while
    failed, closed, close = [], [], os.close

    def full(fd: int, data: object) -> None:
        failed.append(fd)
        raise OSError(errno.ENOSPC, "No space left on device")

    def closing(fd: int) -> None:
        closed.append(fd)
        close(fd)

    monkeypatch.setattr(partial, "_write_all", full)
    monkeypatch.setattr(os, "close", closing)
    got = partial.fetch(_counting_fill(source, [0]), [(0, 40_000)], tmp_path / "c0ffee.etag.partial", None)
    assert bytes(got) == source  # the download is whole all the same
    assert len(failed) == 1 and closed.count(failed[0]) == 1  # the keeping stopped, its file closed once


def test_a_download_whole_within_its_first_second_is_not_kept_and_one_cut_keeps_what_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.store import partial

    source = _blocks_of_4k(monkeypatch, 6)
    monkeypatch.setattr(partial, "KEEP_AFTER", 60.0)
    spans, path = [(0, 40_000)], tmp_path / "c0ffee.etag.partial"
    assert bytes(partial.fetch(_counting_fill(source, [0]), spans, path, None)) == source
    assert not path.exists()  # nothing kept, and no file that keeps nothing
    with pytest.raises(ConnectionError):
        partial.fetch(_counting_fill(source, [0], 21_000), spans, path, None)
    assert path.stat().st_size == partial._HEAD.size + 5 * (4096 + partial._CRC.size)  # all that landed
    sent = [0]
    assert bytes(partial.fetch(_counting_fill(source, sent), spans, path, None)) == source
    assert sent[0] == 40_000 - 5 * 4096


def test_a_download_cut_at_a_block_s_end_keeps_that_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.store import partial

    source = _blocks_of_4k(monkeypatch, 7)
    path = tmp_path / "c0ffee.etag.partial"

    for keep_after in (0.0, 60.0):  # kept as they land, or all at the cut
        monkeypatch.setattr(partial, "KEEP_AFTER", keep_after)
        partial.remove(path)
        with pytest.raises(ConnectionError):
            partial.fetch(_counting_fill(source, [0], 5 * 4096, chunk=4096), [(0, 40_000)], path, None)
        assert path.stat().st_size == partial._HEAD.size + 5 * (4096 + partial._CRC.size), keep_after


class Advanced:
    """A progress task that counts what it is told arrived."""

    def __init__(self) -> None:
        self.n = 0

    def advance(self, n: int) -> None:
        self.n += n


def test_the_bar_counts_every_byte_kept_before_and_fetched_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.store import partial

    source = _blocks_of_4k(monkeypatch, 8)
    path, spans = tmp_path / "c0ffee.etag.partial", [(0, 40_000)]
    with pytest.raises(ConnectionError):
        partial.fetch(_counting_fill(source, [0], 21_000), spans, path, None)  # 5 blocks kept
    task = Advanced()
    assert bytes(partial.fetch(_counting_fill(source, [0]), spans, path, task)) == source
    assert task.n == 40_000  # the kept bytes at once, then each chunk as it lands


def test_the_partial_file_is_made_as_open_makes_a_file(tmp_path: Path) -> None:
    from gpt2emb.store import partial

    path, beside = tmp_path / "c0ffee.etag.partial", tmp_path / "beside"
    beside.write_bytes(b"")
    with pytest.raises(ConnectionError):
        partial.fetch(_counting_fill(bytes(3 << 20), [0], 2 << 20), [(0, 3 << 20)], path, None)
    assert path.stat().st_mode == beside.stat().st_mode  # 0o666 less the umask


def test_a_build_without_keeping_leaves_another_commit_s_partial_file_alone(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the Hub gives no ETag nothing is kept, and no partial file is opened (which would replace any
    other): the entry once built removes its own commit's partial files only."""
    from gpt2emb.store import hub as hub_module
    from gpt2emb.store import partial

    monkeypatch.setattr(hub_module, "etag", lambda repo, filename, commit: None)
    gpt2emb_cache = caches["cache"]
    gpt2emb_cache.mkdir(parents=True, exist_ok=True)
    build.open_model(registry.resolve("gpt2"))
    [manifest] = gpt2emb_cache.rglob("manifest.json")
    entry = manifest.parent
    other = entry.parent / f"{'f' * 40}.abc{partial.SUFFIX}"
    mine = entry.parent / f"{entry.name}.abc{partial.SUFFIX}"
    other.write_bytes(b"kept")
    mine.write_bytes(b"kept")
    shutil.rmtree(entry)
    build.open_model(registry.resolve("gpt2"))
    assert other.exists() and not mine.exists()


def test_a_stale_kept_file_of_other_ranges_is_replaced_by_one_that_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pinned by the bytes a resume fetches (issue 50): after a kept file whose header names other ranges,
    the download cut after two blocks keeps them in a file the next run resumes: 31,808 of 40,000 bytes
    fetched again, not all of them."""
    from gpt2emb.store import partial

    source = _blocks_of_4k(monkeypatch, 9, 64 * 1024)
    monkeypatch.setattr(partial, "KEEP_AFTER", 0.0)
    path = tmp_path / "c0ffee.etag.partial"
    partial.fetch(_counting_fill(bytes(reversed(source)), [0]), [(0, 40_000)], path, None)  # kept whole
    wanted = [(100, 20_000), (30_000, 20_000)]  # 40,000 bytes too
    with pytest.raises(ConnectionError):
        partial.fetch(_counting_fill(source, [0], cut_after=100 + 8192), wanted, path, None)
    sent = [0]
    got = partial.fetch(_counting_fill(source, sent), wanted, path, None)
    assert bytes(got) == source[100:20_100] + source[30_000:50_000]
    assert sent[0] == 40_000 - 2 * 4096 == 31_808


def test_a_kept_file_on_descriptor_0_resumes(tmp_path: Path) -> None:
    """With the standard input closed the partial file gets descriptor 0 (issue 50): what landed is kept
    there all the same, and the next run fetches only the rest."""
    import subprocess
    import sys

    program = f"""
import os
from pathlib import Path
from gpt2emb.store import partial
os.close(0)
partial.BLOCK, partial.KEEP_AFTER = 4096, 0.0
data, path, sent = bytes(range(256)) * 160, Path({str(tmp_path / "c0ffee.etag.partial")!r}), [0]
def fill(cut):
    def fill(start, into, landed):
        for at in range(0, len(into), 1000):
            if start + at >= cut:
                raise ConnectionError("the connection dropped")
            n = min(1000, len(into) - at)
            into[at : at + n] = data[start + at : start + at + n]
            sent[0] += n
            landed(n)
    return fill
try:
    partial.fetch(fill(21_000), [(0, len(data))], path, None)
except ConnectionError:
    pass
sent[0] = 0
assert bytes(partial.fetch(fill(len(data)), [(0, len(data))], path, None)) == data
print(sent[0])
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == 40_960 - 5 * 4096  # five whole blocks kept on descriptor 0


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 4 KiB: the tiny model's 44 KB wte spans eleven of them, as gpt2's 154 MB spans 147 MiB."""
    monkeypatch.setattr(partial, "BLOCK", 4096)


def cut_table_read() -> Callable[[str, str], Fault]:
    """Cut the first read of wte's range short (after the two reads of the header): half of it arrives."""
    gets = [0]

    def fault(method: str, path: str) -> Fault:
        if method != "GET" or not path.split("?")[0].endswith(CHECKPOINT):
            return None
        gets[0] += 1
        return "cut" if gets[0] == 3 else None

    return fault


def answer() -> dict[str, object]:
    result = run_cli("neighbors", "cat", "-k", "5", "--json")
    assert result.exit_code == 0, result.output
    answer: dict[str, object] = json.loads(result.stdout)
    return answer


def partials(cache: Path) -> list[Path]:
    return sorted(cache.rglob(f"*{partial.SUFFIX}"))


def entries(cache: Path) -> list[Path]:
    return sorted(p.parent for p in cache.rglob("manifest.json"))


@pytest.mark.usefixtures("small_blocks")
def test_an_interrupted_first_use_resumes_with_the_missing_bytes_only(
    hub: FakeHub, caches: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = answer()  # a clean first use: what it fetches of the checkpoint, and its answer
    once = hub.file_bytes[CHECKPOINT]
    shutil.rmtree(caches["cache"])
    shutil.rmtree(caches["hf"])
    hub.file_bytes.clear()

    hub.fault = cut_table_read()
    broken = run_cli("neighbors", "cat", "-k", "5", "--json")
    assert broken.exit_code == 5 and "resumes the download" in broken.stderr
    assert entries(caches["cache"]) == []  # nothing partial is an entry
    [kept] = partials(caches["cache"])
    assert kept.name.startswith(f"{hub.repos['openai-community/gpt2'].commit}.")
    interrupted = hub.file_bytes[CHECKPOINT]
    blocks = (kept.stat().st_size - partial._HEAD.size) // (4096 + partial._CRC.size)  # each with its CRC-32

    hub.fault = None
    hub.file_bytes.clear()
    assert answer() == clean
    resumed = hub.file_bytes[CHECKPOINT]
    print(f"checkpoint bytes: one first use {once:,}; interrupted {interrupted:,} + resumed {resumed:,}")
    assert interrupted + resumed <= 1.15 * once
    assert blocks >= 4 and resumed <= once - blocks * 4096  # what was kept was not fetched again
    assert partials(caches["cache"]) == [] and len(entries(caches["cache"])) == 1


@pytest.mark.usefixtures("small_blocks")
def test_a_partial_file_of_another_etag_is_deleted(hub: FakeHub, caches: dict[str, Path], tiny: Tiny) -> None:
    hub.fault = cut_table_read()
    with pytest.raises(Exception, match="fetching it from the Hub failed"):
        build.open_model(registry.resolve("gpt2"))
    [kept] = partials(caches["cache"])
    stale = kept.with_name(f"{hub.repos['openai-community/gpt2'].commit}.0ther3tag{partial.SUFFIX}")
    kept.rename(stale)
    other_commit = kept.with_name(f"{'f' * 40}.abc{partial.SUFFIX}")
    other_commit.write_bytes(b"x" * 10)
    hub.fault = None
    m = build.open_model(registry.resolve("gpt2"))
    np.testing.assert_array_equal(m.wte, tiny.wte)
    assert partials(caches["cache"]) == []


@pytest.mark.usefixtures("small_blocks")
def test_cache_clear_removes_partial_files(hub: FakeHub, caches: dict[str, Path]) -> None:
    hub.fault = cut_table_read()
    assert run_cli("neighbors", "cat", "--json").exit_code != 0
    [kept] = partials(caches["cache"])
    listed = run_cli("cache", "list", "--json")
    assert listed.exit_code == 0, listed.output
    shown = json.loads(listed.stdout)
    assert [e for e in shown["partial"]] == [
        {"name": "gpt2", "repo": "openai-community/gpt2", "commit": kept.name.split(".")[0],
         "path": str(kept), "size_bytes": kept.stat().st_size}
    ]  # fmt: skip
    table = run_cli("cache", "list")
    said = " ".join(table.stdout.split())
    assert "0 entries, 0.0 MB, and 1 partial download" in said and "0123456789ab, partial" in said, said
    cleared = run_cli("cache", "clear", "--json")
    assert cleared.exit_code == 0, cleared.output
    assert partials(caches["cache"]) == []


DAMAGE = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, 60_000)),  # shorter or longer than it was
    st.tuples(st.just("flip"), st.integers(0, 60_000)),  # a byte changed
    st.tuples(st.just("garbage"), st.integers(0, 60_000)),  # other bytes of any length
    st.tuples(st.just("symlink"), st.just(0)),  # a link to a file of the user's
    st.tuples(st.just("folder"), st.just(0)),  # a folder in its place
    st.tuples(st.just("empty"), st.just(0)),
)


class Rows:
    """The tiny model's rows, with a short repr (hypothesis prints the arguments of a failing example)."""

    def __init__(self, tiny: Tiny) -> None:
        self.wte, self.wpe = tiny.wte, tiny.wpe

    def __repr__(self) -> str:
        return "Rows(tiny)"


@pytest.fixture
def rows(tiny: Tiny) -> Rows:
    return Rows(tiny)


@FUZZ
@given(damage=DAMAGE)
@pytest.mark.usefixtures("small_blocks")
def test_no_partial_file_is_ever_used_as_it_stands(
    hub: FakeHub, caches: dict[str, Path], rows: Rows, tmp_path: Path, damage: tuple[str, int]
) -> None:
    """Whatever lies where the partial file was kept, the next first use answers with the Hub's rows, leaves
    a linked file of the user's as it was, and removes the partial file."""
    for folder in caches.values():
        shutil.rmtree(folder, ignore_errors=True)
    hub.fault = cut_table_read()
    with pytest.raises(Exception, match="fetching it from the Hub failed"):
        build.open_model(registry.resolve("gpt2"))
    hub.fault = None
    [kept] = partials(caches["cache"])
    what, n = damage
    theirs = tmp_path / "theirs.bin"
    theirs.write_bytes(b"the user's own file")
    data = kept.read_bytes()
    if what == "cut":
        kept.write_bytes((data + os.urandom(n))[:n])
    elif what == "flip":
        flipped = bytearray(data)
        flipped[n % len(data)] ^= 0x40
        kept.write_bytes(bytes(flipped))
    elif what == "garbage":
        kept.write_bytes(os.urandom(n))
    elif what == "symlink":
        kept.unlink()
        kept.symlink_to(theirs)
    elif what == "folder":
        kept.unlink()
        (kept / "inside").mkdir(parents=True)
    else:
        kept.write_bytes(b"")
    m = build.open_model(registry.resolve("gpt2"))
    np.testing.assert_array_equal(m.wte, rows.wte)
    np.testing.assert_array_equal(m.wpe, rows.wpe)
    assert theirs.read_bytes() == b"the user's own file"
    assert partials(caches["cache"]) == []
