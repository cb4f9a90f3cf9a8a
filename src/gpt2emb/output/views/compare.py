"""The view of several models' answers side by side: a column per model, and what each pair shares."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.layout import Matrix
from gpt2emb.output.views import view
from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.compare import SideBySideResult
from gpt2emb.results.neighbors import NeighborsResult
from gpt2emb.tokens import quote as tok


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
        parts.append(Matrix(title, ["rank>"], ranks, result.models, cells, where="--json has every answer"))
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
