"""Words from a stream, for `-` in place of the words: numbered lines, and blocks of them as they arrive.

A line is one word (or `A B C` for analogy), UTF-8, read as an --among file's lines are (tokens.listed:
the spaces around it dropped, blank lines and `# comments` skipped). Blocks are what
a matrix pass answers at once: the first line waited for, then the lines that have already arrived, up to a
block's size. So a pipe is answered a full block at a time and a person typing is answered line by line.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Generic, TypeVar

from gpt2emb.errors import Gpt2embError
from gpt2emb.tokens import listed

BLOCK = 128  # queries per matrix pass: 128 x 50257 float32 scores and their bounds, about 75 MB


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, counting every line of the stream
    text: str
    problem: str = ""  # why the line cannot be read (not UTF-8): it fails as a word would


@dataclass(frozen=True)
class Failed:
    """A line without an answer: the others still get theirs."""

    line: Line
    error: Gpt2embError

    @property
    def message(self) -> str:
        return f"line {self.line.number}: {self.error.message}"


Item = TypeVar("Item")


@dataclass(frozen=True)
class Answers(Generic[Item]):
    """A stream's answers, one per line in order (a Failed for a line without one), and how the answers of
    all lines make one document (--json)."""

    each: Iterator[Item | Failed]
    whole: Callable[[tuple[Item, ...]], Any]

    def __iter__(self) -> Iterator[Item | Failed]:
        return self.each


def lines(stream: BinaryIO) -> Iterator[Line]:
    """The stream's lines that hold something, numbered; a line that is not UTF-8 comes with its problem."""
    for number, raw in enumerate(stream, 1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):  # the byte order mark Windows tools write
            raw = raw[3:]
        raw = raw.rstrip(b"\r\n")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            yield Line(number, raw.decode("utf-8", "replace"), f"it is not UTF-8 text (byte {e.start + 1})")
            continue
        word = listed(text)
        if word is not None:
            yield Line(number, word)


def blocks(items: Iterable[Line], size: int = BLOCK) -> Iterator[list[Line]]:
    """The lines in blocks of at most `size`: each block holds the lines that have arrived by the time the
    previous one is answered (at least one; a thread reads ahead, so reading never waits for an answer)."""
    waiting: queue.Queue[Line | None] = queue.Queue(maxsize=4 * size)  # bounded: a huge file is not slurped
    failure: list[BaseException] = []

    def read() -> None:
        try:
            for line in items:
                waiting.put(line)
        except BaseException as e:  # handed to the reading side, which raises it there
            failure.append(e)
        waiting.put(None)

    threading.Thread(target=read, daemon=True).start()
    done = False
    while not done:
        block: list[Line] = []
        line = waiting.get()
        while line is not None:
            block.append(line)
            if len(block) == size:
                break
            try:
                line = waiting.get_nowait()
            except queue.Empty:
                break
        done = line is None
        if failure:
            raise failure[0]
        if block:
            yield block
