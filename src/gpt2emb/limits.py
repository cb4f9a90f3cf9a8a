"""What a user hands gpt2emb: paths as given (one rule for `~` in every option and variable), and the sizes
it reads at most of stdin, a word list or a benchmark file, so an endless or enormous input is refused with
its limit named instead of filling the memory."""

from __future__ import annotations

import codecs
import os
import sys
from pathlib import Path

from gpt2emb.errors import LONE_SURROGATE, UsageError

MAX_LINE = 1 << 20  # bytes of one line of stdin, a word list or a benchmark file (a word is far shorter)
MAX_FILE = 64 << 20  # bytes of a word list (--among) or a benchmark file (--eval); the largest known is 1 MB
MAX_ANSWERS = 10_000  # answers to stdin's words gathered in one --json document (--jsonl streams any number)
MAX_TEXT = 16 << 20  # bytes of a text read from stdin (input -, context -): far past any model's context
BLOCK = 512  # words per matrix pass (ops.cosine_tops), and stdin's lines gathered for one: more run no faster


def user_path(path: str | os.PathLike[str]) -> Path:
    """A path a user gives (-o, --png, --among, --eval, -m, GPT2EMB_CACHE_DIR), `~` and `~user` expanded as a
    shell expands them: a user this machine does not have leaves `~name` as typed, as in the shell (where
    Path.expanduser raises RuntimeError).

    Under a locale whose encoding is not UTF-8 (LC_ALL=C, Python's UTF-8 mode off) Python names files in
    that encoding: a path holding other characters is refused, since Python could open it only under a name
    that is not its text (the command line's UTF-8 is read as UTF-8: see cli.root._as_utf8)."""
    text = os.path.expanduser(os.fspath(path))
    encoding = sys.getfilesystemencoding()
    if codecs.lookup(encoding).name != "utf-8" and not LONE_SURROGATE.search(text):
        try:
            text.encode(encoding)
        except UnicodeEncodeError:
            raise UsageError(
                f"the path {text!r} holds characters that this locale's encoding ({encoding}) lacks, so "
                "Python cannot name the file here: run under a UTF-8 locale (LC_ALL=C.UTF-8), or set "
                "PYTHONUTF8=1"
            ) from None
    return Path(text)


def size(n: int) -> str:
    """A limit as a message names it: 1 MB, 64 MB."""
    return f"{n >> 20:,} MB" if n >= 1 << 20 else f"{n:,} bytes"


def read(path: str, shown: str, what: str) -> bytes:
    """A whole file a user names (a word list), read no further than MAX_FILE and refused past it, or when
    a line of it is longer than MAX_LINE; `shown` names it in messages, `what` says what it should be."""
    try:
        with user_path(path).open("rb") as f:
            data = f.read(MAX_FILE + 1)  # a FIFO or /dev/zero has no size to ask first
    except OSError as e:
        raise UsageError(f"cannot read {shown}: {e.strerror}") from None
    except ValueError:  # a NUL in the name: no file can have it
        raise UsageError(f"cannot read {shown}: a file name cannot hold a NUL character") from None
    if len(data) > MAX_FILE:
        raise UsageError(
            f"{shown} is over {size(MAX_FILE)}: {what} is far smaller; is this the file you meant?"
        )
    import numpy as np  # here: registry reads paths through this module, and --help loads no numpy

    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))  # at C speed: millions of lines
    lengths = np.diff(ends, prepend=-1, append=len(data)) - 1  # each line's, the last one's too
    too_long = np.flatnonzero(lengths > MAX_LINE)
    if len(too_long):
        raise UsageError(
            f"{shown}, line {int(too_long[0]) + 1}: longer than {size(MAX_LINE)}; {what} holds a word a line"
        )
    return data
