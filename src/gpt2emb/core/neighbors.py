"""neighbors over an opened model: each word's nearest tokens by cosine, or with --fold its nearest words;
each_neighbors: the same answering a stream of lines, in blocks of a matrix pass."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from gpt2emb import candidates, ops
from gpt2emb.core.open import Opened, RankOptions, check_candidates, open_checked, tokens_of
from gpt2emb.core.words import Aimed, aim_each, aimed_of, fewer_notes, rankings_of
from gpt2emb.limits import BLOCK
from gpt2emb.queries import Query
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.neighbors import Form, Neighbor, NeighborsItem, NeighborsResult
from gpt2emb.tokens import Vocab

if TYPE_CHECKING:
    from gpt2emb import batch


def neighbors_in(
    o: Opened,
    words: list[str],
    options: RankOptions,
    restriction: candidates.Restriction | None,
    lacks: dict[int, str] | None = None,
) -> NeighborsResult:
    """With lacks (models side by side), a word this model cannot answer is an item with no tokens and no
    neighbours, its note the refusal, also kept in lacks by the word's place."""
    allowed = candidates.allowed_rows(o.vocab, restriction, options.exact, options.pool)
    queries = aim_each(o, words, options.exact, options.pool, lacks)
    items = neighbor_items(o, queries, options, allowed)
    for at, why in sorted((lacks or {}).items()):
        items.insert(at, NeighborsItem(words[at], (), options.pool.value, why, ()))
    return neighbors_whole(o, tuple(items), options.k, allowed, options.fold)


def neighbors_whole(
    o: Opened, items: tuple[NeighborsItem, ...], k: int, allowed: candidates.Allowed, fold: bool
) -> NeighborsResult:
    answered = [(item.word, len(item.neighbors)) for item in items if item.tokens]  # not a word it lacks
    notes = (*allowed.notes, *fewer_notes(k, answered, fold, o.model.static))
    return NeighborsResult(o.name, k, items, allowed.info, fold, notes, static=o.model.static)


def neighbor_items(
    o: Opened, queries: list[Aimed], options: RankOptions, allowed: candidates.Allowed
) -> list[NeighborsItem]:
    vocab, items, m = o.vocab, [], o.model
    k, keep_query, fold = options.k, options.keep_query, options.fold
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
    # imported here, for --fold alone: building its dataclass (forms.Folded) costs some 1 ms, which every
    # other warm neighbors would pay for nothing
    from gpt2emb import forms

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


def neighbors(
    model: ModelRef,
    words: list[str],
    options: RankOptions,
    reporter: Reporter | None = None,
    figure: str | None = None,
) -> NeighborsResult:
    """neighbors of a model resolved at the edge: -k and the candidates checked before it is opened."""
    chosen = check_candidates(model, options)
    opened = open_checked(model, words, options.exact, options.k, reporter)
    result = neighbors_in(opened, words, options, chosen)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("neighbors", result, figure, opened)
    return result


def each_neighbors_in(
    o: Opened,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    restriction: candidates.Restriction | None,
) -> batch.Answers[NeighborsItem]:
    from gpt2emb import batch  # a stream's only (`-`, the handle's each_*): a warm run does not import it

    k, fold = options.k, options.fold
    allowed = candidates.allowed_rows(o.vocab, restriction, options.exact, options.pool)
    answers = batch.each(
        blocks,
        lambda text: aimed_of(o, text, options.exact, options.pool),
        lambda qs: neighbor_items(o, qs, options, allowed),
    )

    def one(item: NeighborsItem, first: bool) -> NeighborsResult:
        said = allowed.notes if first else ()
        return NeighborsResult(
            o.name,
            k,
            (item,),
            allowed.info if first else None,
            fold,
            (*said, *fewer(item)),
            static=o.model.static,
        )

    def fewer(item: NeighborsItem) -> tuple[str, ...]:
        return tuple(fewer_notes(k, [(item.word, len(item.neighbors))], fold, o.model.static))

    return batch.Answers(
        answers, lambda items: neighbors_whole(o, items, k, allowed, fold), one, allowed.notes, fewer
    )


def each_neighbors(
    model: ModelRef,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    reporter: Reporter | None = None,
) -> batch.Answers[NeighborsItem]:
    """`neighbors -`: -k and the candidates checked (an --among file read once) before the model is opened."""
    chosen = check_candidates(model, options)
    opened = open_checked(model, None, options.exact, options.k, reporter)
    return each_neighbors_in(opened, blocks, options, chosen)
