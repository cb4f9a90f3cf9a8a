"""The views of evaluate: analogy questions and similarity pairs."""

from __future__ import annotations

from rich.console import Group, RenderableType

from gpt2emb.output.layout import (
    Matrix,
    note_lines,
    pct,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.results.evaluate import KEYS, AnalogyEvalResult, EvalSideBySide, PairsEvalResult


@view.register
def _(result: AnalogyEvalResult, dims: int | None) -> RenderableType:
    case = ", any case" if result.ignore_case else ""
    rows = [
        [s.section, f"{s.correct:,}", f"{s.correct + s.incorrect:,}", f"{s.skipped:,}", pct(s.accuracy)]
        for s in (*result.sections, result.total)
    ]
    if result.restrict is not None:
        case += f", ids below {result.restrict:,}"
    title = (
        f"{result.file} on {result.model} ({result.method}, {_read(result.rule)}{case}): "
        f"{pct(result.total.accuracy)} of answered questions, coverage {pct(result.coverage)}, "
        f"{result.seconds:.2f} s"
    )
    parts: list[RenderableType] = [titled_table(title, "section correct> answered> skipped> accuracy>", rows)]
    if result.errors:
        shown = [
            [f.section, " ".join(f.question), f.expected, f.predicted or "-"] for f in result.errors[:20]
        ]
        more = f" (first 20 of {len(result.errors):,}; --json lists all)" if len(result.errors) > 20 else ""
        parts.append(titled_table(f"answered wrong{more}", "section question expected predicted", shown))
    return Group(*parts)


@view.register
def _(result: PairsEvalResult, dims: int | None) -> RenderableType:
    case = ", any case" if result.ignore_case else ""
    rows = [
        ["Spearman", "undefined" if result.spearman is None else f"{result.spearman:.4f}"],
        ["Pearson", "undefined" if result.pearson is None else f"{result.pearson:.4f}"],
        ["pairs used", f"{result.used:,} of {result.pairs:,}"],
        [
            "skipped (not a key)" if result.rule == KEYS else "skipped (not one token)",
            f"{result.skipped:,} ({result.oov_ratio:.1f}%)",
        ],
    ]
    if result.unreadable:
        rows.append(["lines skipped (unreadable)", f"{result.unreadable:,}"])
    title = f"{result.file} on {result.model} ({_read(result.rule)}{case})"
    return Group(titled_table(title, "measure value>", rows), *note_lines(list(result.notes)))


@view.register
def _(result: EvalSideBySide, dims: int | None) -> RenderableType:
    first = next(r for r in result.results if r is not None)
    what = "questions" if isinstance(first, AnalogyEvalResult) else "pairs"
    case = ", any case" if first.ignore_case else ""
    if isinstance(first, AnalogyEvalResult):
        how = f"{first.method}, "
        case += "" if first.restrict is None else f", ids below {first.restrict:,}"
        labels = [[s.section] for s in (*first.sections, first.total)]
        cells = [[_accuracy(r, at) for r in result.results] for at in range(len(first.sections) + 1)]
        label = "section"
    else:
        how = ""
        labels = [["Spearman"], ["Pearson"]]
        cells = [[_correlation(r, name) for r in result.results] for name in ("spearman", "pearson")]
        label = "measure"
    read = _read(*(r.rule for r in result.results if r is not None))
    title = (
        f"{result.file} side by side ({how}{read}{case}): each model on the "
        f"{result.common:,} of {result.asked:,} {what} that every model answers"
    )
    matrix = Matrix(title, [label], labels, [f"{m}>" for m in result.models], cells)
    alone = "; ".join(f"{m} {n:,}" for m, n in zip(result.models, result.answerable, strict=True))
    said = [f"{what} each model answers on its own: {alone}"]
    said += [f"{s.model} left out: {lack.reason}" for s in result.sides for lack in s.lacks]
    errors = [r for r in result.results if isinstance(r, AnalogyEvalResult) and r.errors]
    if errors:
        said.append("--errors: --json lists each model's questions answered wrong")
    return Group(matrix, *note_lines(said))


def _read(*rules: str) -> str:
    """How the words were read, as a title says it: "words as 'space' tokens", "words as keys" (a static
    table's), or both where models side by side differ."""
    tokens = [f"words as {r!r} tokens" for r in dict.fromkeys(rules) if r != KEYS]
    if KEYS not in rules:
        return tokens[0]
    return f"{tokens[0]}, a static table's as keys" if tokens else "words as keys"


def _accuracy(r: AnalogyEvalResult | PairsEvalResult | None, at: int) -> str:
    if not isinstance(r, AnalogyEvalResult):
        return ""
    s = (*r.sections, r.total)[at]
    return f"{pct(s.accuracy)} ({s.correct:,}/{s.correct + s.incorrect:,})"


def _correlation(r: AnalogyEvalResult | PairsEvalResult | None, name: str) -> str:
    if not isinstance(r, PairsEvalResult):
        return ""
    value = getattr(r, name)
    return "undefined" if value is None else f"{value:.4f}"
