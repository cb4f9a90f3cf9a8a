"""Everything a person or a script sees. JSON needs no rich, so tables.py (rich) is imported only for tables.

A command's JSON document is `result.to_dict()`: the field names in results/ are the JSON interface.
Any stream encoding works (a Windows pipe writes cp1252): what it cannot carry is written as an escape.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from gpt2emb.report import QuietReporter, Reporter, Task

ESCAPE = "gpt2emb.escape"
DIMS = 12  # how many numbers of a vector its table shows, unless told (vector --dims)


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


def render(result: Any, as_json: bool, dims: int | None = None, lines: bool = False) -> None:
    """Print a result: one JSON document (indented on a terminal), or its table; with lines (--jsonl), each
    of its items as a JSON line (a result without items is one line).

    The JSON is UTF-8 text where stdout is UTF-8, else pure ASCII with \\u escapes: the same document for any
    parser, whichever code page the reading end assumes."""
    if lines:
        items = getattr(result, "items", None)
        for item in (result,) if items is None else items:
            line(item)
        if items is not None:  # what the result says of all its items is in no line: said on stderr
            for note in getattr(result, "notes", ()):
                _PlainReporter(True).note(note)
        return
    if as_json:
        sys.stdout.write(_json(result, 2 if sys.stdout.isatty() else None) + "\n")
        return
    from gpt2emb.output import tables

    tables.print_view(result, dims)


def line(result: Any) -> None:
    """One JSON object on one line (--jsonl), flushed: the reader gets it now, not when a buffer fills."""
    sys.stdout.write(_json(result) + "\n")
    sys.stdout.flush()


def _json(result: Any, indent: int | None = None) -> str:
    """The text of result.to_dict(). Most results hold finite numbers only: json then writes the result
    objects as they are (a result's __dict__ holds its fields, in order), in one call, in C on a line; a NaN
    or an infinite value stops it, and to_dict's document, which shows those as null and says so, is
    written."""
    ascii_only = not carries_all(sys.stdout)
    try:
        return json.dumps(result, default=_fields, ensure_ascii=ascii_only, indent=indent, allow_nan=False)
    except ValueError:  # "Out of range float values are not JSON compliant"
        return json.dumps(result.to_dict(), ensure_ascii=ascii_only, indent=indent, allow_nan=False)


def _fields(value: Any) -> dict[str, Any]:
    """A result object's fields (results.Document: a frozen dataclass, its __dict__ nothing but its fields);
    anything else is no JSON, as to_dict's document would not be."""
    if not hasattr(type(value), "to_dict"):
        raise TypeError(f"{type(value).__name__} is not a result")
    fields: dict[str, Any] = vars(value)
    return fields


def error(message: str, kind: str, code: int, as_json: bool, line: int | None = None) -> None:
    """One line on stderr: a JSON object with --json, else `gpt2emb: message`. line: the number of the
    input line (words from stdin) that failed, a key of the JSON object."""
    message = " ".join(message.splitlines())  # a line break typed into a word must not break the line
    if as_json:
        doc: dict[str, Any] = {"type": kind, "code": code, "message": message}
        if line is not None:
            doc["line"] = line
        sys.stderr.write(json.dumps({"error": doc}) + "\n")
        sys.stderr.flush()
        return
    from gpt2emb.output import tables

    tables.print_error(message)


def hint(message: str) -> None:
    """A word to the person at the terminal, on stderr."""
    sys.stderr.write(f"gpt2emb: {message}\n")


class _PlainReporter(QuietReporter):
    """Piped or --json: notes still reach stderr (as JSON with --json), progress bars do not. steps: each
    long piece of work is named on stderr as it starts, with its size (for Python, where no bar shows)."""

    def __init__(self, as_json: bool, steps: bool = False) -> None:
        self.as_json, self.steps = as_json, steps

    def note(self, message: str) -> None:
        sys.stderr.write(
            (json.dumps({"note": message}) if self.as_json else f"gpt2emb: note: {message}") + "\n"
        )

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Task]:
        if self.steps:
            size = f"{total / 1e6:,.1f} MB" if total >= 1e6 else f"{total / 1e3:,.1f} kB"  # as the bars say
            sys.stderr.write(f"gpt2emb: {label} ({size})\n")
            sys.stderr.flush()
        with super().progress(label, total) as task:
            yield task


def reporter(as_json: bool) -> Reporter:
    """Notes go to stderr; progress bars only when a person watches (a terminal, no --json)."""
    if as_json or not (sys.stdout.isatty() and sys.stderr.isatty()):
        return _PlainReporter(as_json)
    from gpt2emb.output import tables

    return tables.Reporter()


def show_in_notebooks() -> None:
    """Under IPython a result displays as the table its command prints, not as a dataclass's repr: in
    Jupyter (and any other front end that shows HTML) in colour at rich's width, in IPython in a terminal as
    the command prints it there. Called by gpt2emb.open; elsewhere it does nothing and imports
    nothing."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    from gpt2emb.output import tables

    terminal = any(c.__name__ == "TerminalInteractiveShell" for c in type(shell).__mro__)
    shown = tables.in_terminal if terminal else tables.bundle
    for kind in tables.viewed():
        shell.display_formatter.mimebundle_formatter.for_type(kind, shown)


def python_reporter() -> Reporter:
    """For the Python handle (`gpt2emb.open`): notes on stderr, and the fetch or export under way shown as a
    bar where stderr is a terminal, else named in a line (a notebook, a script's log)."""
    if sys.stderr is None:  # pythonw: nowhere to say anything
        return QuietReporter()
    if not sys.stderr.isatty():
        return _PlainReporter(False, steps=True)
    from gpt2emb.output import tables

    return tables.Reporter()
