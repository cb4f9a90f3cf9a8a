"""Every JSON document a test's command prints, checked against the JSON Schema the shipped index names for
its command line: conftest's run_cli, run_json and run_process pass each run here; a document that does not
match fails the test. `checked` counts the documents (the session's summary prints it)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Sequence
from typing import Any

from gpt2emb.core import schema as schemas

# documents validated in this process by index entry ("neighbors --mode jsonl", "error"); a pytest-xdist
# worker sends its counts to the controller
checked: dict[str, int] = {}
seconds = [0.0]  # spent validating in this process, the first use of each validator included


# an element of a JSON array of one of these types, by the Python types json.loads makes of it (exactly: a
# bool is no number)
_PYTHON = {
    "number": (int, float),
    "integer": (int,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


@functools.cache
def _validator_class() -> Any:
    """draft 2020-12's validator with the shortcut below (jsonschema is imported at the first document)."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(Draft202012Validator, {"items": _fast_items})


def _fast_items(validator: Any, items: Any, instance: Any, schema: dict[str, Any]) -> Any:
    """draft 2020-12's `items`, with a shortcut for an array of plain values (a row of 1,024 cosines, of a
    1,024-row matrix): each element's type checked in one loop. Anything it does not pass (a wrong type,
    a float where an integer is asked) goes the library's own way, which says what is wrong."""
    kinds = _plain(items)
    start = len(schema.get("prefixItems", ()))
    if kinds is not None and isinstance(instance, list) and all(type(x) in kinds for x in instance[start:]):
        return
    from jsonschema import Draft202012Validator

    yield from Draft202012Validator.VALIDATORS["items"](validator, items, instance, schema)


def _plain(items: Any) -> tuple[type, ...] | None:
    """The Python types of an `items` schema that asks for a type of plain values only, else None."""
    if not isinstance(items, dict) or not set(items) <= {"type", "description"} or "type" not in items:
        return None
    names = [items["type"]] if isinstance(items["type"], str) else items["type"]
    return tuple(t for name in names for t in _PYTHON[name])


@functools.cache
def validator(name: str) -> Any:
    """The validator of a shipped schema file, built once per process (commands/test_schema.py checks that
    each file is a valid schema: not checked again here, a tenth of a second each)."""
    return _validator_class()(json.loads(schemas.text(name)))


@functools.cache
def _index() -> dict[str, Any]:
    return schemas.index()


def _models(args: Sequence[str]) -> set[object]:
    """The models -m/--model name on a command line, each once, as the command counts them (gpt2 and small
    are one model)."""
    from gpt2emb import registry

    names = []
    for i, arg in enumerate(args):
        if arg in ("-m", "--model") and i + 1 < len(args):
            names.append(args[i + 1])
        elif arg.startswith("--model="):
            names.append(arg.removeprefix("--model="))
        elif arg.startswith("-m") and len(arg) > 2 and not arg.startswith("--"):
            names.append(arg[2:])
    found: set[object] = set()
    for name in names:
        try:
            ref = registry.resolve(name)
        except Exception:  # no model: the command fails, printing no document
            found.add(name)
            continue
        found.add((ref.repo, ref.folder))
    return found


def schema_of(args: Sequence[str]) -> tuple[str, str] | None:
    """The (command, mode) whose schema describes what `gpt2emb ARGS` prints on stdout, as the index names
    them; None for a command that prints no JSON document (schema, an unknown word)."""
    commands = _index()["commands"]
    if not args:
        return None
    command = " ".join(args[:2]) if args[0] == "cache" else args[0]
    modes = commands.get(command)
    if modes is None:
        return None
    evaluates = any(a == "--eval" or a.startswith("--eval=") for a in args)
    triggered = {
        "eval-side-by-side": evaluates and len(_models(args)) > 1,
        "eval": evaluates,
        "heatmap": any(
            a in ("--heatmap", "--png", "--figure") or a.startswith(("--png=", "--figure=")) for a in args
        ),
        "jsonl": "--jsonl" in args,
        # analogy's - after a word is a sign of its sum (king - man + woman); - in place of the words, stdin
        "stdin": "-" in (args[1:2] if command == "analogy" else args),
        "side-by-side": len(_models(args)) > 1,
    }
    mode = next((m for m, on in triggered.items() if on and m in modes), "json")
    return command, mode


def check(args: Sequence[str], stdout: str, stderr: str) -> None:
    """Validate the JSON of one run: its --json document or --jsonl lines on stdout, and each JSON object on
    stderr (an error or a note). A mismatch, or --json output that is not JSON, fails the test."""
    start = time.perf_counter()
    try:
        _check(args, stdout, stderr)
    finally:
        seconds[0] += time.perf_counter() - start


def _check(args: Sequence[str], stdout: str, stderr: str) -> None:
    for text in stderr.splitlines():
        if text.startswith("{"):
            doc = _strict(text)
            kind = next((k for k in _index()["stderr"] if k in doc), None)
            assert kind is not None, f"a JSON object on stderr that is neither an error nor a note: {text}"
            _validate(_index()["stderr"][kind]["schema"], doc, args, kind)
    as_json, as_lines = "--json" in args, "--jsonl" in args
    if not (as_json or as_lines) or not stdout or {"--help", "-h", "--version"} & set(args):
        return
    found = schema_of(args)
    if found is None:
        return
    command, mode = found
    name = _index()["commands"][command][mode]["schema"]
    entry = f"{command} --mode {mode}"
    if as_lines:
        for text in stdout.splitlines():
            _validate(name, _strict(text), args, entry)
    else:
        _validate(name, _strict(stdout), args, entry)


def entries() -> list[str]:
    """Every entry of the index, as `checked` names them."""
    found = _index()
    modes = [f"{c} --mode {m}" for c, ms in found["commands"].items() for m in ms]
    return [*modes, *found["stderr"]]


def _strict(text: str) -> Any:
    """The JSON document in text; NaN and Infinity, which strict JSON has no words for, fail the test."""

    def refused(constant: str) -> Any:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refused)


def _validate(name: str, doc: Any, args: Sequence[str], entry: str) -> None:
    from jsonschema.exceptions import best_match

    error = best_match(validator(name).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the document"
        raise AssertionError(
            f"gpt2emb {' '.join(args)}: its JSON does not match {name} at {where}: {error.message}"
        )
    checked[entry] = checked.get(entry, 0) + 1
