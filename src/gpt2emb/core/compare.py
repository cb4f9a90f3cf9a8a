"""Several models' answers to one question side by side (neighbors, analogy and similarity given -m more than
once): each model asked in turn, a word one of them lacks left empty with its reason while the others answer,
and how much their top-k lists agree, word by word."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from gpt2emb.choices import Method, Pool
from gpt2emb.core.open import Opened, RankOptions, check_candidates, open_checked
from gpt2emb.errors import UsageError
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.analogy import AnalogyResult, Term
from gpt2emb.results.compare import (
    Lack,
    Overlap,
    PairCosines,
    Side,
    SideBySideResult,
    SimilaritySideBySide,
    word_of,
)
from gpt2emb.results.neighbors import NeighborsResult
from gpt2emb.results.similarity import SimilarityResult


def side_by_side(
    results: Sequence[NeighborsResult] | Sequence[AnalogyResult | None],
    sides: Sequence[Side] = (),
    models: Sequence[str] = (),
) -> SideBySideResult:
    """Several models' answers to one question, and the overlap of the top-k lists of each pair of models
    that both answered (a word in both, matched by its text without the leading space). models: their names,
    where a model that answered nothing (an analogy it lacks a word of: None) has no result to name it."""
    lists: list[list[list[str] | None]] = []  # per model, each query's tokens (None: it lacks a word of it)
    for r in results:
        if isinstance(r, NeighborsResult):
            lists.append([[n.token for n in i.neighbors] if i.tokens else None for i in r.items])
        else:
            lists.append([None if r is None else [x.token for x in r.results]])
    names = tuple(models) or tuple(r.model for r in results if r is not None)
    first = next(r for r in results if r is not None)
    asked = [i.word for i in first.items] if isinstance(first, NeighborsResult) else [first.expression]
    overlap = []
    for i, j in itertools.combinations(range(len(results)), 2):
        for query, mine, theirs in zip(asked, lists[i], lists[j], strict=True):
            if mine is None or theirs is None:
                continue  # one of the two lacks a word of it: nothing to compare
            other = {word_of(t) for t in theirs}
            tokens = tuple(t for t in mine if word_of(t) in other)
            words = tuple(dict.fromkeys(word_of(t) for t in tokens))
            overlap.append(Overlap(query, (names[i], names[j]), len(words), len(mine), tokens, words))
    return SideBySideResult(names, tuple(results), tuple(overlap), tuple(sides))  # type: ignore[arg-type]


def _side(o: Opened, queries: Sequence[str], lacks: dict[int, str]) -> Side:
    return Side(o.name, o.model.static, tuple(Lack(queries[at], why) for at, why in sorted(lacks.items())))


def _someone_answers(queries: Sequence[str], lacks: list[dict[int, str]]) -> None:
    """A query no model can answer is refused as one model refuses it (the first model's reason)."""
    for at in range(len(queries)):
        if all(at in lacked for lacked in lacks):
            raise UsageError(lacks[0][at])


def neighbors_side_by_side(
    models: Sequence[ModelRef],
    words: list[str],
    options: RankOptions,
    reporter: Reporter | None = None,
    figure: str | None = None,
) -> SideBySideResult:
    """`neighbors WORD... -m A -m B`: each model's neighbours of the words; with figure, a panel each."""
    from gpt2emb.core import neighbors

    opened, results, lacks = [], [], []
    for m in models:
        chosen = check_candidates(m, options)
        o = open_checked(m, words, options.exact, options.k, reporter)
        lacked: dict[int, str] = {}
        results.append(neighbors.neighbors_in(o, words, options, chosen, lacked))
        opened.append(o)
        lacks.append(lacked)
    _someone_answers(words, lacks)
    sides = [_side(o, words, lacked) for o, lacked in zip(opened, lacks, strict=True)]
    result = side_by_side(results, sides)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("neighbors", result, figure, opened)
    return result


def analogy_side_by_side(
    models: Sequence[ModelRef],
    terms: Sequence[Term],
    options: RankOptions,
    method: Method,
    reporter: Reporter | None = None,
) -> SideBySideResult:
    """`analogy A B C -m A -m B`: each model's answer; a model that lacks a word of the sum answers nothing
    (null), and says why."""
    from gpt2emb.core import analogy

    expression = analogy.written(terms)
    opened, lacks = [], []
    results: list[AnalogyResult | None] = []
    for m in models:
        chosen = check_candidates(m, options)
        o = open_checked(m, [t.word for t in terms], options.exact, options.k, reporter)
        lacked: dict[int, str] = {}
        try:
            results.append(analogy.analogy_in(o, terms, options, method, chosen))
        except UsageError as e:  # a word it lacks (or a sum that cancels in its rows): its reason
            results.append(None)
            lacked[0] = e.message
        opened.append(o)
        lacks.append(lacked)
    _someone_answers([expression], lacks)
    sides = [_side(o, [expression], lacked) for o, lacked in zip(opened, lacks, strict=True)]
    return side_by_side(results, sides, [o.name for o in opened])


def similarity_side_by_side(
    models: Sequence[ModelRef],
    words: list[str],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
) -> SimilaritySideBySide:
    """`similarity WORD... -m A -m B`: each pair's cosine in each model, and each model's own matrix of the
    words it has (None for fewer than two)."""
    from gpt2emb.core import similarity
    from gpt2emb.core.words import aim_each

    similarity.check_matrix(len(words))
    opened, results, lacks, places = [], [], [], []
    for m in models:
        o = open_checked(m, words, exact, None, reporter)
        lacked: dict[int, str] = {}
        aimed = aim_each(o, words, exact, pool, lacked)
        results.append(similarity.matrix_of(o, aimed) if len(aimed) > 1 else None)
        kept = [at for at in range(len(words)) if at not in lacked]
        places.append({at: row for row, at in enumerate(kept)})  # a word's row in this model's matrix
        opened.append(o)
        lacks.append(lacked)
    _someone_answers(words, lacks)
    pairs = tuple(
        PairCosines(
            words[a], words[b], tuple(_cosine(r, p, a, b) for r, p in zip(results, places, strict=True))
        )
        for a, b in itertools.combinations(range(len(words)), 2)
    )
    sides = tuple(_side(o, words, lacked) for o, lacked in zip(opened, lacks, strict=True))
    return SimilaritySideBySide(tuple(o.name for o in opened), tuple(words), pairs, tuple(results), sides)


def _cosine(result: SimilarityResult | None, place: dict[int, int], a: int, b: int) -> float | None:
    if result is None or a not in place or b not in place:
        return None
    return result.matrix[place[a]][place[b]]
