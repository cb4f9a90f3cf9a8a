"""The views of vector, neighbors, analogy and similarity, and of several models' answers side by side."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len, chop_cells
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.text import Text

from gpt2emb.errors import option, spelt
from gpt2emb.output.layout import (
    _cosine,
    _Matrix,
    _notes,
    _num,
    _signed,
    _table,
    split,
)
from gpt2emb.output.views import view
from gpt2emb.results.words import (
    AnalogyBatch,
    AnalogyResult,
    Candidates,
    NeighborsResult,
    SideBySideResult,
    SimilarityResult,
    VectorResult,
)
from gpt2emb.tokens import quote as tok


@view.register
def _(result: VectorResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for item in result.items:
        stats = [_num(getattr(item, f)) for f in ("norm", "mean", "std", "min", "max")]
        shown = item.vector if dims is None else item.vector[:dims]
        more = len(item.vector) - len(shown)
        numbers = f"[{', '.join(map(_signed, shown))}]" + (
            f"  ... ({more:,} more{spelt('; --full', ' in .vector')})" if more else ""
        )
        parts += _notes([item.note])
        plain = item.word.strip() == item.word and item.word.isprintable()  # else quoted: --exact " "
        title = f"{item.word if plain else tok(item.word)} in {result.model}: {split(item.tokens)}"
        parts += [
            _table(title, "norm> mean> std> min> max> dims>", [[*stats, f"{len(item.vector):,}"]]),
            Text(numbers),
        ]
        parts.append(Text(""))
    return Group(*parts)


def _candidates(c: Candidates | None) -> list[RenderableType]:
    """The line that says which tokens were ranked, when not all."""
    if c is None:
        return []
    chosen = [option("among", c.among) if c.among is not None else ""]
    chosen += [option("restrict", c.restrict) if c.restrict is not None else ""]
    chosen += [option("whole_words", True) if c.whole_words else ""]
    return [
        Text(
            f"candidates: {c.count:,} token{'s' if c.count != 1 else ''} ({', '.join(filter(None, chosen))})"
        )
    ]


class _Tokens:
    """Quoted tokens side by side, wrapped between tokens and never inside one: rich would break a line at a
    token's own leading space, which is part of the token."""

    def __init__(self, tokens: list[str]) -> None:
        self.shown = [tok(t) for t in tokens]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        # the narrowest: the widest token on a line of its own; the widest: all on one line
        widths = [cell_len(t) for t in self.shown]
        return Measurement(max(widths, default=0), sum(widths) + max(0, len(widths) - 1))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        lines: list[str] = []
        for t in self.shown:
            if lines and cell_len(lines[-1]) + 1 + cell_len(t) <= width:
                lines[-1] += " " + t
            else:  # a new line; a token wider than the column is cut at its width, not at its space
                lines += chop_cells(t, width)
        for line in lines or [""]:
            yield Text(line, no_wrap=True)


@view.register
def _(result: NeighborsResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = [*_candidates(result.candidates), *_notes(list(result.notes))]
    for item in result.items:
        parts += _notes([item.note])
        title = f"nearest to {split(item.tokens)} in {result.model}"
        if not result.fold:
            rows = [[str(n.rank), tok(n.token), str(n.id), _num(n.score)] for n in item.neighbors]
            parts.append(_table(title, "rank> token id> cosine>", rows))
            continue
        folded: list[list[Any]] = [
            [
                str(n.rank),
                tok(n.token),
                str(n.id),
                _num(n.score),
                _Tokens([f.token for f in (n.forms or ())[1:]]),
            ]
            for n in item.neighbors
        ]
        n = item.form_share
        are = "is a form" if n == 1 else "are forms"
        share = f"{n:,} of the {result.k:,} nearest tokens {are} of {item.word}" if n is not None else ""
        columns = "rank> token id> cosine> other_forms"
        parts.append(_table(f"{title}, one row per word", columns, folded, share))
    return Group(*parts)


@view.register
def _(result: AnalogyBatch, dims: int | None) -> RenderableType:
    return Group(*(view(item, dims) for item in result.items))


@view.register
def _(result: AnalogyResult, dims: int | None) -> RenderableType:
    kept = "inputs kept, marked *" if result.keep_inputs else "inputs left out"
    score = "score" if result.method == "3cosmul" else "cosine"
    rows = [
        [str(r.rank), tok(r.token) + (" *" if r.input else ""), str(r.id), _num(r.score)]
        for r in result.results
    ]
    inputs = [[i.word, tok(i.token), str(i.id), str(i.rank), _num(i.score)] for i in result.inputs]
    among = "all tokens" if result.candidates is None else "the candidates"
    return Group(
        *_candidates(result.candidates),
        *_notes(list(result.notes)),
        _table(
            f"{result.expression} in {result.model} ({result.method}, {kept})",
            f"rank> token id> {score}>",
            rows,
        ),
        _table(f"where the inputs rank (among {among})", f"word token id> rank> {score}>", inputs),
    )


@view.register
def _(result: SimilarityResult, dims: int | None) -> RenderableType:
    norms = [[split(i.tokens), _num(n)] for i, n in zip(result.items, result.norms, strict=True)]
    matrix = _Matrix(
        f"cosine similarity in {result.model}",
        ["token"],
        [[split(i.tokens)] for i in result.items],
        [tok("".join(t.token for t in i.tokens)) + ">" for i in result.items],  # the text its tokens spell
        result.matrix,
        _cosine,
        instead=_table(f"norms of the words' vectors in {result.model}", "token norm>", norms),
    )
    return Group(*_notes([i.note for i in result.items]), matrix)


@view.register
def _(result: SideBySideResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for qi, query in enumerate(_queries(result.results[0])):
        answers = [_answers(r, qi) for r in result.results]
        everywhere = set.intersection(*({t for t, _ in a} for a in answers))
        depth = range(max(len(a) for a in answers))
        cells = [[_shared(a[rank], everywhere) if rank < len(a) else "" for a in answers] for rank in depth]
        title = f"{query}: side by side (* in every list, matched by the text each token stands for)"
        ranks = [[str(rank + 1)] for rank in depth]
        parts.append(_Matrix(title, ["rank>"], ranks, result.models, cells, where="--json has every answer"))
        parts += [
            Text(f"{o.models[0]} and {o.models[1]} share {o.shared:,} of their top {o.k:,}\n")
            for o in result.overlap
            if o.query == query
        ]
    return Group(*parts)


def _queries(r: NeighborsResult | AnalogyResult) -> list[str]:
    return [i.word for i in r.items] if isinstance(r, NeighborsResult) else [r.expression]


def _answers(r: NeighborsResult | AnalogyResult, query: int) -> list[tuple[str, float]]:
    found = r.items[query].neighbors if isinstance(r, NeighborsResult) else r.results
    return [(x.token, x.score) for x in found]


def _shared(answer: tuple[str, float], everywhere: set[str]) -> str:
    return f"{tok(answer[0])}{' *' if answer[0] in everywhere else ''} {answer[1]:.3f}"
