"""Write the JSON Schemas of every command's output (draft 2020-12) from the result dataclasses, into the
package (src/gpt2emb/schemas/, which the wheel carries) and docs/schema/; tests/commands/test_schema.py fails
when either drifts from what this writes.

    python scripts/gen_schemas.py            # write them
    python scripts/gen_schemas.py --check    # name the stale files, exit 1 if any

A schema per document a command prints: its class's fields, each `required` (a key is never dropped) but
`figure` (in a document only when --figure drew one), with `additionalProperties: true` (keys may be added); a
field's comment in results/ is its description. index.json says which schema each command and mode prints,
and Error.json and Note.json are stderr's objects.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import json
import re
import sys
import tokenize
import types
import typing
from pathlib import Path
from typing import Any

from gpt2emb import commands
from gpt2emb.results.common import FIGURE

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "src" / "gpt2emb" / "schemas"
DOCS_DIR = ROOT / "docs" / "schema"
FOLDERS = (PACKAGE_DIR, DOCS_DIR)
DRAFT = "https://json-schema.org/draft/2020-12/schema"

# any float may be null: to_dict writes a value that is not finite (a model whose rows hold NaN) as null
NOT_FINITE = "null only where the model's rows hold NaN or infinite values (the document's notes say so)"
NOTES = (
    "Added to a document that has no notes of its own when one of its numbers is not finite and shown as "
    "null: says how many."
)


def _results() -> dict[str, type]:
    """Every result class by name, from gpt2emb.results' modules."""
    import gpt2emb.results as package

    found: dict[str, type] = {}
    for path in sorted(Path(package.__path__[0]).glob("*.py")):
        module = __import__(f"gpt2emb.results.{path.stem}", fromlist=["_"])
        for name, value in vars(module).items():
            if (
                dataclasses.is_dataclass(value)
                and isinstance(value, type)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def _comments(kind: type) -> dict[str, str]:
    """Each field's comment in its class's source (`name: type  # comment`), by field name."""
    source = inspect.getsource(sys.modules[kind.__module__])
    by_line = {
        tok.start[0]: tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    tree = ast.parse(source)
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == kind.__name__).body
    return {
        n.target.id: by_line[n.end_lineno or n.lineno]
        for n in body
        if isinstance(n, ast.AnnAssign)
        and isinstance(n.target, ast.Name)
        and (n.end_lineno or n.lineno) in by_line
    }


def _docstring(kind: type) -> str | None:
    """The class's own docstring (a dataclass without one has its signature as __doc__: no description)."""
    doc = kind.__dict__.get("__doc__")
    if not doc or doc.startswith(f"{kind.__name__}("):
        return None
    return " ".join(doc.split())


class _Builder:
    """One schema: the root class's object, and each class it holds as $defs."""

    def __init__(self, documents: set[str]) -> None:
        self.defs: dict[str, Any] = {}
        self.documents = documents  # printed whole by some command: may carry `notes` (see NOTES)

    def of(self, hint: Any) -> dict[str, Any]:
        """The schema of a value of this type hint."""
        origin = typing.get_origin(hint)
        if origin in (types.UnionType, typing.Union):
            args = typing.get_args(hint)
            nullable = type(None) in args
            rest = [a for a in args if a is not type(None)]
            parts = [self.of(a) for a in rest]
            if len(parts) == 1 and set(parts[0]) <= {"type", "description"}:
                return {"type": _with_null(parts[0]["type"])} if nullable else parts[0]
            return {"anyOf": [*parts, *([{"type": "null"}] if nullable else [])]}
        if origin is tuple:
            args = typing.get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.of(args[0])}
            return {
                "type": "array",
                "prefixItems": [self.of(a) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        if hint is float:
            return {"type": ["number", "null"]}
        if hint is bool:
            return {"type": "boolean"}
        if hint is int:
            return {"type": "integer"}
        if hint is str:
            return {"type": "string"}
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if hint.__name__ not in self.defs:
                self.defs[hint.__name__] = {}  # taken before it is built: a class may hold itself
                self.defs[hint.__name__] = self.object(hint)
            return {"$ref": f"#/$defs/{hint.__name__}"}
        raise TypeError(f"no JSON type for {hint!r}: teach scripts/gen_schemas.py")

    def object(self, kind: type) -> dict[str, Any]:
        """A result class as a JSON object: every field required, more keys allowed."""
        hints = typing.get_type_hints(kind, localns=_results())  # results import some for type checkers only
        comments = _comments(kind)
        properties: dict[str, Any] = {}
        for field in dataclasses.fields(kind):
            hint = hints[field.name]
            prop = self.of(hint)
            said = [_null_for_none(comments[field.name])] if field.name in comments else []
            if _holds_float(hint):
                said.append(f"a number here is {NOT_FINITE}")
            if said:
                prop = {**prop, "description": "; ".join(said)}
            properties[field.name] = prop
        names = [f.name for f in dataclasses.fields(kind)]
        if kind.__name__ in self.documents and "notes" not in names:
            properties["notes"] = {"type": "array", "items": {"type": "string"}, "description": NOTES}
        schema: dict[str, Any] = {"type": "object", "title": kind.__name__}
        described = _docstring(kind)
        if described:
            schema["description"] = described
        required = [n for n in names if n != FIGURE]  # a key only in a document that drew a figure
        schema.update(properties=properties, required=required, additionalProperties=True)
        return schema


def _null_for_none(comment: str) -> str:
    """A comment in JSON's words: Python's None is null there."""
    return re.sub(r"\bNone\b", "null", comment.replace("None (null)", "None"))


def _holds_float(hint: Any) -> bool:
    return hint is float or any(_holds_float(a) for a in typing.get_args(hint))


def _with_null(kind: str | list[str]) -> list[str]:
    kinds = [kind] if isinstance(kind, str) else list(kind)
    return kinds if "null" in kinds else [*kinds, "null"]


def result_schema(kind: type, documents: set[str]) -> dict[str, Any]:
    """The schema of a document that is one `kind`, its nested classes as $defs."""
    builder = _Builder(documents)
    root = builder.object(kind)
    schema = {"$schema": DRAFT, **root}
    defs = {name: d for name, d in sorted(builder.defs.items()) if name != kind.__name__}
    if kind.__name__ in builder.defs:  # it holds itself: the root is its own definition too
        defs[kind.__name__] = root
    if defs:
        schema["$defs"] = defs
    return schema


STDERR: dict[str, dict[str, Any]] = {
    "Error": {
        "$schema": DRAFT,
        "type": "object",
        "title": "Error",
        "description": "A failure: one line on stderr with --json or --jsonl (else `gpt2emb: message`).",
        "properties": {
            "error": {
                "type": "object",
                "properties": {
                    "type": {
                        "type": "string",
                        "description": "what failed: usage, unknown_model, not_cached, ...",
                    },
                    "code": {"type": "integer", "description": "the exit code it gives"},
                    "message": {
                        "type": "string",
                        "description": "what is wrong and how to fix it, on one line",
                    },
                    "line": {
                        "type": "integer",
                        "description": "words from stdin (-): the number of the input line that failed",
                    },
                },
                "required": ["type", "code", "message"],
                "additionalProperties": True,
            }
        },
        "required": ["error"],
        "additionalProperties": True,
    },
    "Note": {
        "$schema": DRAFT,
        "type": "object",
        "title": "Note",
        "description": "A note: one line on stderr with --json or --jsonl (else `gpt2emb: note: message`).",
        "properties": {"note": {"type": "string"}},
        "required": ["note"],
        "additionalProperties": True,
    },
}

# which document each command prints, by mode: (schema, the command line that prints it), as its stem declares
# them (gpt2emb/commands/STEM.py), in --help's order
MODES: dict[str, dict[str, tuple[str, str]]] = {c.name: dict(c.modes) for c in commands.commands() if c.modes}


def index() -> dict[str, Any]:
    return {
        "description": "Which JSON Schema (draft 2020-12) describes what each command prints on stdout, by "
        "mode; `gpt2emb schema COMMAND [--mode MODE]` prints it. A schema's keys are all required and more "
        "may be added in later versions. With --jsonl the schema is each line's. Lines on stderr with --json "
        "or --jsonl are an Error or a Note.",
        "commands": {
            command: {mode: {"schema": f"{name}.json", "prints": run} for mode, (name, run) in modes.items()}
            for command, modes in MODES.items()
        },
        "stderr": {"error": {"schema": "Error.json"}, "note": {"schema": "Note.json"}},
    }


def schemas() -> dict[str, dict[str, Any]]:
    """Every file's document by file name: each schema an index entry names, Error, Note and the index."""
    results = _results()
    documents = {name for modes in MODES.values() for name, _ in modes.values()}
    documents |= {h.__name__ for h in typing.get_type_hints(results["LabResult"]).values()}  # its parts
    written: dict[str, dict[str, Any]] = {
        f"{name}.json": result_schema(results[name], documents) for name in sorted(documents & set(results))
    }
    missing = documents - set(results)
    if missing:
        raise KeyError(f"no result class named {sorted(missing)}")
    for name, schema in STDERR.items():
        written[f"{name}.json"] = schema
    written["index.json"] = index()
    return written


def text(document: dict[str, Any]) -> str:
    """A file's text: indented, ASCII (any stdout encoding carries it), one newline at the end."""
    return json.dumps(document, indent=2, ensure_ascii=True) + "\n"


def write(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.json"):
        if stale.name not in files:
            stale.unlink()
    for name, body in files.items():
        (folder / name).write_text(body)


def stale(folder: Path) -> list[str]:
    """The files of folder that differ from what this writes (or that it would write or remove)."""
    expected = {name: text(doc) for name, doc in schemas().items()}
    found = {p.name: p.read_text() for p in folder.glob("*.json")}
    return sorted(n for n in expected.keys() | found.keys() if expected.get(n) != found.get(n))


if __name__ == "__main__":
    if "--check" in sys.argv:  # name the stale files, exit 1 if any (scripts/generate.py --check)
        drifted = [f"{folder.relative_to(ROOT)}/{name}" for folder in FOLDERS for name in stale(folder)]
        print(f"stale: {', '.join(drifted)}" if drifted else "schemas current")
        sys.exit(1 if drifted else 0)
    files = {name: text(doc) for name, doc in schemas().items()}
    for folder in FOLDERS:
        write(folder, files)
        print(f"wrote {len(files)} files to {folder.relative_to(ROOT)}/")
