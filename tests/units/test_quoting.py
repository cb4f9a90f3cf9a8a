"""quoting.py: a token or a word in double quotes, control characters escaped, a long text cut."""

from __future__ import annotations

from gpt2emb.quoting import quote


def test_quote_escapes_control_characters_and_cuts_a_long_text() -> None:
    # U+0007 and U+0085 are below 256, so they take \xNN. U+2028 (a line separator) takes \uNNNN. A space
    # stays a space.
    assert quote("a\x07\x85\u2028 b") == '"a\\x07\\x85\\u2028 b"'
    assert quote("abcdef", 3) == '"abc"...'
    assert quote("abc", 3) == '"abc"'
