"""The shape of src/gpt2emb: no module over 500 lines, and no import circle (at module level or inside a
function: a lazy import is still a dependency)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from gen_architecture import graph, modules  # noqa: E402  (the imports, read as the picture reads them)

MAX_LINES = 500


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_module_is_over_500_lines(name: str) -> None:
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} is {lines} lines: past {MAX_LINES}, it holds more than one job"


def test_no_import_circle() -> None:
    imports = graph()
    assert imports["gpt2emb.handle"] >= {
        "gpt2emb.core.vector",
        "gpt2emb.core.open",
    }  # the graph is read at all
    assert imports["gpt2emb.cli.root"] >= {"gpt2emb.cli.sizes", "gpt2emb.cli.cache"}  # and its stems
    assert circles(imports) == []


def test_a_circle_is_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
