"""similarity over an opened model: the cosine of every pair of words; each_similarity: the words of a
stream of lines, and the lines that failed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from gpt2emb import measures
from gpt2emb.choices import Pool
from gpt2emb.core.open import Opened, floats, open_checked, tokens_of
from gpt2emb.core.words import Aimed, aimed_of
from gpt2emb.errors import UsageError, spelt
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.similarity import SimilarityResult, Word

if TYPE_CHECKING:
    from gpt2emb import batch

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


def similarity_in(
    o: Opened, words: Sequence[str], exact: bool = False, pool: Pool = Pool.mean
) -> SimilarityResult:
    """The cosine of every pair of words, and each word's norm."""
    check_matrix(len(words))
    return matrix_of(o, [aimed_of(o, w, exact, pool) for w in words])


def matrix_of(o: Opened, queries: list[Aimed]) -> SimilarityResult:
    check_matrix(len(queries))
    matrix, norms = measures.cosine_matrix(np.stack([v for _, v in queries]))
    items = tuple(Word(q.word, tokens_of(o.vocab, q), q.pool.value, q.note) for q, _ in queries)
    o.model.check_rows(t.id for item in items for t in item.tokens)
    return SimilarityResult(
        o.name, items, floats(norms), tuple(floats(r) for r in matrix), static=o.model.static
    )


def similarity(
    model: ModelRef,
    words: list[str],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    figure: str | None = None,
) -> SimilarityResult:
    check_matrix(len(words))
    result = similarity_in(open_checked(model, words, exact, None, reporter), words, exact, pool)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("similarity", result, figure)
    return result


def each_similarity_in(
    o: Opened, blocks: Iterable[list[batch.Line]], exact: bool, pool: Pool
) -> tuple[SimilarityResult | None, list[batch.FailedLine]]:
    from gpt2emb import batch  # a stream's only (`-`, the handle's each_*): a warm run does not import it

    aimed: list[Aimed] = []
    failed: list[batch.FailedLine] = []
    for answer in batch.each(blocks, lambda text: aimed_of(o, text, exact, pool), lambda aimed: aimed):
        if isinstance(answer, batch.FailedLine):
            failed.append(answer)
        else:
            aimed.append(answer)
        most = MAX_MATRIX
        if len(aimed) > most or len(failed) > most:  # at once: stdin may have no end
            raise UsageError(
                f"similarity compares at most {most:,} words (a {most:,}-square matrix), and "
                f"stdin holds more{' that fail' if len(failed) > most else ''}; for each word's "
                f"nearest tokens, use {spelt('neighbors -', 'each_neighbors')} instead"
            )
    return (matrix_of(o, aimed) if len(aimed) > 1 else None), failed


def each_similarity(
    model: ModelRef,
    blocks: Iterable[list[batch.Line]],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
) -> tuple[SimilarityResult | None, list[batch.FailedLine]]:
    """`similarity -`: one matrix of the lines' words, and the lines that failed."""
    return each_similarity_in(open_checked(model, None, exact, None, reporter), blocks, exact, pool)
