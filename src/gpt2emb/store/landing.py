"""wte's bytes fetched straight into the entry's wte.npy: a first use writes its largest table once, where it
stays, instead of receiving it into memory and writing it out after.

Memory a process touches for the first time can be slow to come by: on a virtual machine that hands freed
memory back to its host, 159 MB of it take 0.3-0.45 s, as long as the download itself (docs/performance.md,
"First use"). Received into memory, then written, gpt2's wte was touched twice; landed, once. The file is laid
out as np.save writes it: the header np.save writes for a C-ordered float32 table of that shape, then the
rows; the ranges fetched after wte's (wpe, ...) land behind them, are copied out, and the file is cut to
wte's end. Its room is reserved before it is mapped (posix_fallocate; Windows reserves it as the file grows):
a full disk is an error then, not a signal killing the process as a mapped page finds no room. Where neither
is to hand (macOS), nothing lands: possible() says so.
"""

from __future__ import annotations

import contextlib
import io
import math
import mmap
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np


def header(shape: tuple[int, ...]) -> bytes:
    """The header np.save writes before a C-ordered little-endian float32 array of this shape (format 1.0,
    which any shape of ours fits)."""
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return f.getvalue()


def possible() -> bool:
    """Whether a file's room can be reserved before it is mapped, here."""
    return hasattr(os, "posix_fallocate") or os.name == "nt"


@contextlib.contextmanager
def landed(path: Path, shape: tuple[int, ...], total: int) -> Iterator[memoryview]:
    """A new file at path, np.save's header for wte's shape, then room for `total` bytes: the buffer of a
    download whose first range is wte's. Once the block ends without an error the file holds wte.npy alone,
    the bytes after wte cut off: whatever the block copied of them must be copied out before it ends, and
    nothing may still use the buffer."""
    head = header(shape)
    rows = math.prod(shape) * 4
    # a new file (O_EXCL: whatever is at path, a link too, is refused), made as open() makes one (0o666
    # less the umask)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(fd, 0, len(head) + total)  # ENOSPC here, never SIGBUS in the download
        else:
            os.ftruncate(fd, len(head) + total)  # Windows: the room is the file's as it grows
        mapped = mmap.mmap(fd, len(head) + total)
        mapped[: len(head)] = head
        whole = memoryview(mapped)
        into = whole[len(head) :]
        try:
            yield into
        except BaseException:
            # a failed download's frames may still hold views of the buffer: the mapping then goes when
            # they do (build_entry clears them before it removes its temporary folder)
            with contextlib.suppress(BufferError):
                _close(mapped, whole, into)
            raise
        _close(mapped, whole, into)
        os.ftruncate(fd, len(head) + rows)
    finally:
        os.close(fd)


def _close(mapped: mmap.mmap, *views: memoryview) -> None:
    for view in reversed(views):
        view.release()
    mapped.close()
