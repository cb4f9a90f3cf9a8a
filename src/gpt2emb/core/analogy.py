"""analogy over an opened model: a sum of signed words (A - B + C, or as many terms as wanted) ranked against
every token, and the reading of one as written; each_analogy: the same answering a stream of questions, in
blocks of a matrix pass."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn

from gpt2emb import candidates, ops, sums
from gpt2emb.choices import Method, Pool
from gpt2emb.core.open import Opened, RankOptions, check_candidates, open_checked
from gpt2emb.core.words import Aimed, aimed_of, fewer_notes, rankings_of
from gpt2emb.errors import UsageError
from gpt2emb.quoting import quote
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.analogy import AnalogyBatch, AnalogyInput, AnalogyResult, Ranked, Term

if TYPE_CHECKING:
    from gpt2emb import batch


SIGNS = {"+": 1, "-": -1}
# the chapter's typeset minus (U+2212) and an en dash, as a copied formula holds them, are the ASCII sign
DASHES = str.maketrans({"\u2212": "-", "\u2013": "-"})
# how a sum is written, as every refusal of one says
HOW = (
    "each term after the first is + WORD or - WORD, the sign spaced from its word, as in: king - man + woman"
)

Question = tuple[tuple[Term, ...], tuple[Aimed, ...]]  # a sum's terms, and each term's query and vector


def abc(a: str, b: str, c: str) -> tuple[Term, ...]:
    """A B C, "A is to B as C is to ?": the sum A - B + C."""
    return Term("+", a), Term("-", b), Term("+", c)


def terms_of(words: Sequence[str], not_three: str) -> tuple[Term, ...]:
    """analogy's words as the terms of a sum. Three words with no sign among them are A B C, each as given;
    words with a sign among them, as arguments of their own or inside one quoted argument, are a sum as the
    chapter writes it (`king - man + woman - boy + girl`), read by `sum_of`. not_three: the refusal of words
    that are neither."""
    items = [item for w in words for item in _items(w)]
    if not any(item in SIGNS for item in items):
        if len(words) != 3:
            raise UsageError(not_three)
        return abc(*words)
    for n, w in enumerate(words, 1):
        if not w.strip():
            raise UsageError(f"argument {n} of {quote(' '.join(words), 80)} is empty: an empty term; {HOW}")
    return sum_of(items)


def _items(argument: str) -> list[str]:
    """One argument's items of a sum: its words and signs where it holds a sign ("king - man + woman"),
    else the argument whole, one term however many words it holds ("the cat", as A B C takes it)."""
    parts = [p.translate(DASHES) if p in ("\u2212", "\u2013") else p for p in argument.split()]
    return parts if any(p in SIGNS for p in parts) or not parts else [argument]


def sum_of(items: Sequence[str]) -> tuple[Term, ...]:
    """A sum written as items (words and signs, each apart): a word, then + WORD or - WORD any number of
    times. What cannot be read is refused naming its place: the item, counted from 1."""
    written = " ".join(items)

    def refuse(at: int, why: str) -> NoReturn:
        raise UsageError(
            f"cannot read the sum {quote(written, 80)} at its item {at + 1}, {quote(items[at])}: {why}; {HOW}"
        )

    if items[0] in SIGNS:
        refuse(
            0, "a sign before the first term, which takes none (- alone in place of the words reads stdin)"
        )
    terms = [Term("+", items[0])]
    for at in range(1, len(items), 2):
        sign = items[at]
        if sign not in SIGNS:
            joined = " (a sign joined to its word is not read as one)" if sign[0] in SIGNS else ""
            refuse(at, f"a word after the word {quote(items[at - 1])}, with no sign between{joined}")
        if at + 1 == len(items):
            refuse(at, "a sign with no word after it")
        if items[at + 1] in SIGNS:
            refuse(at + 1, f"a second sign in a row, after {quote(sign)}, with no word between")
        terms.append(Term(sign, items[at + 1]))
    return tuple(terms)


def handed(signed: Sequence[tuple[str, str]]) -> tuple[Term, ...]:
    """The handle's signed words as the terms of a sum, each a word the command line reads back as one term
    (so the expression shown for them reads back as the same sum): a word that is a sign, or holds one
    between spaces, is refused."""
    for _, word in signed:
        if any(item in SIGNS for item in _items(word)):
            what = "is a sign" if _items(word) == [word.strip().translate(DASHES)] else "holds a sign"
            raise UsageError(
                f"the word {quote(word, 80)} {what}, and a sum's words hold none: give each term as a word "
                "of its own in positive or negative (positive=['king', 'woman'], negative=['man']), and a "
                "token that is a sign by its id (id:N, which `gpt2emb input` shows)"
            )
    return tuple(Term(sign, word) for sign, word in signed)


def written(terms: Sequence[Term]) -> str:
    """The sum as the chapter writes it: king - man + woman."""
    return " ".join([terms[0].word, *(f"{t.sign} {t.word}" for t in terms[1:])])


def question_of(o: Opened, terms: Sequence[Term], exact: bool, pool: Pool, method: Method) -> Question:
    aimed = tuple(aimed_of(o, t.word, exact, pool) for t in terms)
    if sums.cancels([(SIGNS[t.sign], v) for t, (_, v) in zip(terms, aimed, strict=True)], method):
        sum_of = "raw rows" if method is Method.add else "unit vectors"
        raise UsageError(
            f"the terms of {quote(written(terms), 80)} cancel: the sum of their {sum_of}, which "
            f"{method.value} ranks by, is the zero vector, to which every token is as near as any other; "
            "leave out the terms that cancel"
        )
    return tuple(terms), aimed


def analogy_in(
    o: Opened,
    terms: Sequence[Term],
    options: RankOptions,
    method: Method,
    restriction: candidates.Restriction | None,
) -> AnalogyResult:
    k, exact, pool, keep_inputs = options.k, options.exact, options.pool, options.keep_inputs
    allowed = candidates.allowed_rows(o.vocab, restriction, exact, pool)
    (result,) = analogies(o, [question_of(o, terms, exact, pool, method)], k, keep_inputs, method, allowed)
    return result


def analogies(
    o: Opened,
    questions: list[Question],
    k: int,
    keep_inputs: bool,
    method: Method,
    allowed: candidates.Allowed,
) -> list[AnalogyResult]:
    signed = [[(SIGNS[t.sign], v) for t, (_, v) in zip(*question, strict=True)] for question in questions]
    rankings = _rankings(o, signed, method)
    vocab, results, mask = o.vocab, [], allowed.mask
    shown = _shown if method is Method.cosmul else _as_is
    for (terms, aimed), ranking in zip(questions, rankings, strict=True):
        queries = [q for q, _ in aimed]
        input_ids = tuple(dict.fromkeys(i for q in queries for i in q.ids))
        best = ranking.top(k, () if keep_inputs else input_ids, mask)
        ranked = tuple(
            Ranked(r, i, vocab.token(i), *shown(s), input=i in input_ids) for r, (i, s) in enumerate(best, 1)
        )
        asked = [(q.word, i) for q in queries for i in q.ids]
        places = ranking.ranks([i for _, i in asked], mask)
        inputs = tuple(
            AnalogyInput(word, i, vocab.token(i), rank, *shown(s))
            for (word, i), (rank, s) in zip(asked, places, strict=True)
        )
        expression = written(terms)
        notes = (
            *dict.fromkeys(q.note for q in queries if q.note),
            *allowed.notes,
            *fewer_notes(k, [(quote(expression, 80), len(ranked))], False, o.model.static),
            *_below_range([*ranked, *inputs]),
        )
        results.append(
            AnalogyResult(
                o.name,
                expression,
                terms,
                method.value,
                keep_inputs,
                ranked,
                inputs,
                notes,
                allowed.info,
                static=o.model.static,
            )
        )
    o.model.check_rows(i for r in results for i in (*(x.id for x in r.inputs), *(x.id for x in r.results)))
    return results


def _rankings(o: Opened, signed: list[list[sums.Signed]], method: Method) -> Iterator[ops.Ranking]:
    """Each question's ranking: add and 3cosadd rank by one vector each, many questions per matrix pass;
    3cosmul by its terms in log space, a group of questions per pass (two bounds per row each)."""
    if method is not Method.cosmul:
        yield from rankings_of(o, [sums.analogy_vector(terms, method) for terms in signed])
        return
    for start in range(0, len(signed), _COSMUL_GROUP):
        yield from sums.cosmul_rankings(o.model.wte, signed[start : start + _COSMUL_GROUP])


_COSMUL_GROUP = 64  # 3cosmul's questions ranked per pass: 64 x 50257 x 16 bytes of bounds, 51 MB


def _as_is(score: float) -> tuple[float, float | None]:
    return score, None


def _shown(log_score: float) -> tuple[float, float | None]:
    """3cosmul's score as gensim gives it, the product, and its logarithm, by which it is ranked."""
    return math.exp(log_score) if not math.isnan(log_score) else log_score, log_score


def _below_range(scored: Sequence[Ranked | AnalogyInput]) -> list[str]:
    """A note where a product is below float64's range and shown as 0 though its logarithm is a number."""
    lost = sum(1 for x in scored if x.score == 0 and x.log_score is not None and math.isfinite(x.log_score))
    if not lost:
        return []
    return [
        f"{lost} 3cosmul score{'s are' if lost > 1 else ' is'} below float64's range (1e-308) and shown as "
        "0: log_score in --json keeps them apart, and the ranks are by it"
    ]


def analogy(
    model: ModelRef,
    terms: Sequence[Term],
    options: RankOptions,
    method: Method = Method.add,
    reporter: Reporter | None = None,
    figure: str | None = None,
) -> AnalogyResult:
    """The terms' sum (`terms_of`, `abc`) ranked against every token (or the candidates)."""
    chosen = check_candidates(model, options)  # checked before opening
    opened = open_checked(model, [t.word for t in terms], options.exact, options.k, reporter)
    result = analogy_in(opened, terms, options, method, chosen)
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

    k, exact, pool, keep_inputs = options.k, options.exact, options.pool, options.keep_inputs
    allowed = candidates.allowed_rows(o.vocab, restriction, exact, pool)

    def question(text: str) -> Question:
        refusal = (
            f"{quote(text, 80)} is not three words A B C, as in: king man woman (or a sum, as in: king - man "
            "+ woman)"
        )
        return question_of(o, terms_of(text.split(), refusal), exact, pool, method)

    answers = batch.each(blocks, question, lambda qs: analogies(o, qs, k, keep_inputs, method, allowed))
    return batch.Answers(answers, lambda items: AnalogyBatch(o.name, items), lambda item, _: item)


def each_analogy(
    model: ModelRef,
    blocks: Iterable[list[batch.Line]],
    options: RankOptions,
    method: Method = Method.add,
    reporter: Reporter | None = None,
) -> batch.Answers[AnalogyResult]:
    """`analogy -`: as each_neighbors."""
    chosen = check_candidates(model, options)
    opened = open_checked(model, None, options.exact, options.k, reporter)
    return each_analogy_in(opened, blocks, options, method, chosen)
