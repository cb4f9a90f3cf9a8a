"""Everything a person or a script sees. JSON needs no rich, so tables.py (rich) is imported only for tables.

A command's JSON document is `asdict(result)`: the field names in results.py are the JSON interface.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict
from typing import Any

from gpt2emb.report import QuietReporter, Reporter


def render(result: Any, as_json: bool, dims: int | None = None) -> None:
    """Print a result: one JSON document (indented on a terminal), or its table."""
    if as_json:
        indent = 2 if sys.stdout.isatty() else None
        doc = strict(asdict(result))
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=indent, allow_nan=False) + "\n")
        return
    from gpt2emb.output import tables

    tables.print_view(result, dims)


def strict(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as strict JSON can hold it: a float that is not finite (NaN, inf: a model whose rows hold
    them) becomes null, and the document's notes say so. Values known to be undefined are None already."""
    found = 0

    def clean(value: Any) -> Any:
        nonlocal found
        if isinstance(value, float) and not math.isfinite(value):
            found += 1
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    doc = clean(doc)
    if found:
        doc["notes"] = [*doc.get("notes", []), f"{found} values are not finite numbers and are shown as null"]
    return doc


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
