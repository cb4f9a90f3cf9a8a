"""forms.py pinned where a mutation run (scripts/mutate.py) found it loose: a query word that is no token
finds its singular's row, a token of spaces only is a row of its own beside a single word, and a query whose
forms crowd the raw ranking still gets its k other words (the ranking asked again, for more)."""

from __future__ import annotations

from gpt2emb.forms import Folded, Forms, fold


def test_a_query_that_is_no_token_finds_its_singulars_row() -> None:
    forms = Forms([" dog", " cat", " cats"])
    assert forms.of_text(" dogs") == {forms.labels[0]}  # " dogs" is no token: "dog" is its singular
    assert forms.of_text("Cats") == {forms.labels[1]}
    assert forms.of_text(" birds") == set()


def test_a_token_of_spaces_is_a_row_of_its_own() -> None:
    forms = Forms([" cat", " ", " cats", "  "])
    assert forms.labels[0] == forms.labels[2]
    assert len({forms.labels[0], forms.labels[1], forms.labels[3]}) == 3
    assert forms.members(forms.labels[1]) == [1]
    assert forms.members(forms.labels[0]) == [0, 2]
    for texts in ([" cat", " "], [" cat", " dog", ""], [" cat", " dog", " cats", "   "]):
        forms = Forms(texts)
        assert forms.members(forms.labels[-1]) == [len(texts) - 1]  # with no word's row


def crowded(k: int) -> tuple[Folded, list[int]]:
    """A ranking whose best 2k + 8 tokens are all forms of the query's word: the other words come after."""
    kings = [a + b for a in ("", " ") for b in ("King", "king", "KING", "Kings", "kings", "KINGS")]  # 12
    texts = [*kings, " queen", " prince", " royal"]
    scores = [1.0 - i / 100 for i in range(len(texts))]  # the texts' order, best first
    forms = Forms(texts)
    asked: list[int] = []

    def top(n: int) -> list[tuple[int, float]]:
        asked.append(n)
        return [(i, scores[i]) for i in range(min(n, len(texts)))]

    folded = fold(
        top,
        lambda ids: [scores[i] for i in ids],
        lambda ids: [True] * len(ids),
        forms,
        forms.of_text(" king"),
        k,
        False,
    )
    return folded, [texts.index(w) for w in (" queen", " prince", " royal")]


def test_forms_that_crowd_the_ranking_are_skipped_by_asking_for_more() -> None:
    folded, others = crowded(1)
    assert others == [12, 13, 14]  # past the first ask, of 2k + 8 = 10 tokens (12 with k = 2)
    assert [row[0][0] for row in folded.rows] == others[:1]
    assert folded.form_share == 1
    folded, others = crowded(2)
    assert [row[0][0] for row in folded.rows] == others[:2]
