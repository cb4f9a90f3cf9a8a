"""Several models' answers to one question side by side (neighbors and analogy given -m more than once)."""

from __future__ import annotations

import itertools

from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.compare import Overlap, SideBySideResult
from gpt2emb.results.neighbors import NeighborsResult


def side_by_side(results: list[NeighborsResult] | list[AnalogyResult]) -> SideBySideResult:
    """Several models' answers to one question, and the overlap of each pair's top-k lists (by token)."""
    lists: list[list[tuple[str, list[str]]]] = []  # per model: (query, tokens) for each query
    for r in results:
        if isinstance(r, NeighborsResult):
            lists.append([(item.word, [n.token for n in item.neighbors]) for item in r.items])
        else:
            lists.append([(r.expression, [x.token for x in r.results])])
    overlap = []
    for i, j in itertools.combinations(range(len(results)), 2):
        for (query, mine), (_, theirs) in zip(lists[i], lists[j], strict=True):
            other = set(theirs)
            shared = tuple(t for t in mine if t in other)
            overlap.append(
                Overlap(query, (results[i].model, results[j].model), len(shared), len(mine), shared)
            )
    return SideBySideResult(tuple(r.model for r in results), tuple(results), tuple(overlap))  # type: ignore[arg-type]
