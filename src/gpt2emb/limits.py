"""The sizes gpt2emb reads at most from what a user hands it (stdin, a word list, a benchmark file), so an
endless or enormous input is refused with its limit named instead of filling the memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpt2emb.errors import UsageError

MAX_LINE = 1 << 20  # bytes of one line of stdin, a word list or a benchmark file (a word is far shorter)
MAX_FILE = 64 << 20  # bytes of a word list (--among) or a benchmark file (--eval); the largest known is 1 MB
MAX_TEXT = 16 << 20  # bytes of a text read from stdin (input -, context -): far past any model's context


def size(n: int) -> str:
    """A limit as a message names it: 1 MB, 64 MB."""
    return f"{n >> 20:,} MB" if n >= 1 << 20 else f"{n:,} bytes"


def read(path: str, shown: str, what: str) -> bytes:
    """A whole file a user names (a word list), read no further than MAX_FILE and refused past it, or when
    a line of it is longer than MAX_LINE; `shown` names it in messages, `what` says what it should be."""
    try:
        with Path(path).open("rb") as f:
            data = f.read(MAX_FILE + 1)  # a FIFO or /dev/zero has no size to ask first
    except OSError as e:
        raise UsageError(f"cannot read {shown}: {e.strerror}") from None
    except ValueError:  # a NUL in the name: no file can have it
        raise UsageError(f"cannot read {shown}: a file name cannot hold a NUL character") from None
    if len(data) > MAX_FILE:
        raise UsageError(
            f"{shown} is over {size(MAX_FILE)}: {what} is far smaller; is this the file you meant?"
        )
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))  # at C speed: millions of lines
    lengths = np.diff(ends, prepend=-1, append=len(data)) - 1  # each line's, the last one's too
    too_long = np.flatnonzero(lengths > MAX_LINE)
    if len(too_long):
        raise UsageError(
            f"{shown}, line {int(too_long[0]) + 1}: longer than {size(MAX_LINE)}; {what} holds a word a line"
        )
    return data
