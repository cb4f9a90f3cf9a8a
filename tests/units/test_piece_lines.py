"""piece_lines.py pinned where a mutation run (scripts/mutate.py) found it loose: the line number of an entry
wherever it sits in pieces.txt (the first line, after empty lines, the last line, the only line), each
number counted by hand from the file's lines, and entries written with gaps and line feeds read back."""

from __future__ import annotations

import pytest

from gpt2emb import piece_lines

# pieces.txt of ids 0-6: "a", no entry, "Ġcat", no entry, "x\ny", "Ġcat" again (a later id), "dog"
CAT = "Ġcat".encode()
DATA = b"a\n\n" + CAT + b"\n\nx\xfey\n" + CAT + b"\ndog"  # the line feed inside an entry: the byte 0xFE


@pytest.mark.parametrize(
    ("data", "piece", "line"),
    [
        (DATA, "a", 0),
        (DATA, "Ġcat", 2),  # its first line
        (DATA, "x\ny", 4),
        (DATA, "dog", 6),  # the last line, no \n after it
        (DATA, "do", None),
        (DATA, "og", None),
        (DATA, "", None),
        (b"cat", "cat", 0),  # the only line
        (b"cat\n", "cat", 0),
        (b"\ncat", "cat", 1),  # after an empty first line, the last line
        (b"\ncat\n", "cat", 1),
        (b"\n\ncat\ndog", "cat", 2),
        (b"\n\ncat\ndog", "dog", 3),
        (b"\n\n\ndog", "dog", 3),
        (b"cats\ncat", "cat", 1),
        (b"cat\ncat", "cat", 0),
    ],
)
def test_the_line_of_an_entry_wherever_it_sits(data: bytes, piece: str, line: int | None) -> None:
    assert piece_lines.line_of(data, piece) == line


def test_entries_with_gaps_and_line_feeds_come_back() -> None:
    vocab = {"a": 0, "Ġcat": 2, "x\ny": 4, "\ud800": 5, "dog": 6}
    data = piece_lines.written(vocab)
    assert data == b"a\n\n\xc4\xa0cat\n\nx\xfey\n\xed\xa0\x80\ndog"
    assert piece_lines.read_all(data) == ["a", "", "Ġcat", "", "x\ny", "\ud800", "dog"]
    assert piece_lines.read_all(piece_lines.written({"a": 0, "b": 1})) == ["a", "b"]
    assert piece_lines.written({}) == b""
    assert piece_lines.written({"a": 0}) == b"a"
