"""The views of evaluate: analogy questions and similarity pairs."""

from __future__ import annotations

from rich.console import Group, RenderableType

from gpt2emb.output.layout import (
    note_lines,
    pct,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.results.evaluate import AnalogyEvalResult, PairsEvalResult


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
        f"{result.file} on {result.model} ({result.method}, words as {result.rule!r} tokens{case}): "
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
        ["skipped (not one token)", f"{result.skipped:,} ({result.oov_ratio:.1f}%)"],
    ]
    if result.unreadable:
        rows.append(["lines skipped (unreadable)", f"{result.unreadable:,}"])
    title = f"{result.file} on {result.model} (words as {result.rule!r} tokens{case})"
    return Group(titled_table(title, "measure value>", rows), *note_lines(list(result.notes)))
