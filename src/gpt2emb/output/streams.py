"""What stdout and stderr can carry: a character their encoding lacks is written as an escape. No rich: JSON
runs use it too."""

from __future__ import annotations

import codecs
import sys
from typing import TextIO

ESCAPE = "gpt2emb.escape"


def _escape(error: UnicodeError) -> tuple[str, int]:
    """A character the encoding lacks, as Python writes it in a string: \\u00fc, \\U0001f642. Never \\xfc,
    which the tables use for a byte of a token that is not a whole character."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    chars = error.object[error.start : error.end]
    return "".join(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in chars), error.end


codecs.register_error(ESCAPE, _escape)


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
