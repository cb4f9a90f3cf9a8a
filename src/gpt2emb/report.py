"""How the core reports notes and progress without knowing about terminals: output/ implements Reporter."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol


class Task(Protocol):
    def advance(self, n: int) -> None: ...


class Reporter(Protocol):
    """How the core tells a person what it is doing; the CLI decides whether and where it shows."""

    def note(self, message: str) -> None: ...

    def progress(self, label: str, total: int) -> contextlib.AbstractContextManager[Task]: ...


BUILDING = "building the cache entry"  # a bar's label at a terminal, never a line of its own elsewhere


class QuietReporter:
    def note(self, message: str) -> None:
        pass

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Task]:
        class _Nothing:
            def advance(self, n: int) -> None:
                pass

        yield _Nothing()
