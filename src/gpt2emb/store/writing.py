"""Writing an entry's files, each hashed (SHA-256) on its way to disk, and the row checksums they hold.

A build writes each file once and never reads it back to hash it: the bytes are hashed as they are written,
or for an array, its memory is hashed after the header. build.py and static.py write their entries so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np


class _HashingFile:
    """A file being written that hashes the bytes on their way to disk, so the checksum needs no re-read."""

    def __init__(self, f: BinaryIO) -> None:
        import hashlib  # only a build hashes, and a warm open should not load OpenSSL

        self._f, self.sha256 = f, hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        return self._f.write(data)


def write(path: Path, content: bytes | np.ndarray) -> str:
    """Write one file of an entry, and return the SHA-256 of what was written."""
    if isinstance(content, np.ndarray) and content.flags.c_contiguous:
        return _write_array(path, content)
    with _short_is_full(path), path.open("wb") as raw:
        f = _HashingFile(raw)
        if isinstance(content, np.ndarray):
            np.save(f, content, allow_pickle=False)  # np.save takes any object with write()
        else:
            f.write(content)
    return f.sha256.hexdigest()


def _write_array(path: Path, array: np.ndarray) -> str:
    """Write an array with np.save into a real file, and return the file's SHA-256.

    Into a real file, np.save writes its header and then the array's memory as it stands. Into any other
    object with write() it would copy the array, 16 MiB at a time.
    """
    with _short_is_full(path), path.open("wb") as f:
        np.save(f, array, allow_pickle=False)
    return hashed(path, array)


@contextlib.contextmanager
def _short_is_full(path: Path) -> Iterator[None]:
    """Say a write that the disk cut short as the full disk it most likely is.

    np.save reports it as an OSError with no errno ('32768 requested and 20448 written'), which open_model
    would not take for a full cache.
    """
    try:
        yield
    except OSError as e:
        if e.errno is not None:
            raise
        why = f"a write was cut short ({e}): the disk is full, most likely"
        raise OSError(errno.ENOSPC, why, str(path)) from e


def hashed(path: Path, array: np.ndarray) -> str:
    """The SHA-256 of a file that holds array as np.save writes it, written so or landed (landing.py).

    Only the header is read back. The array's memory is hashed after it, so no byte of the file is read
    twice. A landed wte is the file's own mapping.
    """
    import hashlib

    with path.open("rb") as f:
        head = f.read(os.fstat(f.fileno()).st_size - array.nbytes)
    sha256 = hashlib.sha256(head)
    sha256.update(array.data)  # the array is C-contiguous, so its memory is the file's bytes
    return sha256.hexdigest()


def row_crcs(rows: np.ndarray) -> np.ndarray:
    """The CRC-32 of each row's bytes, which lets a command check the rows it shows."""
    return np.fromiter((zlib.crc32(r) for r in rows), dtype=np.uint32, count=len(rows))
