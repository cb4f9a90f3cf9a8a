"""A download kept while it arrives, so that an interrupted first use resumes where it broke off.

The byte ranges a build fetches of one checkpoint file go, as they land, into a partial file beside the
model's cache entries, named by the commit and the file's ETag: `<commit>.<etag>.partial` (from the download's
first second on, and all that landed of one cut short sooner: KEEP_AFTER). Nothing partial is
ever used as it stands: the file is a header (what ranges it keeps) and blocks of 1 MiB, each followed by
its CRC-32; the next first use of the same commit and ETag takes the blocks that are whole and match their
CRC-32, fetches only the bytes after them, and checks each range's length as any download's. A partial file
of another commit or ETag, or that is no regular file, is deleted; the entry once built removes its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import struct
import time
import zlib
from pathlib import Path

from gpt2emb.report import Task
from gpt2emb.store.hub import FillRange

SUFFIX = ".partial"
MAGIC = b"gpt2emb-partial1"
BLOCK = 1 << 20
# a download is kept from its first second on: one that comes whole sooner is fetched again sooner than its
# partial file is written (as many pages as the download's, and memory touched for the first time can be slow
# to come by: landing.py); one cut short within it keeps all that landed (one killed keeps nothing of it)
KEEP_AFTER = 1.0
_HEAD = struct.Struct("<16sIQ")  # magic, CRC-32 of the ranges it keeps, their length in all
_CRC = struct.Struct("<I")


def name_of(commit: str, etag: str) -> str:
    """The partial file's name: the ETag in the characters a file name may hold anywhere."""
    return f"{commit}.{re.sub(r'[^0-9A-Za-z_-]', '', etag)[:80]}{SUFFIX}"


def found(parent: Path) -> list[Path]:
    """The partial files beside a model's entries."""
    with contextlib.suppress(OSError):
        return sorted(p for p in parent.glob(f"*{SUFFIX}") if not p.name.startswith("."))
    return []


def commit_of(path: Path) -> str:
    return path.name.split(".", 1)[0]


def staying(parent: Path, commit: str) -> str:
    """What a note adds of a commit's partial files that keep something and stay: each, with its size."""
    told = ""
    for path in found_of(parent, commit):
        with contextlib.suppress(OSError):
            if size := path.stat().st_size:
                told += f"; the partial download {path} ({size / 1e6:.1f} MB) stays, for a later run to use"
    return told


def found_of(parent: Path, commit: str) -> list[Path]:
    """The partial files of one commit beside a model's entries."""
    return [path for path in found(parent) if commit_of(path) == commit]


def remove(path: Path) -> None:
    """Gone, whatever is in its place (a folder, with what it holds; a link, not its target)."""
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()


def remove_all(parent: Path, commit: str | None = None) -> None:
    """The partial files of a commit (built now: nothing of them is needed), or of every commit."""
    for path in found(parent) if commit is None else found_of(parent, commit):
        remove(path)


def fetch(
    fill: FillRange,
    spans: list[tuple[int, int]],
    path: Path | None,
    task: Task | None,
    into: memoryview | None = None,
) -> memoryview:
    """The bytes of the ranges (start, length) one after another, those already kept in the partial file at
    path taken from it (path None: nothing kept, as where the cache cannot be written); in `into` where it
    is given (as many bytes: a file's, landing.py), in memory of their own otherwise."""
    total = sum(length for _, length in spans)
    # numpy's memory, not a bytearray's: numpy asks the system for large pages for a large array, which
    # the download then fills in a fifth of the time (memory touched the first time is slow to come by)
    import numpy as np

    data = np.empty(total, np.uint8).data if into is None else into
    keeper = _Keeper.opened(path, spans, data) if path is not None else None
    have = keeper.have if keeper else 0
    if task and have:
        task.advance(have)
    base, whole = 0, False
    try:
        for start, length in spans:
            if have < base + length:
                skip = max(0, have - base)

                def landed(n: int) -> None:
                    nonlocal have
                    have += n
                    if keeper:
                        keeper.kept(have)
                    if task:
                        task.advance(n)

                with data[base + skip : base + length] as part:  # released even as a fill fails
                    fill(start + skip, part, landed)
            base += length
        whole = True
    finally:
        if keeper:
            keeper.close(whole)  # what landed is kept, even of a download cut short
    return data


class _Keeper:
    """The partial file being appended to: a block is written (with its CRC-32) once all its bytes landed,
    by a thread of its own. Its CRC-32 and its write free the GIL: they run beside the download, which runs
    Python for each chunk (written in the download's thread, they took a third of its time)."""

    def __init__(self, fd: int, data: memoryview, have: int, path: Path) -> None:
        import queue
        import threading

        self.fd, self.data, self.have, self.written, self.path = fd, data, have, have, path
        self._later: float | None = time.monotonic() + KEEP_AFTER
        self._blocks: queue.SimpleQueue[tuple[int, int] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._keep, name="gpt2emb-keep", daemon=True)
        self._thread.start()

    @classmethod
    def opened(cls, path: Path, spans: list[tuple[int, int]], data: memoryview) -> _Keeper | None:
        """The partial file opened for these ranges, its good blocks read into data; None where it cannot be
        written (the download goes on without it)."""
        head = _HEAD.pack(MAGIC, zlib.crc32(json.dumps(spans).encode()), len(data))
        for stale in found(path.parent):
            if stale != path:  # another commit's or ETag's: the Hub holds other bytes now
                remove(stale)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            mode = None
        except OSError:
            return None
        if mode is not None and not stat.S_ISREG(mode):
            remove(path)  # a link (never followed), a folder, a FIFO: not a partial file of ours
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(path, flags, 0o666)  # as open() makes a file: 0o666 less the umask
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                return None
            have = _good(fd, head, data)
            os.ftruncate(fd, _offset(have))
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, head)
            os.lseek(fd, _offset(have), os.SEEK_SET)
        except OSError:
            os.close(fd)
            return None
        return cls(fd, data, have, path)

    def kept(self, have: int) -> None:
        """Hand the blocks that are whole now to the keeping thread, from KEEP_AFTER into the download on."""
        self.have = have
        if self._later is None or time.monotonic() >= self._later:
            self._later = None
            self._hand_over()

    def _hand_over(self) -> None:
        total = len(self.data)
        while self.have - self.written >= BLOCK or (self.have == total > self.written):
            end = min(self.written + BLOCK, total)
            self._blocks.put((self.written, end))
            self.written = end

    def close(self, whole: bool) -> None:
        """Once every block handed over is written: the file closed. A download cut short hands over what
        landed of it first; one that came whole within KEEP_AFTER is not kept, and its file, which keeps
        nothing, goes."""
        if not whole:
            self._hand_over()
        self._blocks.put(None)
        self._thread.join()
        if self.written == 0:
            remove(self.path)

    def _keep(self) -> None:
        """The keeping thread: each block with its CRC-32, in order (a failing disk stops the keeping, not
        the download)."""
        while (block := self._blocks.get()) is not None:
            if self.fd < 0:
                continue
            view = self.data[block[0] : block[1]]  # straight from the download's buffer: no copy of it
            try:
                _write_all(self.fd, view)
                _write_all(self.fd, _CRC.pack(zlib.crc32(view)))
            except OSError:
                os.close(self.fd)
                self.fd = -1
        if self.fd >= 0:
            os.close(self.fd)


def _offset(have: int) -> int:
    """Where the record of the block that starts at `have` begins in the file (its end, at have == total)."""
    return _HEAD.size + have + _CRC.size * -(-have // BLOCK)


def _good(fd: int, head: bytes, data: memoryview) -> int:
    """How many bytes of the kept blocks are good: read into data, each whole and matching its CRC-32, after
    a header that names the same ranges; 0 for anything else. fd: just opened, read from its start."""
    if _read(fd, len(head)) != head:
        return 0
    have, total = 0, len(data)
    while have < total:
        n = min(BLOCK, total - have)
        record = _read(fd, n + _CRC.size)
        if len(record) != n + _CRC.size or _CRC.unpack(record[n:])[0] != zlib.crc32(record[:n]):
            break
        data[have : have + n] = record[:n]
        have += n
    return have


def _write_all(fd: int, data: memoryview | bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read(fd: int, n: int) -> bytes:
    parts, left = [], n
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)
