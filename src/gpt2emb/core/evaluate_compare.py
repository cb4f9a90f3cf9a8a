"""analogy --eval and similarity --eval with several models (-m A -m B): each scored under the same options on
the questions (or pairs) that every model scored can answer, saying how many that is."""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import TypeVar

from gpt2emb import candidates, limits
from gpt2emb.choices import Method, Rule
from gpt2emb.core import evaluate, evaluate_files
from gpt2emb.core.open import Opened, known_facts, open_ref
from gpt2emb.errors import UsageError
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.compare import Lack, Side
from gpt2emb.results.evaluate import AnalogyEvalResult, EvalSideBySide, PairsEvalResult

Q = TypeVar("Q", bound=Hashable)  # a question: (section, place) of an analogy, a pair's place


def _sides(opened: list[Opened], file: str, left_out: dict[int, str]) -> tuple[Side, ...]:
    return tuple(
        Side(o.name, o.model.static, (Lack(file, left_out[at]),) if at in left_out else ())
        for at, o in enumerate(opened)
    )


def _common(file: str, opened: list[Opened], known: list[set[Q]], left_out: dict[int, str]) -> set[Q]:
    """What every model not left out can answer; refused where nothing is, each model's count said."""
    scored = [k for at, k in enumerate(known) if at not in left_out]
    if not scored:  # no model answers anything: as one model refuses it
        raise UsageError(left_out[0])
    common = set.intersection(*scored)
    if not common:
        counts = ", ".join(f"{o.name} {len(k):,}" for o, k in zip(opened, known, strict=True))
        raise UsageError(
            f"no question of {file} can be answered by every model ({counts} on its own): compare models "
            "whose vocabularies share the file's words, or evaluate each alone"
        )
    return common


def analogy_eval_side_by_side(
    models: Sequence[ModelRef],
    file: str,
    method: Method = Method.add,
    rule: Rule = Rule.space,
    ignore_case: bool = False,
    errors: bool = False,
    reporter: Reporter | None = None,
    restrict: int | None = None,
) -> EvalSideBySide:
    """`analogy --eval FILE -m A -m B`: each model's accuracy on the questions that all of them answer (a
    model that answers none is left out, and says so)."""
    for m in models:
        if restrict is not None:
            candidates.check_restrict(restrict, known_facts(m)[1])
    sections = evaluate_files.read_analogies(limits.user_path(file))
    opened = [open_ref(m, reporter) for m in models]
    evaluate.refuse_rule(opened, rule)
    known = []
    for o in opened:
        per_section = evaluate.analogies_known(o, sections, rule, ignore_case, restrict)
        known.append({(s, i) for s, found in enumerate(per_section) for i in found})
    left_out = {
        at: f"no question of {file} has its four words each {evaluate.how_read(evaluate.rule_of(o, rule))}"
        for at, (o, k) in enumerate(zip(opened, known, strict=True))
        if not k
    }
    common = _common(file, opened, known, left_out)
    asked = [{i for s, i in common if s == at} for at in range(len(sections))]
    results: list[AnalogyEvalResult | None] = []
    for at, o in enumerate(opened):
        started = time.perf_counter()
        results.append(
            None
            if at in left_out
            else evaluate.analogy_eval_in(
                o, file, sections, method, rule, ignore_case, errors, restrict, started, asked
            )
        )
    total = sum(len(s.questions) for s in sections)
    answerable = tuple(len(k) for k in known)
    names = tuple(o.name for o in opened)
    return EvalSideBySide(
        names, file, total, len(common), answerable, tuple(results), _sides(opened, file, left_out)
    )


def similarity_eval_side_by_side(
    models: Sequence[ModelRef],
    file: str,
    rule: Rule = Rule.space,
    ignore_case: bool = False,
    reporter: Reporter | None = None,
) -> EvalSideBySide:
    """`similarity --eval FILE -m A -m B`: each model's correlations on the pairs that all of them answer
    (a model that answers fewer than two is left out, and says so)."""
    read = evaluate_files.read_pairs(limits.user_path(file))
    opened = [open_ref(m, reporter) for m in models]
    evaluate.refuse_rule(opened, rule)
    known = [set(evaluate.pairs_known(o, read, rule, ignore_case)) for o in opened]
    left_out = {
        at: evaluate.too_few_pairs(file, o, rule, ignore_case, len(k))
        for at, (o, k) in enumerate(zip(opened, known, strict=True))
        if len(k) < 2
    }
    common = _common(file, opened, known, left_out)
    if len(common) < 2:
        counts = ", ".join(f"{o.name} {len(k):,}" for o, k in zip(opened, known, strict=True))
        raise UsageError(
            f"fewer than two pairs of {file} can be answered by every model ({len(common)}; {counts} on its "
            "own): a correlation needs two; evaluate each model alone"
        )
    results: list[PairsEvalResult | None] = [
        None if at in left_out else evaluate.similarity_eval_in(o, file, read, rule, ignore_case, common)
        for at, o in enumerate(opened)
    ]
    answerable = tuple(len(k) for k in known)
    names = tuple(o.name for o in opened)
    return EvalSideBySide(
        names, file, len(read.pairs), len(common), answerable, tuple(results), _sides(opened, file, left_out)
    )
