"""Everything a person or a script sees. JSON needs no rich, so tables.py (rich) is imported only for tables.

A command's JSON document is `asdict(result)`: the field names in results.py are the JSON interface.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

from gpt2emb.report import QuietReporter, Reporter


def render(result: Any, as_json: bool, dims: int | None = None) -> None:
    """Print a result: one JSON document (indented on a terminal), or its table."""
    if as_json:
        indent = 2 if sys.stdout.isatty() else None
        sys.stdout.write(json.dumps(asdict(result), ensure_ascii=False, indent=indent) + "\n")
        return
    from gpt2emb.output import tables

    tables.print_view(result, dims)


def error(message: str, kind: str, code: int, as_json: bool) -> None:
    """One line on stderr: a JSON object with --json, else `gpt2emb: message`."""
    message = " ".join(message.splitlines())  # a line break typed into a word must not break the line
    if as_json:
        sys.stderr.write(json.dumps({"error": {"type": kind, "code": code, "message": message}}) + "\n")
        return
    from gpt2emb.output import tables

    tables.print_error(message)


class _PlainReporter(QuietReporter):
    """Piped or --json: notes still reach stderr (as JSON with --json), progress bars do not."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def note(self, message: str) -> None:
        sys.stderr.write(
            (json.dumps({"note": message}) if self.as_json else f"gpt2emb: note: {message}") + "\n"
        )


def reporter(as_json: bool) -> Reporter:
    """Notes go to stderr; progress bars only when a person watches (a terminal, no --json)."""
    if as_json or not (sys.stdout.isatty() and sys.stderr.isatty()):
        return _PlainReporter(as_json)
    from gpt2emb.output import tables

    return tables.Reporter()
