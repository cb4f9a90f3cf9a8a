"""The views of several models' answers side by side: a column per model, what each pair shares, and why a
model's column is empty where it lacks a word."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.layout import Matrix, cosine_cell, note_lines
from gpt2emb.output.views import view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.compare import MATCH, Side, SideBySideResult, SimilaritySideBySide, word_of
from gpt2emb.results.neighbors import NeighborsResult


@view.register
def _(result: SideBySideResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for qi, query in enumerate(_queries(result)):
        answers = [_answers(r, qi) for r in result.results]
        found = [{word_of(t) for t, _ in a} for a in answers if a is not None]
        everywhere = set.intersection(*found) if len(found) > 1 else set()  # one list agrees with nothing
        depth = range(max(len(a or ()) for a in answers))
        cells = [
            [_shared(a[rank], everywhere) if a and rank < len(a) else "" for a in answers] for rank in depth
        ]
        title = f"{query}: side by side (* in every list, a word matched by {MATCH})"
        ranks = [[str(rank + 1)] for rank in depth]
        parts.append(Matrix(title, ["rank>"], ranks, result.models, cells, where="--json has every answer"))
        parts += [
            Text(f"{o.models[0]} and {o.models[1]} share {o.shared:,} of their top {o.k:,}\n")
            for o in result.overlap
            if o.query == query
        ]
    return Group(*note_lines(_notes(result)), *parts, *note_lines(_lacks(result.sides)))


def _queries(result: SideBySideResult) -> list[str]:
    first = next(r for r in result.results if r is not None)
    return [i.word for i in first.items] if isinstance(first, NeighborsResult) else [first.expression]


def _answers(r: NeighborsResult | AnalogyResult | None, query: int) -> list[tuple[str, float]] | None:
    """A model's answers to a query, or None where it lacks a word of it."""
    if r is None or (isinstance(r, NeighborsResult) and not r.items[query].tokens):
        return None
    found = r.items[query].neighbors if isinstance(r, NeighborsResult) else r.results
    return [(x.token, x.score) for x in found]


def _shared(answer: tuple[str, float], everywhere: set[str]) -> str:
    return f"{tok(answer[0])}{' *' if word_of(answer[0]) in everywhere else ''} {answer[1]:.3f}"


def _lacks(sides: tuple[Side, ...]) -> list[str]:
    """Why a model's column is empty: each word it lacks, with its own reason."""
    return [
        f"{s.model} lacks {tok(lack.query)}, its column left empty: {lack.reason}"
        for s in sides
        for lack in s.lacks
    ]


def _notes(result: SideBySideResult) -> list[str]:
    """Each model's own notes (a word split into tokens, candidates that ran out), naming the model."""
    said: list[str] = []
    for r in result.results:
        if isinstance(r, NeighborsResult):
            said += [f"{r.model}: {i.note}" for i in r.items if i.tokens and i.note]
        if r is not None:
            said += [f"{r.model}: {n}" for n in r.notes]
    return said


@view.register
def _(result: SimilaritySideBySide, dims: int | None) -> RenderableType:
    rows = [[tok(p.a), tok(p.b)] for p in result.pairs]
    cells = [["" if c is None else cosine_cell(c) for c in p.cosines] for p in result.pairs]
    columns = [f"{m}>" for m in result.models]
    matrix = Matrix("cosine similarity side by side", ["word", "word"], rows, columns, cells)
    notes = [i.note for r in result.results if r is not None for i in r.items if i.note]
    return Group(*note_lines(notes), matrix, *note_lines(_lacks(result.sides)))
