"""The words commands, vector, neighbors, analogy and similarity, over an opened model: for the handle's
methods and the commands with their words (words_stream.py: the same answering a stream of lines)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from gpt2emb import candidates, contract, forms, measures, ops
from gpt2emb.choices import Method, Pool
from gpt2emb.core.open import (
    Opened,
    RankOptions,
    check_candidates,
    check_top,
    floats,
    open_checked,
    tokens_of,
)
from gpt2emb.errors import (
    BadModel,
    UsageError,
    spelt,
)
from gpt2emb.limits import BLOCK
from gpt2emb.report import Reporter
from gpt2emb.results.analogy import AnalogyInput, AnalogyResult, Ranked
from gpt2emb.results.compare import Overlap, SideBySideResult
from gpt2emb.results.neighbors import Form, Neighbor, NeighborsItem, NeighborsResult
from gpt2emb.results.similarity import SimilarityResult, Word
from gpt2emb.results.vector import VectorItem, VectorResult
from gpt2emb.tokens import Query, Vocab


def direction(wte: np.ndarray, q: Query) -> np.ndarray:
    """The query's vector, refused when it is all zeros (a cosine needs a direction) or not all numbers."""
    v = ops.query_vector(wte, q)
    if not np.isfinite(v).all():
        raise BadModel(
            f"the vector of {q.word!r} holds NaN or infinite values: this model's row for it is broken, "
            "so it has no cosine with anything; use another model"
        )
    if not v.any():
        raise UsageError(
            f"the vector of {q.word!r} is all zeros: it has no direction, so it has no cosine with anything"
        )
    return v


MAX_MATRIX = 1000  # words of one similarity matrix: a million cosines, some 20 MB of JSON


def check_matrix(n: int) -> None:
    if n < 2:
        raise UsageError(
            "give at least two words to compare, as in: "
            + spelt("similarity cat cats dog", "similarity(['cat', 'cats', 'dog'])")
        )
    if n > MAX_MATRIX:
        raise UsageError(
            f"similarity compares at most {MAX_MATRIX:,} words (a {MAX_MATRIX:,}-square matrix), not {n:,}; "
            f"for each word's nearest tokens, use {spelt('neighbors -', 'each_neighbors')} instead"
        )


# vectors whose whole rankings (two bounds per row) are held at once: 128 x 50257 x 8 bytes, 51 MB (a block of
# words for neighbors needs less per word: limits.BLOCK)
RANKED = 128


Aimed = tuple[Query, np.ndarray]  # a word's query and its vector, checked to have a direction


def vector_in(
    o: Opened, words: str | Sequence[str], exact: bool = False, pool: Pool | str = Pool.mean
) -> VectorResult:
    """The raw row of wte for each word, with its norm, mean, std, min and max."""
    return VectorResult(
        o.name, tuple(vector_items(o, [query_of(o, w, exact, pool) for w in contract.words_of(words)]))
    )


def similarity_in(
    o: Opened, words: Sequence[str], exact: bool = False, pool: Pool | str = Pool.mean
) -> SimilarityResult:
    """The cosine of every pair of words, and each word's norm."""
    words = contract.words_of(words)
    check_matrix(len(words))
    return matrix_of(o, [aimed_of(o, w, exact, pool) for w in words])


def query_of(o: Opened, word: str, exact: bool, pool: Pool | str) -> Query:
    return o.vocab.query(word, exact, contract.choice(Pool, pool, "pool"))


def aimed_of(o: Opened, word: str, exact: bool, pool: Pool | str) -> Aimed:
    q = query_of(o, word, exact, pool)
    return q, direction(o.model.wte, q)


def question_of(
    o: Opened, words: tuple[str, str, str], exact: bool, pool: Pool | str
) -> tuple[Aimed, Aimed, Aimed]:
    a, b, c = (aimed_of(o, w, exact, pool) for w in words)
    return a, b, c


def vector_items(o: Opened, queries: list[Query]) -> list[VectorItem]:
    items = []
    for q in queries:
        v = ops.query_vector(o.model.wte, q)
        items.append(
            VectorItem(
                q.word,
                tokens_of(o.vocab, q),
                q.pool.value,
                q.note,
                tuple(float(x) for x in v),
                **measures.vector_stats(v),
            )
        )
    o.model.check_rows(t.id for item in items for t in item.tokens)
    return items


def rankings_of(o: Opened, vectors: list[np.ndarray]) -> Iterator[ops.Ranking]:
    """Each vector's cosine ranking over wte, a block of vectors per matrix pass (memory stays bounded
    however many there are; a ranking does not depend on its block: see ops.cosine_rankings)."""
    for start in range(0, len(vectors), RANKED):
        yield from ops.cosine_rankings(o.model.wte, o.model.wte_norm, vectors[start : start + RANKED])


def restriction_of(o: Opened, options: RankOptions) -> candidates.Restriction | None:
    """The candidates of the options, read and checked once the model is open (the handle's way)."""
    among, restrict, whole_words, exact = options.among, options.restrict, options.whole_words, options.exact
    restrict = contract.whole(restrict)
    if restrict is not None and (not isinstance(restrict, int) or isinstance(restrict, bool)):
        raise UsageError(f"restrict is a number of token ids, not {restrict!r:.40}")
    if among is not None and not isinstance(among, str | Path):
        raise UsageError(f"among is a file of words (a str or a Path), not {among!r:.40}")
    # no specials: the vocabulary refuses a special token as it reads the file's words, naming its id
    listed = None if among is None else str(among)
    return candidates.Restriction.read(listed, restrict, whole_words, exact, None, o.model.shape.vocab_size)


def allowed_rows(
    o: Opened, restriction: candidates.Restriction | None, exact: bool, pool: Pool
) -> candidates.Allowed:
    return candidates.allowed_rows(o.vocab, restriction, exact, pool)


def neighbors_in(
    o: Opened, words: list[str], options: RankOptions, restriction: candidates.Restriction | None
) -> NeighborsResult:
    exact, pool, keep_query, fold = options.exact, options.pool, options.keep_inputs, options.fold
    k = check_top(options.k, o.model.shape.vocab_size)
    allowed = allowed_rows(o, restriction, exact, pool)
    queries = [aimed_of(o, w, exact, pool) for w in words]
    return neighbors_whole(
        o, tuple(neighbor_items(o, queries, k, keep_query, allowed, fold)), k, allowed, fold
    )


def neighbors_whole(
    o: Opened, items: tuple[NeighborsItem, ...], k: int, allowed: candidates.Allowed, fold: bool
) -> NeighborsResult:
    notes = (*allowed.notes, *fewer_notes(k, [(item.word, len(item.neighbors)) for item in items], fold))
    return NeighborsResult(o.name, k, items, allowed.info, fold, notes)


def neighbor_items(
    o: Opened, queries: list[Aimed], k: int, keep_query: bool, allowed: candidates.Allowed, fold: bool
) -> list[NeighborsItem]:
    vocab, items, m = o.vocab, [], o.model
    if len(queries) * k >= 5000:
        vocab.texts()  # thousands of tokens to show: every token's text worked out at once costs less
    for start in range(0, len(queries), BLOCK):  # a block of words per matrix pass
        block = queries[start : start + BLOCK]
        excludes = [() if keep_query else q.ids for q, _ in block]
        vectors = [v for _, v in block]
        if fold:  # a word's rows are asked for until k different words show: a ranking each
            for (q, _), ranking, out in zip(block, rankings_of(o, vectors), excludes, strict=True):
                items.append(folded_item(vocab, q, ranking, k, out, allowed.mask, keep_query))
            continue
        tops = ops.cosine_tops(m.wte, m.wte_norm, vectors, k, excludes, allowed.mask)
        for (q, _), best in zip(block, tops, strict=True):
            found = tuple(Neighbor(r, i, vocab.token(i), s) for r, (i, s) in enumerate(best, 1))
            items.append(NeighborsItem(q.word, tokens_of(vocab, q), q.pool.value, q.note, found))
    shown = [n.id for item in items for n in item.neighbors]
    forms = [f.id for item in items for n in item.neighbors for f in n.forms or ()] if fold else []
    m.check_rows([*(t.id for item in items for t in item.tokens), *shown, *forms])
    return items


def analogy_in(
    o: Opened,
    words: tuple[str, str, str],
    options: RankOptions,
    method: Method,
    restriction: candidates.Restriction | None,
) -> AnalogyResult:
    exact, pool, keep_inputs = options.exact, options.pool, options.keep_inputs
    k = check_top(options.k, o.model.shape.vocab_size)
    allowed = allowed_rows(o, restriction, exact, pool)
    (result,) = analogies(o, [question_of(o, words, exact, pool)], k, keep_inputs, method, allowed)
    return result


def analogies(
    o: Opened,
    questions: list[tuple[Aimed, Aimed, Aimed]],
    k: int,
    keep_inputs: bool,
    method: Method,
    allowed: candidates.Allowed,
) -> list[AnalogyResult]:
    vectors = [ops.analogy_vectors(a[1], b[1], c[1], method) for a, b, c in questions]
    rankings = rankings_of(o, [v for vs in vectors for v in vs])
    vocab, results, mask = o.vocab, [], allowed.mask
    for question, vs in zip(questions, vectors, strict=True):
        ranking = ops.analogy_of([next(rankings) for _ in vs], method)
        qa, qb, qc = (q for q, _ in question)
        input_ids = tuple(dict.fromkeys(i for q in (qa, qb, qc) for i in q.ids))
        best = ranking.top(k, () if keep_inputs else input_ids, mask)
        ranked = tuple(Ranked(r, i, vocab.token(i), s, i in input_ids) for r, (i, s) in enumerate(best, 1))
        inputs = tuple(
            AnalogyInput(q.word, i, vocab.token(i), *ranking.rank(i, mask))
            for q in (qa, qb, qc)
            for i in q.ids
        )
        expression = f"{qa.word} - {qb.word} + {qc.word}"
        notes = (
            *(q.note for q in (qa, qb, qc) if q.note),
            *allowed.notes,
            *fewer_notes(k, [(expression, len(ranked))], False),
        )
        results.append(
            AnalogyResult(o.name, expression, method.value, keep_inputs, ranked, inputs, notes, allowed.info)
        )
    o.model.check_rows(i for r in results for i in (*(x.id for x in r.inputs), *(x.id for x in r.results)))
    return results


def matrix_of(o: Opened, queries: list[Aimed]) -> SimilarityResult:
    check_matrix(len(queries))
    matrix, norms = measures.cosine_matrix(np.stack([v for _, v in queries]))
    items = tuple(Word(q.word, tokens_of(o.vocab, q), q.pool.value, q.note) for q, _ in queries)
    o.model.check_rows(t.id for item in items for t in item.tokens)
    return SimilarityResult(o.name, items, floats(norms), tuple(floats(r) for r in matrix))


def folded_item(
    vocab: Vocab,
    q: Query,
    ranking: ops.Ranking,
    k: int,
    exclude: tuple[int, ...],
    allowed: np.ndarray | None,
    keep_query: bool,
) -> NeighborsItem:
    """One word's neighbours folded by word form (--fold): see forms.fold."""

    def eligible(ids: list[int]) -> list[bool]:
        return [i not in exclude and (allowed is None or bool(allowed[i])) for i in ids]

    query = vocab.forms.of_text("".join(vocab.token(i) for i in q.ids))
    folded = forms.fold(
        lambda n: ranking.top(n, exclude, allowed),
        lambda ids: [float(x) for x in ranking.scores(np.array(ids, dtype=np.int64))],
        eligible,
        vocab.forms,
        query,
        k,
        keep_query,
    )
    rows = []
    for rank, row in enumerate(folded.rows, 1):
        (head, score), shown = row[0], tuple(Form(i, vocab.token(i), s) for i, s in row)
        rows.append(Neighbor(rank, head, vocab.token(head), score, shown))
    return NeighborsItem(q.word, tokens_of(vocab, q), q.pool.value, q.note, tuple(rows), folded.form_share)


def fewer_notes(k: int, found: list[tuple[str, int]], fold: bool) -> list[str]:
    """A note for each answer shorter than k: the candidates ran out (never padded)."""
    what = ("different word", "different words") if fold else ("token", "tokens")
    return [
        f"{word}: only {n:,} {what[n != 1]} {'is' if n == 1 else 'are'} left to rank, fewer than the {k:,} "
        f"asked for ({spelt('-k', 'k')})"
        for word, n in found
        if n < k
    ]


def vector(
    model: str,
    words: list[str],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> VectorResult:
    return vector_in(open_checked(model, words, exact, None, reporter, revision), words, exact, pool)


def neighbors(
    model: str,
    words: list[str],
    options: RankOptions,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> NeighborsResult:
    chosen = check_candidates(model, options)  # checked before opening
    opened = open_checked(model, words, options.exact, options.k, reporter, revision)
    return neighbors_in(opened, words, options, chosen)


def analogy(
    model: str,
    a: str,
    b: str,
    c: str,
    options: RankOptions,
    method: Method = Method.add,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> AnalogyResult:
    chosen = check_candidates(model, options)  # checked before opening
    opened = open_checked(model, [a, b, c], options.exact, options.k, reporter, revision)
    return analogy_in(opened, (a, b, c), options, method, chosen)


def similarity(
    model: str,
    words: list[str],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> SimilarityResult:
    check_matrix(len(words))
    return similarity_in(open_checked(model, words, exact, None, reporter, revision), words, exact, pool)


def side_by_side(results: list[NeighborsResult] | list[AnalogyResult]) -> SideBySideResult:
    """Several models' answers to one question, and the overlap of each pair's top-k lists (by token)."""
    lists: list[list[tuple[str, list[str]]]] = []  # per model: (query, tokens) for each query
    for r in results:
        if isinstance(r, NeighborsResult):
            lists.append([(item.word, [n.token for n in item.neighbors]) for item in r.items])
        else:
            lists.append([(r.expression, [x.token for x in r.results])])
    overlap = []
    for i, j in itertools.combinations(range(len(results)), 2):
        for (query, mine), (_, theirs) in zip(lists[i], lists[j], strict=True):
            other = set(theirs)
            shared = tuple(t for t in mine if t in other)
            overlap.append(
                Overlap(query, (results[i].model, results[j].model), len(shared), len(mine), shared)
            )
    return SideBySideResult(tuple(r.model for r in results), tuple(results), tuple(overlap))  # type: ignore[arg-type]
