"""analogy over an opened model: A - B + C ranked against every token; each_analogy: the same answering a
stream of questions, in blocks of a matrix pass."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpt2emb import candidates, ops
from gpt2emb.choices import Method, Pool
from gpt2emb.core.open import Opened, RankOptions, check_candidates, check_top, open_checked
from gpt2emb.core.words import Aimed, aimed_of, allowed_rows, fewer_notes, rankings_of
from gpt2emb.errors import UsageError
from gpt2emb.report import Reporter
from gpt2emb.results.analogy import AnalogyBatch, AnalogyInput, AnalogyResult, Ranked
from gpt2emb.tokens import quote

if TYPE_CHECKING:
    from gpt2emb import batch


def question_of(
    o: Opened, words: tuple[str, str, str], exact: bool, pool: Pool | str
) -> tuple[Aimed, Aimed, Aimed]:
    a, b, c = (aimed_of(o, w, exact, pool) for w in words)
    return a, b, c


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


def analogy(
    model: str,
    a: str,
    b: str,
    c: str,
    options: RankOptions,
    method: Method = Method.add,
    reporter: Reporter | None = None,
    revision: str | None = None,
    figure: str | None = None,
) -> AnalogyResult:
    chosen = check_candidates(model, options)  # checked before opening
    opened = open_checked(model, [a, b, c], options.exact, options.k, reporter, revision)
    result = analogy_in(opened, (a, b, c), options, method, chosen)
    if figure is not None:  # checked at the edge (plot.check_figure)
        from gpt2emb import plot

        result = plot.draw("analogy", result, figure, opened, options.pool)
    return result


def each_analogy_in(
    o: Opened,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    method: Method,
    restriction: candidates.Restriction | None,
) -> batch.Answers[AnalogyResult]:
    from gpt2emb import batch  # a stream's only (`-`, the handle's each_*): a warm run does not import it

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
