"""The words commands answering a stream of lines (`-` for stdin, the handle's each_*): each line as it
comes, in blocks of a matrix pass, a line that fails as a batch.FailedLine in its place."""

from __future__ import annotations

from collections.abc import Iterable

from gpt2emb import batch, candidates
from gpt2emb.choices import Method, Pool
from gpt2emb.core import similarity as one_by_one  # its MAX_MATRIX read at each use, as a test lowers it
from gpt2emb.core.analogy import analogies, question_of
from gpt2emb.core.neighbors import neighbor_items, neighbors_whole
from gpt2emb.core.open import (
    Opened,
    RankOptions,
    check_candidates,
    check_top,
    open_checked,
)
from gpt2emb.core.similarity import matrix_of
from gpt2emb.core.vector import vector_items
from gpt2emb.core.words import Aimed, aimed_of, allowed_rows, fewer_notes, query_of
from gpt2emb.errors import (
    UsageError,
    spelt,
)
from gpt2emb.report import Reporter
from gpt2emb.results.analogy import AnalogyBatch, AnalogyResult
from gpt2emb.results.neighbors import NeighborsItem, NeighborsResult
from gpt2emb.results.similarity import SimilarityResult
from gpt2emb.results.vector import VectorItem, VectorResult
from gpt2emb.tokens import quote


def each_vector_in(
    o: Opened, blocks: Iterable[list[batch.Line]], exact: bool, pool: Pool | str
) -> batch.Answers[VectorItem]:
    answers = batch.each(blocks, lambda text: query_of(o, text, exact, pool), lambda qs: vector_items(o, qs))
    return batch.Answers(
        answers,
        lambda items: VectorResult(o.name, items),
        lambda item, _: VectorResult(o.name, (item,)),
    )


def each_similarity_in(
    o: Opened, blocks: Iterable[list[batch.Line]], exact: bool, pool: Pool | str
) -> tuple[SimilarityResult | None, list[batch.FailedLine]]:
    aimed: list[Aimed] = []
    failed: list[batch.FailedLine] = []
    for answer in batch.each(blocks, lambda text: aimed_of(o, text, exact, pool), lambda aimed: aimed):
        if isinstance(answer, batch.FailedLine):
            failed.append(answer)
        else:
            aimed.append(answer)
        most = one_by_one.MAX_MATRIX
        if len(aimed) > most or len(failed) > most:  # at once: stdin may have no end
            raise UsageError(
                f"similarity compares at most {most:,} words (a {most:,}-square matrix), and "
                f"stdin holds more{' that fail' if len(failed) > most else ''}; for each word's "
                f"nearest tokens, use {spelt('neighbors -', 'each_neighbors')} instead"
            )
    return (matrix_of(o, aimed) if len(aimed) > 1 else None), failed


def each_neighbors_in(
    o: Opened,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    restriction: candidates.Restriction | None,
) -> batch.Answers[NeighborsItem]:
    exact, pool, keep_query, fold = options.exact, options.pool, options.keep_inputs, options.fold
    k = check_top(options.k, o.model.shape.vocab_size)
    allowed = allowed_rows(o, restriction, exact, pool)
    answers = batch.each(
        blocks,
        lambda text: aimed_of(o, text, exact, pool),
        lambda qs: neighbor_items(o, qs, k, keep_query, allowed, fold),
    )

    def one(item: NeighborsItem, first: bool) -> NeighborsResult:
        said = allowed.notes if first else ()
        return NeighborsResult(
            o.name, k, (item,), allowed.info if first else None, fold, (*said, *fewer(item))
        )

    def fewer(item: NeighborsItem) -> tuple[str, ...]:
        return tuple(fewer_notes(k, [(item.word, len(item.neighbors))], fold))

    return batch.Answers(
        answers, lambda items: neighbors_whole(o, items, k, allowed, fold), one, allowed.notes, fewer
    )


def each_analogy_in(
    o: Opened,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    method: Method,
    restriction: candidates.Restriction | None,
) -> batch.Answers[AnalogyResult]:
    exact, pool, keep_inputs = options.exact, options.pool, options.keep_inputs
    k = check_top(options.k, o.model.shape.vocab_size)
    allowed = allowed_rows(o, restriction, exact, pool)

    def question(text: str) -> tuple[Aimed, Aimed, Aimed]:
        words = text.split()
        if len(words) != 3:
            raise UsageError(f"{quote(text, 80)} is not three words A B C, as in: king man woman")
        return question_of(o, (words[0], words[1], words[2]), exact, pool)

    answers = batch.each(blocks, question, lambda qs: analogies(o, qs, k, keep_inputs, method, allowed))
    return batch.Answers(answers, lambda items: AnalogyBatch(o.name, items), lambda item, _: item)


def each_vector(
    model: str,
    blocks: Iterable[list[batch.Line]],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> batch.Answers[VectorItem]:
    """`vector -`: what can be checked before the model is opened is, then the handle answers the lines."""
    return each_vector_in(open_checked(model, None, exact, None, reporter, revision), blocks, exact, pool)


def each_similarity(
    model: str,
    blocks: Iterable[list[batch.Line]],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> tuple[SimilarityResult | None, list[batch.FailedLine]]:
    """`similarity -`: one matrix of the lines' words, and the lines that failed."""
    return each_similarity_in(open_checked(model, None, exact, None, reporter, revision), blocks, exact, pool)


def each_neighbors(
    model: str,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> batch.Answers[NeighborsItem]:
    """`neighbors -`: -k and the candidates checked (an --among file read once) before the model is opened."""
    chosen = check_candidates(model, options)
    opened = open_checked(model, None, options.exact, options.k, reporter, revision)
    return each_neighbors_in(opened, blocks, options, chosen)


def each_analogy(
    model: str,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    method: Method = Method.add,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> batch.Answers[AnalogyResult]:
    """`analogy -`: as each_neighbors."""
    chosen = check_candidates(model, options)
    opened = open_checked(model, None, options.exact, options.k, reporter, revision)
    return each_analogy_in(opened, blocks, options, method, chosen)
