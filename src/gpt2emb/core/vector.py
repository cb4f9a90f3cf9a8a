"""vector over an opened model: each word's raw row of wte and its statistics; each_vector: the same
answering a stream of lines (`-`, the handle's each_vector), a line that fails as a batch.FailedLine."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from gpt2emb import measures, ops
from gpt2emb.choices import Pool
from gpt2emb.core.open import Opened, open_checked, tokens_of
from gpt2emb.core.words import query_of
from gpt2emb.queries import Query
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.vector import VectorItem, VectorResult

if TYPE_CHECKING:
    from gpt2emb import batch


def vector_in(o: Opened, words: Sequence[str], exact: bool = False, pool: Pool = Pool.mean) -> VectorResult:
    """The raw row of wte for each word, with its norm, mean, std, min and max."""
    return VectorResult(o.name, tuple(vector_items(o, [query_of(o, w, exact, pool) for w in words])))


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


def vector(
    model: ModelRef,
    words: list[str],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    figure: str | None = None,
) -> VectorResult:
    result = vector_in(open_checked(model, words, exact, None, reporter), words, exact, pool)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("vector", result, figure)
    return result


def each_vector_in(
    o: Opened, blocks: Iterable[list[batch.Line]], exact: bool, pool: Pool
) -> batch.Answers[VectorItem]:
    from gpt2emb import batch  # a stream's only (`-`, the handle's each_*): a warm run does not import it

    answers = batch.each(blocks, lambda text: query_of(o, text, exact, pool), lambda qs: vector_items(o, qs))
    return batch.Answers(
        answers,
        lambda items: VectorResult(o.name, items),
        lambda item, _: VectorResult(o.name, (item,)),
    )


def each_vector(
    model: ModelRef,
    blocks: Iterable[list[batch.Line]],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
) -> batch.Answers[VectorItem]:
    """`vector -`: what can be checked before the model is opened is, then the handle answers the lines."""
    return each_vector_in(open_checked(model, None, exact, None, reporter), blocks, exact, pool)
