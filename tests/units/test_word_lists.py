"""word_lists.py: the word of each line of a word list, blank lines and comments skipped, lines numbered."""

from __future__ import annotations

from gpt2emb.word_lists import listed, listed_words


def test_a_line_s_word_is_the_line_without_the_white_space_around_it() -> None:
    assert listed("  king\t\n") == "king"
    assert listed("new york\r\n") == "new york"  # the spaces inside a word are its own
    assert listed("c#") == "c#"  # a # after the first character is part of the word


def test_a_blank_line_and_a_comment_have_no_word() -> None:
    assert [listed(line) for line in ("", "   ", "\t\n", "#", "# animals", "  # indented")] == [None] * 6


def test_the_words_of_a_list_carry_their_line_numbers_from_1() -> None:
    lines = iter(["king", "", "# a comment", "  queen ", "#", "id:5"])  # any iterable, read once
    assert list(listed_words(lines)) == [(1, "king"), (4, "queen"), (6, "id:5")]
    assert list(listed_words([])) == []
