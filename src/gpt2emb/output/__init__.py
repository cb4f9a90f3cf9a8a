"""Everything a person or a script sees. JSON needs no rich, so views/ (rich) is imported only for tables.

A command's JSON document is `result.to_dict()`: the field names in results/ are the JSON interface.
Any stream encoding works (a Windows pipe writes cp1252): what it cannot carry is written as an escape.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from gpt2emb.output.progress import _PlainReporter, python_reporter, reporter
from gpt2emb.output.streams import ESCAPE, carries_all, guarded_stdout, prepare_streams
from gpt2emb.output.views import DIMS
from gpt2emb.results.common import FIGURE

__all__ = [
    "DIMS",
    "ESCAPE",
    "carries_all",
    "error",
    "guarded_stdout",
    "hint",
    "line",
    "prepare_streams",
    "python_reporter",
    "render",
    "reporter",
    "show_in_notebooks",
    "written",
]


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
    from gpt2emb.output import console

    console.print_view(result, dims)
    figure = getattr(result, "figure", None)  # --figure's file: said under the table, as --json names it
    if figure is not None:
        written("figure", figure)


def written(what: str, path: str) -> None:
    """Under a table, the file a command also wrote (--figure, lab --html)."""
    sys.stdout.write(f"{what} written to {path}\n")


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
    if fields.get(FIGURE, False) is None:  # no figure drawn: the key is left out, as to_dict leaves it
        return {k: v for k, v in fields.items() if k != FIGURE}
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
    from gpt2emb.output import console

    console.print_error(message)


def hint(message: str) -> None:
    """A word to the person at the terminal, on stderr."""
    sys.stderr.write(f"gpt2emb: {message}\n")


def show_in_notebooks() -> None:
    """Under IPython a result displays as the table its command prints, not as a dataclass's repr: in
    Jupyter (and any other front end that shows HTML) in colour at rich's width, in IPython in a terminal as
    the command prints it there. Called by gpt2emb.open; elsewhere it does nothing and imports
    nothing."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    from gpt2emb.output import notebook

    terminal = any(c.__name__ == "TerminalInteractiveShell" for c in type(shell).__mro__)
    shown = notebook.in_terminal if terminal else notebook.bundle
    for kind in notebook.viewed():
        shell.display_formatter.mimebundle_formatter.for_type(kind, shown)
