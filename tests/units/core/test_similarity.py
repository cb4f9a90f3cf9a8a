"""What core/similarity.py decides, pinned where a mutation run found it loose (issue 43, point 4): a matrix
of 1,000 words and no more, from arguments and from a stream; a stream's 1,000 failing lines and no more; and
a stream with one word that has a row gives no matrix (a matrix needs two); one word is refused before
the model is fetched."""

from __future__ import annotations

import pytest

import gpt2emb
from gpt2emb.errors import UsageError
from gpt2emb.report import QuietReporter

from conftest import run_cli
from fakehub import FakeHub

MOST = "similarity compares at most 1,000 words (a 1,000-square matrix)"


def opened() -> gpt2emb.Embeddings:
    return gpt2emb.open("gpt2", reporter=QuietReporter())


def test_a_matrix_of_1000_words_and_no_more(hub: FakeHub) -> None:
    m = opened()
    assert len(m.similarity(["cat"] * 1000).matrix) == 1000
    with pytest.raises(
        UsageError, match=r"at most 1,000 words \(a 1,000-square matrix\), not 1,001; .*each_neighbors"
    ):
        m.similarity(["cat"] * 1001)
    refused = run_cli("similarity", *["cat"] * 1001)
    assert refused.exit_code == 2
    assert f"{MOST}, not 1,001; for each word's nearest tokens, use neighbors - instead" in refused.stderr


def test_a_stream_of_1000_words_and_1000_failures_and_no_more(hub: FakeHub) -> None:
    m = opened()
    result, failed = m.each_similarity(["cat"] * 1000)
    assert result is not None and len(result.matrix) == 1000 and failed == []
    with pytest.raises(UsageError, match=r"at most 1,000 words .*, and stdin holds more; for each word's"):
        m.each_similarity(["cat"] * 1001)
    result, failed = m.each_similarity(["id:99999"] * 1000)
    assert result is None and len(failed) == 1000
    with pytest.raises(UsageError, match=r"at most 1,000 words .*, and stdin holds more that fail; for each"):
        m.each_similarity(["id:99999"] * 1001)
    # 1,000 failures, then a 1,001st word with a row: too many words, not too many failures
    with pytest.raises(UsageError, match=r"and stdin holds more; for each word's"):
        m.each_similarity(["id:99999"] * 1000 + ["cat"] * 1001)


def test_a_stream_with_one_word_that_has_a_row_gives_no_matrix(hub: FakeHub) -> None:
    result, failed = opened().each_similarity(["cat", "id:99999"])
    assert result is None and [f.line.number for f in failed] == [2]


def test_one_word_is_refused_before_the_model_is_fetched(hub: FakeHub) -> None:
    refused = run_cli("similarity", "cat")
    assert refused.exit_code == 2 and "give at least two words to compare" in refused.stderr
    assert hub.requests == []  # nothing fetched, nothing cached
