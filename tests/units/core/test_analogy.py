"""What core/analogy.py decides, pinned where a mutation run found it loose (issue 43, point 4): a line of
stdin that is not a question is named by its first 80 characters, then ...."""

from __future__ import annotations

import math
from typing import Any

import pytest

from conftest import run_cli, run_json
from fakehub import FakeHub


def test_a_long_line_that_is_no_question_is_named_by_its_first_80_characters(
    hub: FakeHub, stdin: Any
) -> None:
    line = "king " + "x" * 76  # 81 characters, two words: not A B C, and no sign
    assert len(line) == 81
    stdin(f"{line}\n".encode())
    bad = run_cli("analogy", "-")
    assert bad.exit_code == 7
    assert f'line 1: "{line[:80]}"... is not three words A B C' in bad.stderr


def test_the_note_of_products_below_float64s_range_counts_them() -> None:
    """Only a 0 whose logarithm is a number is lost to the range: a product of exactly 0 (a cosine of -1,
    its log -inf) is 0 indeed, and add's scores have no logarithm."""
    from gpt2emb.core.analogy import _below_range
    from gpt2emb.results.analogy import Ranked

    def ranked(score: float, log: float | None) -> Ranked:
        return Ranked(1, 7, "x", score, log, False)

    assert _below_range([ranked(0.0, -800.0)]) == [
        "1 3cosmul score is below float64's range (1e-308) and shown as 0: log_score in --json keeps them "
        "apart, and the ranks are by it"
    ]
    assert _below_range([ranked(0.0, -800.0), ranked(0.0, -900.0), ranked(0.0, -math.inf)])[0].startswith(
        "2 3cosmul scores are below"
    )
    assert _below_range([ranked(0.0, -math.inf), ranked(1e-300, -690.8), ranked(0.0, None)]) == []


def test_a_sum_that_cannot_be_read_and_a_handed_word_with_a_sign_are_named_by_80_characters(
    hub: FakeHub,
) -> None:
    """Messages name a long sum or word by its first 80 characters, then ..."""
    import gpt2emb
    from gpt2emb.errors import UsageError
    from gpt2emb.report import QuietReporter

    terms = [f"w{i:03d}" for i in range(30)]  # 30 words of 4 characters: a sum of 209 characters
    expression = " + ".join(terms) + " +"
    result = run_cli("analogy", expression)
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert f'cannot read the sum "{expression[:80]}"... at its item 60' in said
    word = "king - " + "x" * 100
    with pytest.raises(UsageError) as refused:
        gpt2emb.open("gpt2", reporter=QuietReporter()).analogy(positive=[word], negative=["man"])
    assert f'the word "{word[:80]}"... holds a sign' in str(refused.value)


def test_the_note_of_an_answer_shorter_than_k_names_a_long_sum_by_80_characters(hub: FakeHub) -> None:
    expression = " + ".join(["king", "woman", *(f"id:{i}" for i in range(100, 130))]) + " - man"
    doc = run_json("analogy", expression, "-k", "50", "--restrict", "40")
    assert any(n.startswith(f'"{expression[:80]}"...: only ') for n in doc["notes"]), doc["notes"]
