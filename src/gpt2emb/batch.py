"""Words from a stream, for `-` in place of the words: numbered lines, and blocks of them as they arrive.

A line is one word (or `A B C` for analogy), UTF-8, read as an --among file's lines are (word_lists.listed:
the spaces around it dropped, blank lines and `# comments` skipped). Blocks are what
a matrix pass answers at once: the first line waited for, then the lines that have already arrived, up to a
block's size. So a pipe is answered a full block at a time and a person typing is answered line by line.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from gpt2emb import limits
from gpt2emb.errors import DamagedEntry, Gpt2embError, UsageError
from gpt2emb.limits import BLOCK
from gpt2emb.word_lists import listed

MAX_LINE = 1 << 16  # bytes of one line kept: a word is at most 1,000 characters (queries.MAX_WORD_CHARS)


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, counting every line of the stream
    text: str
    problem: str = ""  # why the line cannot be read (not UTF-8): it fails as a word would


@dataclass(frozen=True)
class FailedLine:
    """A line without an answer: the others still get theirs."""

    line: Line
    error: Gpt2embError

    @property
    def message(self) -> str:
        return f"line {self.line.number}: {self.error.message}"


Failed = FailedLine  # its older name, kept working (the README showed it)


Item = TypeVar("Item")


@dataclass(frozen=True)
class Answers(Generic[Item]):
    """A stream's answers, one per line in order (a FailedLine for a line without one), and what is said of
    them: all answers as one document (--json); one answer as a document of its own (a table), the first
    of them with what is said once (candidates, notes); notes said once, before the answers (JSON lines);
    and the notes of one answer that its JSON line does not hold."""

    each: Iterator[Item | FailedLine]
    whole: Callable[[tuple[Item, ...]], Any]
    one: Callable[[Item, bool], Any]
    notes: tuple[str, ...] = ()
    notes_of: Callable[[Item], tuple[str, ...]] = lambda item: ()

    def __iter__(self) -> Iterator[Item | FailedLine]:
        return self.each


# A stream's answers: what the cores' each_* give (core/vector.py, neighbors.py, analogy.py, similarity.py).

Prepared = TypeVar("Prepared")


Answer = TypeVar("Answer")


def each(
    blocks: Iterable[list[Line]],
    prepare: Callable[[str], Prepared],
    answer: Callable[[list[Prepared]], list[Answer]],
) -> Iterator[Answer | FailedLine]:
    """Each line's answer, in the order of the lines: a block's good lines answered together, a line that
    fails (its word, not the model) as a FailedLine in its place. A block's first failed line splits its pass:
    the lines before it are answered and it is yielded before any line after it is looked at, so a consumer
    that stops there (--strict) has had nothing computed in vain; the rest of the block is one more pass (at
    most two a block however many of its lines fail: a split at each would cost a pass over wte each)."""
    for block in blocks:
        lines = iter(block)
        yield from _answered(lines, prepare, answer, until_failure=True)
        yield from _answered(lines, prepare, answer, until_failure=False)


def _answered(
    lines: Iterator[Line],
    prepare: Callable[[str], Prepared],
    answer: Callable[[list[Prepared]], list[Answer]],
    until_failure: bool,
) -> Iterator[Answer | FailedLine]:
    """The answers of the lines taken from `lines` (up to and with the first failed one, until_failure),
    in order, their good lines in one pass."""
    taken: list[Line] = []
    ready: dict[int, Prepared] = {}
    failed: dict[int, FailedLine] = {}
    for line in lines:
        taken.append(line)
        try:
            if line.problem:
                raise UsageError(line.problem)
            ready[line.number] = prepare(line.text)
        except DamagedEntry:
            raise  # the cache entry, not the line: nothing else can be answered either
        except Gpt2embError as e:
            failed[line.number] = FailedLine(line, e)
            if until_failure:
                break
    answers = dict(zip(ready, answer(list(ready.values())), strict=True)) if ready else {}
    for line in taken:
        yield failed[line.number] if line.number in failed else answers[line.number]


UTF16 = (b"\xff\xfe", b"\xfe\xff")  # the byte order marks a UTF-16 stream starts with
UTF16_REFUSED = (
    "stdin is UTF-16 text, and gpt2emb reads UTF-8: in PowerShell, run "
    "$OutputEncoding = [Text.UTF8Encoding]::new() first, or save the file as UTF-8"
)
UTF8_BOM = b"\xef\xbb\xbf"  # the byte order mark Windows tools write


def text(chunks: Iterable[bytes]) -> str:
    """All of a stream as one text (`input -`): UTF-8 without its byte order mark, and without the line ends
    at its end, as the shell's "$(cat file)" gives it."""
    parts, size = [], 0
    for chunk in chunks:
        parts.append(chunk)
        size += len(chunk)
        if size > limits.MAX_TEXT:  # an endless stream (/dev/zero) must not fill the memory
            raise UsageError(
                f"stdin holds more than {limits.size(limits.MAX_TEXT)}: far more text than any model reads "
                "(GPT-2 reads 1,024 tokens); give a shorter text"
            )
    data = b"".join(parts)
    if data[:2] in UTF16:
        raise UsageError(UTF16_REFUSED)
    bom = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    try:
        return data[bom:].decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as e:
        raise UsageError(
            f"stdin is not UTF-8 text (byte {bom + e.start + 1}); convert it to UTF-8 (iconv -t UTF-8)"
        ) from None


def lines(chunks: Iterable[bytes]) -> Iterator[Line]:
    """The lines of a stream (given as chunks of bytes) that hold something, numbered; a line that is not
    UTF-8 comes with its problem. A stream in UTF-16 (PowerShell 5's pipes, Notepad's "Unicode") is refused
    as a whole: read as UTF-8, each of its lines would fail for a reason that does not say it."""
    number, rest, long = 0, b"", 0  # long: the bytes dropped so far of a line too long to keep
    for chunk in chunks:
        if number == 0 and not rest and not long and chunk[:2] in UTF16:
            raise UsageError(UTF16_REFUSED)
        *whole, rest = (rest + chunk).split(b"\n")
        for raw in whole:
            number += 1
            if long:  # the end of a line too long to keep: it fails, the next ones are read
                yield Line(number, "", f"the line is longer than {MAX_LINE:,} bytes; a word is far shorter")
                long = 0
                continue
            yield from _line(number, raw)
        if len(rest) > MAX_LINE:  # not kept: a line without an end would otherwise fill the memory
            rest, long = b"", long + len(rest)
            if long > limits.MAX_LINE:  # no word list at all (/dev/zero): stop, rather than read forever
                raise UsageError(
                    f"stdin's line {number + 1} is longer than {limits.size(limits.MAX_LINE)}: - reads a "
                    "word (or a question) a line, and this is no list of them"
                )
    if long:
        yield Line(number + 1, "", f"the line is longer than {MAX_LINE:,} bytes; a word is far shorter")
    elif rest:
        yield from _line(number + 1, rest)


def _line(number: int, raw: bytes) -> Iterator[Line]:
    if number == 1:
        raw = raw.removeprefix(UTF8_BOM)
    raw = raw.rstrip(b"\r")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        problem = f"it is not UTF-8 text (byte {e.start + 1}); convert the input to UTF-8 (iconv -t UTF-8)"
        yield Line(number, raw.decode("utf-8", "replace"), problem)
        return
    word = listed(text)
    if word is not None:
        yield Line(number, word)


def chunks(fd: int) -> Iterator[bytes]:
    """What a file descriptor (stdin's: 0) holds, as it arrives. os.read, not sys.stdin: a thread blocked in
    a read of sys.stdin holds its lock, and Python cannot then end while the rest of the input is awaited."""
    while chunk := os.read(fd, 1 << 16):
        yield chunk


def _next(waiting: queue.Queue[Line | None]) -> Line | None:
    """The next item, waited for in steps: a signal that the system hands to another thread (numpy's BLAS
    threads, this module's reader) only flags Python's handler, which runs once the main thread wakes, and an
    untimed wait would not wake it until the next line came (Ctrl-C would wait for the producer)."""
    while True:
        try:
            return waiting.get(timeout=0.2)
        except queue.Empty:
            continue


def blocks(items: Iterable[Line], size: int = BLOCK) -> Iterator[list[Line]]:
    """The lines in blocks of at most `size`: each block holds the lines that have arrived by the time the
    previous one is answered (at least one; a thread reads ahead, so reading never waits for an answer)."""
    waiting: queue.Queue[Line | None] = queue.Queue(maxsize=4 * size)  # bounded: a huge file is not slurped
    failure: list[BaseException] = []

    def read() -> None:
        # Ctrl-C is for the main thread (Python runs handlers there); see _next for other threads'
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
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
        line = _next(waiting)
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
