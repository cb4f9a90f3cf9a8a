"""Where tables go: the consoles on stdout and stderr, a reader that left the pipe, a pipe's unpadded lines,
strings fitted to the encoding."""

from __future__ import annotations

import sys
from dataclasses import fields, is_dataclass, replace
from typing import Any

from rich.console import Console, RenderableType
from rich.text import Text

from gpt2emb.output.streams import ESCAPE, printable
from gpt2emb.output.views import view


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False)


class _Stdout(Console):
    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError  # the reader left (| head): cli/root.py ends the run quietly, as for JSON lines


# a token is shown as it is: "[b]" is no markup, ":cat:" no emoji (and a cell is as wide as its text)
AS_IS: dict[str, Any] = {"highlight": False, "soft_wrap": False, "markup": False, "emoji": False}


def print_view(result: Any, dims: int | None) -> None:
    console = _Stdout(**AS_IS)
    shown = view(fitted_to(result, console.encoding), dims)
    # not cropped to the console: a matrix's part that cannot fit is printed wider instead (see _Matrix)
    if console.is_terminal:
        console.print(shown, crop=False)
        return
    sys.stdout.write(captured_text(console, shown))
    sys.stdout.flush()  # a table of a word from stdin goes out as soon as it is answered


def captured_text(console: Console, shown: RenderableType) -> str:
    """What the console would print. Not to a terminal (piped, a file): each line without the spaces that pad
    a table's cells to its width (a terminal shows none of them either), so that grep, diff and cut see only
    what was printed."""
    with console.capture() as captured:
        console.print(shown, crop=False)
    return captured.get() if console.is_terminal else unpadded_lines(captured.get())


def unpadded_lines(text: str) -> str:
    return "".join(line.rstrip(" ") + "\n" for line in text.split("\n")[:-1])


# the fields of results that hold names and paths as given (a folder's name may hold any character): shown
# printable. Tokens and words are not among them: the views quote those their own way (quoting.quote)
_NAMES = frozenset(
    {"model", "models", "name", "path", "root", "file", "png", "output", "source", "among", "repo", "problem"}
)


def fitted_to(value: Any, encoding: str, name: bool = False) -> Any:
    """A result whose strings hold only what the console's encoding can carry, the rest as escapes, and
    whose names and paths hold nothing that does not print: made before the layout, so that columns are
    measured on what is printed."""
    if isinstance(value, str):
        return (printable(value) if name else value).encode(encoding, ESCAPE).decode(encoding)
    if is_dataclass(value) and not isinstance(value, type):
        changed = {
            f.name: fitted_to(getattr(value, f.name), encoding, f.name in _NAMES) for f in fields(value)
        }
        return replace(value, **changed)
    if isinstance(value, list | tuple):
        return type(value)(fitted_to(v, encoding, name) for v in value)
    return value


def print_error(message: str) -> None:
    stderr_console().print(Text("gpt2emb: ", style="bold red") + Text(printable(message)), soft_wrap=True)
