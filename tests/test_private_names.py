"""Cross-cutting: what another module of gpt2emb uses has a public name. No module imports an underscored
name from another (`from gpt2emb.output.layout import _table`), nor reaches one through a module it
imported (`layout._table`); a name is private to the module that defines it (dunders aside)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    path = SRC.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The module an ImportFrom names, relative imports made absolute."""
    if not node.level:
        return node.module or ""
    package = _module_of(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def uses_across_modules(path: Path) -> list[str]:
    """Each underscored name this module takes from another module of gpt2emb, as `line: what`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_of(path)
    found, aliases = [], {}  # aliases: a local name -> the gpt2emb module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "gpt2emb":
                    aliases[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(here, path, node)
            if source.split(".")[0] != "gpt2emb" or source == here:
                continue
            for a in node.names:
                if _private(a.name):
                    found.append(f"{node.lineno}: from {source} import {a.name}")
                elif _is_module(f"{source}.{a.name}"):  # from gpt2emb.output import layout
                    aliases[a.asname or a.name] = f"{source}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = ast.unparse(node.value)
            module = aliases.get(owner)
            if module is None and owner.startswith("gpt2emb."):
                module = owner
            if module is not None and module != here:
                found.append(f"{node.lineno}: {owner}.{node.attr} ({module})")
    return sorted(found, key=lambda u: (int(u.split(":")[0]), u))


def test_no_underscored_name_is_used_across_modules() -> None:
    found = {
        str(p.relative_to(SRC)): uses for p in sorted(SRC.rglob("*.py")) if (uses := uses_across_modules(p))
    }
    assert found == {}, "\n".join(f"{p}: {u}" for p, uses in found.items() for u in uses)


def test_the_scan_finds_both_ways_of_taking_a_private_name(tmp_path: Path) -> None:
    """The scan itself, on a module that does both (it would pass on anything if it found nothing)."""
    global SRC
    package = tmp_path / "gpt2emb"
    (package / "output").mkdir(parents=True)
    (package / "output" / "layout.py").write_text("")
    (package / "tokens.py").write_text("")
    (package / "views.py").write_text(
        "from gpt2emb.output.layout import _table, table\nfrom gpt2emb.output import layout\n"
        "from . import tokens\nfrom gpt2emb.records import LLAMA\n"
        "x = layout._num(1) + tokens._own + layout.__name__ + LLAMA._replace(a=1)\n"
    )
    saved, SRC = SRC, tmp_path
    try:
        uses = uses_across_modules(package / "views.py")
    finally:
        SRC = saved
    assert uses == [
        "1: from gpt2emb.output.layout import _table",
        "5: layout._num (gpt2emb.output.layout)",
        "5: tokens._own (gpt2emb.tokens)",
    ]
