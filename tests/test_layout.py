"""The shape of src/gpt2emb: no module over 500 lines, and no import circle (at module level or inside a
function: a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gpt2emb"
MAX_LINES = 500


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its __init__.py)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run: at module level or in a function, not those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            yield from (n for child in node.orelse for n in _imports_in(child))
            continue
        yield from _imports_in(node)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node)


def dependencies(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports: `from gpt2emb.x import y` is gpt2emb.x.y when that is a
    module, gpt2emb.x otherwise."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*kept, base]).strip(".")
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        found |= {t for t in targets if t in known and t != name}
    # cli/root.py imports each declared stem's cli/STEM.py by its name, and the handle the functions the
    # stems name for it (gpt2emb/commands/): imports all the same
    from gpt2emb import commands

    if name == "gpt2emb.cli.root":
        found |= {f"gpt2emb.cli.{stem}" for stem in commands.names()}
    if name == "gpt2emb.handle":
        found |= {m.function.partition(":")[0] for m in commands.methods() if m.function}
    return found


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
    known = modules()
    graph = {name: dependencies(name, path, known) for name, path in known.items()}
    assert graph["gpt2emb.handle"] >= {"gpt2emb.core.vector", "gpt2emb.core.open"}  # the graph is read at all
    assert graph["gpt2emb.cli.root"] >= {"gpt2emb.cli.sizes", "gpt2emb.cli.cache"}  # and its stems
    assert circles(graph) == []


def test_a_circle_is_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
