"""A cache entry's pieces.txt: line i holds the vocabulary entry of token i, so that a warm command looks up
a word, or shows a token, from the file's bytes without parsing tokenizer.json.

Lines end at the byte \\n alone. An entry is written as its UTF-8 bytes with each line feed in it written as
the byte 0xFE, which UTF-8 never uses, and a lone surrogate as its three bytes (Python's surrogatepass):
every entry comes back byte for byte, whatever it holds (\\r, \\x85, \\u2028, NUL: a converted SentencePiece
or WordPiece vocabulary holds such entries). An empty line: no entry (an added token's id, or a gap).
Entries of formats 3 and 4 are read the same way: they wrote entries as their UTF-8 bytes too, only left
out an entry holding a line feed (an empty line, which the tokenizer then answers for).
"""

from __future__ import annotations

FILE = "pieces.txt"
_LINE_FEED = b"\xfe"  # a line feed inside an entry: a byte no UTF-8 text holds


def encoded(piece: str) -> bytes:
    """An entry as its line holds it (no \\n byte)."""
    return piece.encode("utf-8", "surrogatepass").replace(b"\n", _LINE_FEED)


def decoded(line: bytes) -> str:
    """The entry a line holds (without its \\n)."""
    return line.replace(_LINE_FEED, b"\n").decode("utf-8", "surrogatepass")


def written(vocab: dict[str, int]) -> bytes:
    """The file's bytes for a vocabulary (entry -> id)."""
    lines = [b""] * (max(vocab.values(), default=-1) + 1)
    for piece, i in vocab.items():
        lines[i] = encoded(piece)
    return b"\n".join(lines)


def read_all(data: bytes) -> list[str]:
    """Every line's entry ("" where there is none)."""
    if _LINE_FEED in data:
        return [decoded(line) for line in data.split(b"\n")]
    return data.decode("utf-8", "surrogatepass").split("\n")  # one decode, not one per line


def line_of(data: bytes, piece: str) -> int | None:
    """The number of the first line of data that holds piece (None for none, and for ""): what
    read_all(data).index gives, without decoding or splitting the file."""
    if not piece:
        return None
    line = encoded(piece)
    if data == line or data.startswith(line + b"\n"):
        return 0
    at = data.find(b"\n" + line + b"\n")  # at: the \n before the line
    if at < 0:
        if not data.endswith(b"\n" + line):
            return None
        at = len(data) - len(line) - 1
    return data.count(b"\n", 0, at + 1)
