"""Calls into the tokenizers library: its faults made one exception, and a tokenizer's added tokens listed."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

# The file of a cache entry that lists its tokenizer's added tokens, as added_tokens gives them.
ADDED_FILE = "added.json"


class LibraryFault(Exception):
    """The tokenizers library failed on a tokenizer.json, with this message (see library_faults)."""


@contextlib.contextmanager
def library_faults() -> Iterator[None]:
    """A call into the tokenizers library on a tokenizer.json that may be damaged.

    Its errors come out as one LibraryFault, and so do its Rust code's panics. A panic is a PanicException,
    which is a BaseException alone, so it is told apart by its name. An interrupt stays an interrupt.

    Rust's default panic hook prints a panic's text straight onto descriptor 2, and neither tokenizers nor
    pyo3 can turn it off. So descriptor 2 points at /dev/null for the call. That silences the whole process,
    so it is done only while this thread is the process's only one. With another thread running (batch.py's
    reader, a notebook's own), what that thread prints is never lost, and a panic's text shows above the
    one-line error.
    """
    silenced = threading.active_count() == 1
    if silenced:
        sys.stderr.flush()
    saved = os.dup(2) if silenced else -1
    try:
        if silenced:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)
        yield
    except BaseException as e:
        if not isinstance(e, Exception) and type(e).__name__ != "PanicException":
            raise
        raise LibraryFault(str(e)) from None
    finally:
        if silenced:
            os.dup2(saved, 2)
            os.close(saved)


def added_tokens(tokenizer: Any) -> list[dict[str, Any]]:
    """A tokenizers.Tokenizer's added tokens, as an entry's added.json holds them.

    Each has its content, its id, whether it is special, and the text the tokenizer finds it by in a text
    (matched). A normalized token is looked for in the normalized text, so its matched text is its content as
    the normalizer makes it: "Kitten" under a lowercasing normalizer is found as "kitten".
    """
    normalizer = tokenizer.normalizer
    return [
        {
            "content": t.content,
            "id": i,
            "special": t.special,
            "matched": t.content
            if normalizer is None or not t.normalized
            else normalizer.normalize_str(t.content),
        }
        for i, t in sorted(tokenizer.get_added_tokens_decoder().items())
    ]
