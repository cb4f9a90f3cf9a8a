"""Notes and progress on stderr: bars and colour for a person at a terminal (rich, imported then only), plain
lines when piped, with --json or from Python."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

from gpt2emb import report
from gpt2emb.output.streams import printable
from gpt2emb.report import QuietReporter, Task


class Reporter:
    """For a person at a terminal: coloured notes and transient progress bars on stderr."""

    def __init__(self) -> None:
        from gpt2emb.output.console import stderr_console

        self._err = stderr_console()

    def note(self, message: str) -> None:
        from rich.text import Text

        self._err.print(Text(f"note: {printable(message)}", style="yellow"), soft_wrap=True)

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Any]:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        # one line at any width: rich wraps a column that does not fit onto a second line ("MB" under the
        # bytes) and redraws both, so the speed goes where it has no room, and a long label is cut in its
        # middle, keeping its verb and its model or file name (a path's end)
        width = self._err.width
        speed = width >= 100
        fixed = len("1,234.5/1,234.5 MB") + len("0:00:00") + 3 + (len(" 123.4 MB/s") if speed else 0)
        room = max(width - fixed - 10 - 1, 20)  # the bar keeps 10 cells
        shown = label if len(label) <= room else f"{label[: room // 2 - 1]}…{label[-(room - room // 2) :]}"
        columns = (
            TextColumn("{task.description}"),
            BarColumn(bar_width=max(min(40, width - fixed - len(shown) - 2), 10)),
            DownloadColumn(),
            *([TransferSpeedColumn()] if speed else []),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=self._err, transient=True) as bar:
            task = bar.add_task(shown, total=total)

            class _Task:
                def advance(self, n: int) -> None:
                    bar.advance(task, n)

            yield _Task()


class PlainReporter(QuietReporter):
    """Piped or --json: notes still reach stderr (as JSON with --json), progress bars do not. steps: each
    long piece of work is named on stderr as it starts, with its size (for Python, where no bar shows)."""

    def __init__(self, as_json: bool, steps: bool = False) -> None:
        self.as_json, self.steps = as_json, steps

    def note(self, message: str) -> None:
        sys.stderr.write(
            (json.dumps({"note": message}) if self.as_json else f"gpt2emb: note: {printable(message)}") + "\n"
        )

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Task]:
        if self.steps and not label.startswith(report.BUILDING):  # a second of writing needs no line
            size = f"{total / 1e6:,.1f} MB" if total >= 1e6 else f"{total / 1e3:,.1f} kB"  # as the bars say
            sys.stderr.write(f"gpt2emb: {label} ({size})\n")
            sys.stderr.flush()
        with super().progress(label, total) as task:
            yield task


def reporter(as_json: bool) -> report.Reporter:
    """Notes go to stderr; progress bars only when a person watches (a terminal, no --json)."""
    if as_json or not (sys.stdout.isatty() and sys.stderr.isatty()):
        return PlainReporter(as_json)
    return Reporter()


def python_reporter() -> report.Reporter:
    """For the Python handle (`gpt2emb.open`): notes on stderr, and the fetch or export under way shown as a
    bar where stderr is a terminal, else named in a line (a notebook, a script's log)."""
    if sys.stderr is None:  # pythonw: nowhere to say anything
        return QuietReporter()
    if not sys.stderr.isatty():
        return PlainReporter(False, steps=True)
    return Reporter()
