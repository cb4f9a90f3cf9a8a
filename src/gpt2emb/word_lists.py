"""The words of a word list, one a line: an --among file, or the lines of a batch read from stdin."""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def listed_words(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """The words of a word list, each with its line number counted from 1.

    The white space around a word is dropped. Blank lines are skipped, and so are comments, whose first
    character other than a space is #. So a word of its own cannot begin with # nor hold the spaces around
    it: such a token is named by its id (id:N).
    """
    for number, line in enumerate(lines, 1):
        word = listed(line)
        if word is not None:
            yield number, word


def listed(line: str) -> str | None:
    """The word of one line of a word list (see listed_words), or None for a blank line or a comment."""
    word = line.strip()
    return word if word and not word.startswith("#") else None
