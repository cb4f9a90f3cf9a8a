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


def test_the_units_mirror_the_package() -> None:
    """Each file of tests/units/ is named after a module that exists: tests/units/P/test_X.py is the tests of
    src/gpt2emb/P/X.py (test_init.py: the package's __init__.py). Each folder there is a package, so that a
    name may repeat (tests/units/core/test_neighbors.py beside tests/commands/test_neighbors.py)."""
    units, package = ROOT / "tests" / "units", ROOT / "src" / "gpt2emb"
    files = sorted(units.rglob("test_*.py"))
    assert files
    for file in files:
        inside = file.parent.relative_to(units)
        name = file.stem.removeprefix("test_")
        module = package / inside / ("__init__.py" if name == "init" else f"{name}.py")
        assert module.is_file(), f"{file.relative_to(ROOT)} names no module ({module.relative_to(ROOT)})"
    for folder in [units, *(p for p in units.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        assert (folder / "__init__.py").is_file(), f"{folder.relative_to(ROOT)} has no __init__.py"
    assert not list((ROOT / "tests").glob("test_pinned_*.py")), "a module's tests go in tests/units/"
