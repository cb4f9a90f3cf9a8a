"""batch.py pinned where a mutation run (scripts/mutate.py) found it loose: the line numbers and byte offsets
a stream's failures are named by (a last line without its end, a line too long to keep, a byte that is not
UTF-8), counted here from the stream as written; and how each() splits a block at its first failed line and
lets a damaged cache entry through, watched through its own prepare and answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from gpt2emb import batch, limits
from gpt2emb.errors import DamagedEntry, UsageError

from conftest import run_cli
from fakehub import FakeHub


def read(*chunks: bytes) -> list[tuple[int, str, str]]:
    return [(line.number, line.text, line.problem) for line in batch.lines(iter(chunks))]


def test_a_last_line_without_its_end_is_numbered_after_the_others() -> None:
    assert read(b"cat\n# a comment\n\ndog") == [(1, "cat", ""), (4, "dog", "")]
    assert read(b"cat\n", b"d", b"og") == [(1, "cat", ""), (2, "dog", "")]


def test_a_last_line_too_long_to_keep_fails_with_its_number() -> None:
    long = b"x" * (batch.MAX_LINE + 1)
    too_long = f"the line is longer than {batch.MAX_LINE:,} bytes; a word is far shorter"
    assert read(b"cat\ndog\n", long) == [(1, "cat", ""), (2, "dog", ""), (3, "", too_long)]
    assert read(b"cat\n", long, b"\nking\n") == [(1, "cat", ""), (2, "", too_long), (3, "king", "")]


def test_a_line_past_the_stream_limit_is_refused_with_its_number() -> None:
    def endless() -> Iterator[bytes]:
        yield b"cat\ndog\n"
        while True:
            yield b"x" * (1 << 16)

    with pytest.raises(UsageError) as raised:
        for _ in batch.lines(endless()):
            pass
    assert str(raised.value) == (
        f"stdin's line 3 is longer than {limits.size(limits.MAX_LINE)}: - reads a word (or a question) a "
        "line, and this is no list of them"
    )


@pytest.mark.parametrize(("raw", "byte"), [(b"\xffcat", 1), (b"ca\xfft", 3), (b"caf\xc3", 4)])
def test_a_line_that_is_not_utf8_names_its_first_bad_byte(raw: bytes, byte: int) -> None:
    ((number, _, problem),) = read(b"# words\n" + raw + b"\n")
    assert number == 2
    assert problem == f"it is not UTF-8 text (byte {byte}); convert the input to UTF-8 (iconv -t UTF-8)"


def test_the_bad_byte_is_named_through_the_cli(hub: FakeHub, stdin: Callable[[bytes], None]) -> None:
    stdin(b"cat\nki\xffng\n")
    result = run_cli("vector", "-", "--json")
    assert "line 2: it is not UTF-8 text (byte 3)" in result.stderr + result.stdout


def test_a_block_is_answered_up_to_its_first_failed_line_before_the_rest_is_looked_at() -> None:
    events: list[str] = []

    def prepare(word: str) -> str:
        events.append(f"prepare {word}")
        if word.startswith("bad"):
            raise UsageError(f"{word} is refused")
        return word

    def answer(words: list[str]) -> list[str]:
        events.append(f"answer {' '.join(words)}")
        return [w.upper() for w in words]

    block = [batch.Line(n, w) for n, w in enumerate(["a", "b", "bad1", "c", "bad2", "d"], 1)]
    out = batch.each([block], prepare, answer)
    got = [next(out) for _ in range(3)]
    assert got[:2] == ["A", "B"] and isinstance(got[2], batch.FailedLine)
    assert got[2].message == "line 3: bad1 is refused"
    # nothing after the first failed line was looked at before it was handed out
    assert events == ["prepare a", "prepare b", "prepare bad1", "answer a b"]
    rest = list(out)
    assert rest[0] == "C" and isinstance(rest[1], batch.FailedLine) and rest[2] == "D"
    assert events[4:] == ["prepare c", "prepare bad2", "prepare d", "answer c d"]  # one pass for the rest


def test_a_damaged_cache_entry_ends_the_stream() -> None:
    def prepare(word: str) -> str:
        if word == "b":
            raise DamagedEntry("the cache entry is damaged")
        return word

    block = [batch.Line(1, "a"), batch.Line(2, "b"), batch.Line(3, "c")]
    with pytest.raises(DamagedEntry, match="the cache entry is damaged"):
        list(batch.each([block], prepare, lambda words: words))
