"""docs/img/architecture.svg, the layers of src/gpt2emb in one picture, drawn from the code's own imports.

Each module belongs to one box (BOXES: a package's modules to its box, the top-level modules named there to
theirs, any other top-level module to "the shared modules"), each box to a band, and an arrow joins two boxes
where a module of the one imports a module of the other. The picture's claim is that every import goes down:
from a band to a band below it, or within a band. `check()` says where the code breaks it (tests/
test_architecture.py runs it), and the arrows are the imports as they are, so the picture cannot drift from
the code: gen_docs.py draws it again, and --check fails while the file is stale.

    python scripts/gen_architecture.py           # write docs/img/architecture.svg
    python scripts/gen_architecture.py --check   # exit 1 if it is stale or an import goes up
"""

from __future__ import annotations

import ast
import sys
import textwrap
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gpt2emb"
OUT = ROOT / "docs" / "img" / "architecture.svg"


class Box(NamedTuple):
    band: int  # 0 at the top
    name: str
    says: str  # one line under the name
    members: tuple[str, ...]  # dotted names below gpt2emb: a package (all its modules) or a module
    colour: str


BANDS = (
    "where a run starts",
    "the cores",
    "shown, drawn, stored",
    "words and numbers",
    "what all share:\nno arrows drawn",
)
SHARED = "the shared modules"
BOXES = (
    Box(0, "cli/", "the command line: typer parses", ("cli", "__main__"), "#dbe9f6"),
    Box(0, "handle.py", "gpt2emb.open(): a method a command", ("handle", ""), "#dbe9f6"),
    Box(1, "core/", "names and words in, a frozen result out", ("core",), "#fde9c9"),
    Box(2, "output/", "tables (rich), JSON, pages", ("output",), "#e2f0d9"),
    Box(2, "plot/", "--figure (matplotlib)", ("plot",), "#e2f0d9"),
    Box(2, "store/", "the Hub, checkpoints, the cache", ("store",), "#f2dcdb"),
    Box(3, SHARED, "", (), "#f3f3f3"),
    Box(3, "families/", "what each architecture decides", ("families",), "#f2dcdb"),
    Box(3, "heavy.py", "the only torch importer", ("heavy",), "#f2dcdb"),
    Box(4, "results/", "the result dataclasses: the JSON", ("results", "schemas"), "#fde9c9"),
    Box(4, "commands/", "each command declared, as data", ("commands",), "#eeeeee"),
    # quoting and word_lists hold what was tokens.py's and import nothing of gpt2emb: every layer uses them.
    Box(
        4,
        "ground",
        "",
        ("errors", "report", "choices", "limits", "kept", "targets", "stems", "quoting", "word_lists"),
        "#f3f3f3",
    ),
)


# ---------------------------------------------------------------- the imports


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
    # cli/root.py imports each declared stem's cli/STEM.py by its name: imports all the same
    if name == "gpt2emb.cli.root":
        found |= {f"gpt2emb.cli.{path.stem}" for path in (PACKAGE / "commands").glob("[!_]*.py")}
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: dependencies(name, path, known) for name, path in known.items()}


def box_of(module: str) -> Box:
    """The box a module belongs to: the one naming it or its package, else (a top-level module) the shared."""
    inner = module.removeprefix("gpt2emb").removeprefix(".")
    for box in BOXES:
        if any(inner == m or (m and inner.startswith(m + ".")) for m in box.members):
            return box
    if "." in inner:
        raise SystemExit(f"{module}: its package has no box in scripts/gen_architecture.py's BOXES")
    return box_by_name(SHARED)


def box_by_name(name: str) -> Box:
    return next(b for b in BOXES if b.name == name)


def arrows(imports: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer's box, imported box) for every import between two boxes."""
    return {
        (a.name, b.name)
        for m, found in imports.items()
        for d in found
        if (a := box_of(m)) != (b := box_of(d))
    }


def check(imports: dict[str, set[str]]) -> list[str]:
    """Every import that goes up a band, as `importer -> imported`."""
    return sorted(
        f"{m} ({box_of(m).name}) -> {d} ({box_of(d).name})"
        for m, found in imports.items()
        for d in found
        if box_of(d).band < box_of(m).band
    )


# ---------------------------------------------------------------- the picture

WIDTH, LEFT, TOP, BAND, GAP, PAD = 960, 150, 56, 92, 44, 14


def _places() -> dict[str, tuple[float, float, float, float]]:
    """Each box's x, y, width and height: the boxes of a band side by side, as wide as their text."""
    places: dict[str, tuple[float, float, float, float]] = {}
    for band in range(len(BANDS)):
        row = [b for b in BOXES if b.band == band]
        widths = [max(150.0, 7.2 * max(len(b.says), len(b.name)) + 2 * PAD) for b in row]
        for b in row:
            if not b.says:  # a box listing its modules: what is left of the row
                i = row.index(b)
                widths[i] = max(
                    widths[i], WIDTH - LEFT - 20 - sum(widths[:i] + widths[i + 1 :]) - GAP * (len(row) - 1)
                )
        x = LEFT + (WIDTH - LEFT - 20 - sum(widths) - GAP * (len(row) - 1)) / 2
        for b, w in zip(row, widths, strict=True):
            places[b.name] = (x, float(TOP + band * (BAND + GAP)), w, float(BAND))
            x += w + GAP
    return places


def _listed(box: Box, imports: dict[str, set[str]], width: float) -> list[str]:
    """The module names a box without a line of its own lists, wrapped to its width."""
    names = sorted(m.rpartition(".")[2] for m in imports if box_of(m) == box)
    return textwrap.wrap(", ".join(names), max(20, int((width - 2 * PAD) / 6.6)))


def draw(imports: dict[str, set[str]]) -> str:
    places = _places()
    height = TOP + len(BANDS) * (BAND + GAP) - GAP + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="13">',
        '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="26" text-anchor="middle" font-size="16" font-weight="bold">src/gpt2emb: '
        "every import goes down (an arrow: imports)</text>",
    ]
    for i, title in enumerate(BANDS):
        top = TOP + i * (BAND + GAP)
        for j, line in enumerate(title.split("\n")):
            out.append(_text(12, top + BAND / 2 + 4 + 17 * j, line, 'font-style="italic" fill="#444"'))
    for a, b in sorted(arrows(imports)):
        (xa, ya, wa, ha), (xb, yb, wb, _) = places[a], places[b]
        if ya == yb or box_by_name(b).band == len(BANDS) - 1:
            continue  # within a band, or into what all share (the band's title says so): no arrow
        x1, x2 = xa + wa / 2, xb + wb / 2
        x1 += (x2 - x1) * min(0.35, wa / 4 / max(abs(x2 - x1), 1))  # leave from the side facing the target
        out.append(
            f'<line x1="{x1:.1f}" y1="{ya + ha:.1f}" x2="{x2:.1f}" y2="{yb - 2:.1f}" stroke="#555" '
            'stroke-opacity="0.55" stroke-width="1.2" marker-end="url(#head)"/>'
        )
    for box in BOXES:
        x, y, w, h = places[box.name]
        lines = [box.says] if box.says else _listed(box, imports, w)
        h = max(h, 36 + 17 * len(lines))  # a long list of modules: the box grows into the gap below
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="8" fill="{box.colour}"'
        )
        out[-1] += ' stroke="#888"/>'
        out.append(
            _text(x + PAD, y + 24, box.name, 'font-weight="bold" font-family="DejaVu Sans Mono, monospace"')
        )
        for j, line in enumerate(lines):
            out.append(_text(x + PAD, y + 46 + 17 * j, line, 'font-size="12" fill="#333"'))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _text(x: float, y: float, text: str, style: str) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" {style}>{escape(text)}</text>'


def main(check_only: bool) -> int:
    imports = graph()
    up = check(imports)
    if up:
        print("imports that go up a band (docs/architecture.md):\n  " + "\n  ".join(up))
        return 1
    svg = draw(imports)
    if check_only:
        if not OUT.is_file() or OUT.read_text() != svg:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/gen_architecture.py")
            return 1
        return 0
    OUT.write_text(svg)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv))
