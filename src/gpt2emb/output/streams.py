"""What stdout and stderr can carry: a character their encoding lacks is written as an escape. No rich: JSON
runs use it too."""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from gpt2emb.errors import CannotWriteOutput, ReaderGone

ESCAPE = "gpt2emb.escape"


def _escape(error: UnicodeError) -> tuple[str, int]:
    """A character the encoding lacks, as Python writes it in a string: \\u00fc, \\U0001f642. Never \\xfc,
    which the tables use for a byte of a token that is not a whole character."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    chars = error.object[error.start : error.end]
    return "".join(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in chars), error.end


codecs.register_error(ESCAPE, _escape)


def printable(text: str) -> str:
    """Text shown as it is but for what does not print, written as Python writes it in a string (\\x1b,
    \\n, \\u2028): a folder named with a terminal's escapes must not move the cursor, colour the screen or
    start a line of its own where its name is printed."""
    if text.isprintable():
        return text
    shown = (c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)
    return "".join(shown)


def carries_all(stream: TextIO) -> bool:
    """Whether the stream's encoding can write any character (UTF-8, -16, -32), not only a code page."""
    return codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name.startswith("utf")


def prepare_streams() -> None:
    """Write what stdout and stderr cannot encode as escapes instead of failing, for every writer: ours,
    rich's, click's usage and help. Only the error handler changes: the encoding stays the one the reader
    expects."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors=ESCAPE)


class _Guarded:
    """stdout, whose failures to write are ours: the reader gone (EPIPE) ends the run quietly, any other
    (ENOSPC, EFBIG, EIO) is one line, `cannot write output`. Every writer goes through it, ours, rich's
    (tables, Typer's help) and click's: each would otherwise handle it its own way."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as e:
            raise _failed(e) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as e:
            raise _failed(e) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _failed(e: OSError) -> Exception:
    if e.errno == errno.EPIPE:
        return ReaderGone()
    return CannotWriteOutput(f"cannot write output (stdout): {e.strerror or e}")


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """A run's stdout guarded (see _Guarded), flushed at its end: a failure is raised here, not at exit."""
    stream = sys.stdout
    sys.stdout = _Guarded(stream)
    try:
        yield
        sys.stdout.flush()
    except (CannotWriteOutput, ReaderGone):
        with contextlib.suppress(OSError, ValueError):  # what is left in its buffer goes nowhere at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())  # (a stream of a test has no fileno)
        raise
    finally:
        sys.stdout = stream
