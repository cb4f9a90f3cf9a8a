"""How the core reports notes and progress without knowing about terminals: output/ implements Reporter."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Protocol

# False while a command line run shows no bars (--json, or stdout or stderr not a terminal): huggingface_hub's
# own download bar (a whole pickle checkpoint's), which a Reporter does not draw, follows it
HUB_BARS = contextvars.ContextVar("gpt2emb_hub_bars", default=True)


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
