"""evaluate.py pinned where a mutation run (scripts/mutate.py) found it loose, each answer from an independent
computation: candidate words de-duplicated by a first-seen loop, line numbers counted from the file's own
lines, and answers against every candidate scored in a float64 loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpt2emb import evaluate
from gpt2emb.choices import Rule
from gpt2emb.errors import UsageError


def first_spellings(display: list[str], rule: Rule) -> tuple[list[str], list[int]]:
    """The words of a rule and the first token id that shows each, by a plain loop."""
    words: list[str] = []
    ids: list[int] = []
    for token_id, text in enumerate(display):
        spaced = text[1:] if text.startswith(" ") else ""
        word = text if rule is Rule.bare else spaced
        if word and not any(ch.isspace() for ch in word) and word not in words:
            words.append(word)
            ids.append(token_id)
    return words, ids


@pytest.mark.parametrize("rule", list(Rule))
def test_a_word_two_tokens_show_is_one_candidate(rule: Rule) -> None:
    """Two tokens that show the same text (two entries of one display) are one candidate word, the first."""
    display = [" king", " king", "king", " queen", "king", " ", " a b", "queen", " queen"]
    pieces = [f"p{i}" for i in range(len(display))]
    words = evaluate.Words.build(pieces, display, rule, ignore_case=False)
    expected_words, expected_ids = first_spellings(display, rule)
    assert (words.words, words.ids.tolist()) == (expected_words, expected_ids)
    assert len(set(words.words)) == len(words.words)


@pytest.mark.parametrize("text", ["\n \n\t\nman king woman queen\n: royalty\n", "\n# a comment\n: royalty\n"])
def test_the_line_of_a_question_before_any_section(tmp_path: Path, text: str) -> None:
    """Blank lines are skipped; any other line before the first section is refused, named by its number."""
    path = tmp_path / "questions.txt"
    path.write_text(text)
    line = next(n for n, s in enumerate(text.splitlines(), 1) if s.split() and not s.startswith(": "))
    with pytest.raises(UsageError) as e:
        evaluate.read_analogies(path)
    assert e.value.message == f"{path}, line {line}: a question before any ': section' line"
    assert line in (2, 4)


def test_sections_keep_their_questions_and_names(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text(": one \na b c d\nnot four words\n\n: two\ne f g h\ni j k l\n")
    got = [(s.name, s.questions) for s in evaluate.read_analogies(path)]
    assert got == [("one", [("a", "b", "c", "d")]), ("two", [("e", "f", "g", "h"), ("i", "j", "k", "l")])]
    empty = tmp_path / "empty.txt"
    empty.write_text(": one\n: two\nnot a question\n")
    with pytest.raises(UsageError, match="holds no analogy questions"):
        evaluate.read_analogies(empty)
