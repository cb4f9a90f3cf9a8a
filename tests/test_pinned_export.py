"""core/export.py pinned where a mutation run (scripts/mutate.py) found it loose: how the Projector's
metadata spells a token at the edges of its escapes (the last control character below 0x80 and the first
above it, the last character of four hex digits and the first of eight), each spelt here from the rule the
docstring of export.shown gives."""

from __future__ import annotations

import pytest

from gpt2emb.core import export


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("\x7f", '"\\x7f"'),  # DEL: a control character below 0x80, as its byte
        ("\x80", '"\\u0080"'),  # the character U+0080, not the byte 0x80 (which is "\\x80")
        ("\x9f", '"\\u009f"'),
        ("\uffff", '"\\uffff"'),  # the last of four hex digits
        ("\U00010000", '"\U00010000"'),  # printable (LINEAR B SYLLABLE B008 A): itself
        ("\U000effff", '"\\U000effff"'),  # a noncharacter past four digits: eight
        ("\ufeff", '"\\ufeff"'),
    ],
)
def test_escapes_at_their_edges(text: str, field: str) -> None:
    assert export.shown(text.encode("utf-8")) == field


def test_a_byte_and_the_character_of_the_same_number_are_told_apart() -> None:
    assert export.shown(b"\x80") == '"\\x80"' and export.shown("\x80".encode()) == '"\\u0080"'
