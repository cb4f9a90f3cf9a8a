"""core/evaluate_files.py: the benchmark files read for the evaluations.

These are analogies (word2vec's questions-words format) and word pairs (WordSim-353 style), each read as a
stream. The tests check the sections and line numbers, the other spellings of a word, and the limits on a
line and on a file, each at exactly the limit and one byte more."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest

from gpt2emb import limits
from gpt2emb.choices import Rule
from gpt2emb.core import evaluate_files
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
    words = evaluate_files.RuleWords.build(pieces, display, rule, ignore_case=False)
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
        evaluate_files.read_analogies(path)
    assert e.value.message == f"{path}, line {line}: a question before any ': section' line"
    assert line in (2, 4)


def test_sections_keep_their_questions_and_names(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text(": one \na b c d\nnot four words\n\n: two\ne f g h\ni j k l\n")
    got = [(s.name, s.questions) for s in evaluate_files.read_analogies(path)]
    assert got == [("one", [("a", "b", "c", "d")]), ("two", [("e", "f", "g", "h"), ("i", "j", "k", "l")])]
    empty = tmp_path / "empty.txt"
    empty.write_text(": one\n: two\nnot a question\n")
    with pytest.raises(UsageError, match="holds no analogy questions"):
        evaluate_files.read_analogies(empty)


def other_spellings(words: list[str], question: list[int]) -> list[int]:
    """The words spelt as a question's words up to case and not themselves one of them, by a plain loop."""
    folded = {words[i].upper() for i in question}
    return [i for i, w in enumerate(words) if w.upper() in folded and i not in question]


def test_other_spellings_of_two_and_of_three() -> None:
    names = ["king", "King", "queen", "QUEEN", "Queen", "man", "woman", "Woman"]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=True)
    for question in ([0, 2, 5], [1, 3, 6], [5, 6, 7], [0, 1, 4]):
        assert words.spellings(np.array(question)) == other_spellings(names, question)
    assert words.spellings(np.array([0, 2, 5])) == [1, 3, 4]  # a word of two spellings counts too
    as_typed = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    assert as_typed.spellings(np.array([0, 2, 5])) == []


def piped(data: bytes) -> io.BufferedReader:
    """A pipe holding data (not a regular file: its size is known only by reading it), its writer closed."""
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return os.fdopen(r, "rb")


@pytest.mark.parametrize("read", [3, 64])
def test_a_stream_of_exactly_the_file_limit_is_read_and_one_byte_more_refused(
    read: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"a b\nc\r\nd e f\n" * 8
    monkeypatch.setattr(limits, "MAX_FILE", len(data))
    monkeypatch.setattr(evaluate_files, "_READ", read)
    with piped(data) as f:
        assert list(evaluate_files._split(f, "p")) == data.decode().splitlines()
    with (
        piped(data + b"x") as f,
        pytest.raises(UsageError, match=f"^p is over {len(data)} bytes: a benchmark"),
    ):
        list(evaluate_files._split(f, "p"))


def test_a_file_of_exactly_the_file_limit_is_read_and_one_byte_more_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"king\tqueen\t8.5\n" * 10)
    monkeypatch.setattr(limits, "MAX_FILE", path.stat().st_size)
    assert len(evaluate_files.read_pairs(path).pairs) == 10
    monkeypatch.setattr(limits, "MAX_FILE", path.stat().st_size - 1)
    with pytest.raises(UsageError, match=f"is over {path.stat().st_size - 1} bytes"):
        evaluate_files.read_pairs(path)


@pytest.mark.parametrize("read", [1, 4, 5, 64])
def test_a_line_of_exactly_the_line_limit_is_read_wherever_the_reads_cut(
    read: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_LINE", 5)
    monkeypatch.setattr(evaluate_files, "_READ", read)
    lines = [b"abcde", b"ab", b"", b"abcd", b"abcde"]
    with piped(b"\n".join(lines) + b"\n") as f:
        assert list(evaluate_files._split(f, "p")) == [x.decode() for x in lines]
    with piped(b"ab\nabcdef\nab\n") as f, pytest.raises(UsageError, match=r"^p, line 2: longer than 5 bytes"):
        list(evaluate_files._split(f, "p"))
    with piped(b"ab\nabcde") as f:  # the last line without its newline
        assert list(evaluate_files._split(f, "p")) == ["ab", "abcde"]
    with piped(b"ab\nabcdef") as f, pytest.raises(UsageError, match=r"^p, line 2: longer than 5 bytes"):
        list(evaluate_files._split(f, "p"))


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (1, "1 line of {path} was skipped, unreadable ({rule}): line 2, "),
        (2, "2 lines of {path} were skipped, unreadable ({rule}): the first is line 2, "),
    ],
)
def test_the_note_on_unreadable_pair_lines_in_the_right_number(tmp_path: Path, bad: int, said: str) -> None:
    path = tmp_path / "pairs.tsv"
    lines = ["cat\tdog\t1", *["man\tking\tabc"] * bad, "king\tqueen\t2"]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    read = evaluate_files.read_pairs(path)
    assert (len(read.pairs), read.unreadable) == (2, bad)
    rule = "a pair is word<TAB>word<TAB>score, the score a finite number"
    assert read.note(path).startswith(said.format(path=path, rule=rule))
