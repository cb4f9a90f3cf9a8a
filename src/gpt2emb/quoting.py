"""How a token or a word is written inside a message: in double quotes, with control characters escaped."""

from __future__ import annotations


def quote(text: str, n: int | None = None) -> str:
    """A token or a word in double quotes, so that a leading space shows.

    Control characters are escaped, so that a message stays on one line and says which character it means.
    With n, only the first n characters are kept, and ... marks that the text goes on.
    """
    if n is not None and len(text) > n:
        return quote(text[:n]) + "..."
    # A character below 256 takes the short escape, as Python writes it; any other takes four digits.
    escaped = "".join(
        ch
        if ch.isprintable() or ch == " "
        else (f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        for ch in text
    )
    return f'"{escaped}"'
