"""The JSON Schemas of the commands' output: current with the result classes, valid, naming every command,
each validated against a real document, printed by `gpt2emb schema`; and the check conftest runs on every
command's JSON fails on a document that breaks its schema."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from gpt2emb import commands

import schemacheck
from conftest import run_cli
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import gen_docs  # noqa: E402
import gen_schemas  # noqa: E402

SHIPPED = ROOT / "src" / "gpt2emb" / "schemas"
DOCS = ROOT / "docs" / "schema"


@pytest.mark.parametrize("folder", [SHIPPED, DOCS], ids=["package", "docs"])
def test_the_schemas_are_current(folder: Path) -> None:
    stale = gen_schemas.stale(folder)
    assert stale == [], (
        f"{folder} differs from the result classes in {stale}: run python scripts/gen_schemas.py"
    )


def test_every_schema_is_a_draft_2020_12_schema_of_strict_json() -> None:
    def refused(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    for path in sorted(SHIPPED.glob("*.json")):
        if path.name == "index.json":
            continue
        schema = json.loads(path.read_text(), parse_constant=refused)
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is True and schema["required"], path.name


def test_a_schema_lists_every_key_as_required_and_says_which_may_be_null() -> None:
    neighbors = json.loads((SHIPPED / "NeighborsResult.json").read_text())
    assert neighbors["required"] == ["model", "k", "items", "candidates", "fold", "notes", "static"]
    assert neighbors["properties"]["k"] == {"type": "integer"}
    assert neighbors["properties"]["candidates"]["anyOf"] == [
        {"$ref": "#/$defs/Candidates"},
        {"type": "null"},
    ]
    candidates = neighbors["$defs"]["Candidates"]["properties"]
    assert candidates["restrict"]["type"] == ["integer", "null"]
    assert candidates["whole_words"] == {"type": "boolean"}
    score = neighbors["$defs"]["Neighbor"]["properties"]["score"]
    assert score["type"] == ["number", "null"] and "NaN" in score["description"]  # to_dict's null
    pair = json.loads((SHIPPED / "AnalogyEvalResult.json").read_text())["$defs"]["WrongAnswer"]
    assert pair["properties"]["question"]["prefixItems"] == [{"type": "string"}] * 3
    assert pair["properties"]["question"]["minItems"] == pair["properties"]["question"]["maxItems"] == 3


def test_the_index_names_every_command_and_its_files_exist() -> None:
    index = json.loads((SHIPPED / "index.json").read_text())
    assert list(index["commands"]) == [c for c in gen_docs.commands() if c != "schema"]
    named = {e["schema"] for modes in index["commands"].values() for e in modes.values()}
    named |= {e["schema"] for e in index["stderr"].values()}
    assert named == {p.name for p in SHIPPED.glob("*.json")} - {"index.json"}
    sides = {"side-by-side", "eval-side-by-side"}
    assert index["commands"]["analogy"].keys() == {"json", "jsonl", "stdin", "eval", *sides}
    assert index["commands"]["similarity"].keys() == {"json", "stdin", "eval", *sides}
    assert index["commands"]["similarity"]["eval-side-by-side"]["schema"] == "EvalSideBySide.json"
    assert index["commands"]["analogy"]["stdin"]["schema"] == "AnalogyBatch.json"
    assert index["commands"]["neighbors"]["jsonl"]["schema"] == "NeighborsItem.json"


@pytest.mark.parametrize(
    ("args", "entry"),
    [
        (["neighbors", "cat", "--json"], ("neighbors", "json")),
        (["neighbors", "cat", "--jsonl"], ("neighbors", "jsonl")),
        (["neighbors", "-", "--jsonl"], ("neighbors", "jsonl")),
        (["neighbors", "-", "--json"], ("neighbors", "stdin")),
        (["neighbors", "cat", "-m", "gpt2", "-m", "someone/other", "--json"], ("neighbors", "side-by-side")),
        (["neighbors", "cat", "-m", "gpt2", "-m", "small", "--json"], ("neighbors", "json")),  # one model
        (["neighbors", "cat", "--model=gpt2", "-mmedium", "--json"], ("neighbors", "side-by-side")),
        (["analogy", "-", "--json"], ("analogy", "stdin")),
        (["analogy", "--eval", "q.txt", "--json"], ("analogy", "eval")),
        (["similarity", "--eval=p.tsv", "--json"], ("similarity", "eval")),
        (
            ["similarity", "--eval=p.tsv", "-m", "gpt2", "-m", "xl", "--json"],
            ("similarity", "eval-side-by-side"),
        ),
        (["similarity", "cat", "dog", "-m", "gpt2", "-m", "xl", "--json"], ("similarity", "side-by-side")),
        (["positions", "--heatmap", "--json"], ("positions", "heatmap")),
        (["positions", "--png", "x.png", "--json"], ("positions", "heatmap")),
        (["sizes", "-m", "gpt2", "-m", "xl", "--json"], ("sizes", "json")),
        (["cache", "verify", "--json"], ("cache verify", "json")),
        (["schema", "neighbors"], None),
        (["nosuchcommand", "--json"], None),
    ],
)
def test_a_command_line_names_its_schema(args: list[str], entry: tuple[str, str] | None) -> None:
    assert schemacheck.schema_of(args) == entry


QUESTIONS = ": royalty\nman king woman queen\nwoman queen man king\n: animals\ncat cats dog kitten\n"
PAIRS = "king\tqueen\t8.5\ncat\tcats\t9.2\ncat\tdog\t7.4\nhello\tking\t0.5\n"


def test_every_entry_of_the_index_validates_what_its_command_prints(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, stdin: Any
) -> None:
    """One run of each command and mode the index names, each document validated by run_cli (conftest):
    every entry's count grows, so no schema goes unchecked against a real document."""
    other = Tiny(tiny.tokenizer, tiny.config, tiny.wte + np.float32(0.01), tiny.wpe, tiny.blocks)
    hub.repos["someone/other"] = Repo("b" * 40, hub_files(other))
    (tmp_path / "q.txt").write_text(QUESTIONS)
    (tmp_path / "p.tsv").write_text(PAIRS)
    before = dict(schemacheck.checked)
    two = ["-m", "gpt2", "-m", "someone/other"]
    runs: list[tuple[list[str], bytes]] = [
        (["vector", "cat", "--json"], b""),
        (["vector", "cat", "dog", "--jsonl"], b""),
        (["vector", "-", "--json"], b"cat\ndog\n"),
        (["neighbors", "cat", "-k", "3", "--json"], b""),
        (["neighbors", "cat", "dog", "-k", "3", "--jsonl"], b""),
        (["neighbors", "cat", "-k", "3", *two, "--json"], b""),
        (["neighbors", "-", "--json"], b"cat\ndog\n"),
        (["analogy", "king", "man", "woman", "--json"], b""),
        (["analogy", "king", "man", "woman", "--jsonl"], b""),
        (["analogy", "king", "man", "woman", *two, "--json"], b""),
        (["analogy", "-", "--json"], b"king man woman\ncat cats dog\n"),
        (["analogy", "--eval", str(tmp_path / "q.txt"), "--errors", "--json"], b""),
        (["similarity", "cat", "dog", "--json"], b""),
        (["similarity", "-", "--json"], b"cat\ndog\nking\n"),
        (["similarity", "--eval", str(tmp_path / "p.tsv"), "--json"], b""),
        (["analogy", "--eval", str(tmp_path / "q.txt"), *two, "--json"], b""),
        (["similarity", "cat", "dog", *two, "--json"], b""),
        (["similarity", "--eval", str(tmp_path / "p.tsv"), *two, "--json"], b""),
        (["positions", "0", "1", "--json"], b""),
        (["positions", "--heatmap", "--cells", "2", "--json"], b""),
        (["sizes", "--json"], b""),
        (["models", "--json"], b""),
        (["tying", "--json"], b""),
        (["input", "the king", "--json"], b""),
        (["context", "king", "the king", "a king and cat", "--json"], b""),
        (["geometry", "--json"], b""),
        (["export", "--format", "word2vec", "-o", str(tmp_path / "rows.txt"), "--limit", "5", "--json"], b""),
        (["lab", "--json"], b""),
        (["cache", "list", "--json"], b""),
        (["cache", "verify", "--json"], b""),
        (["cache", "refresh", "--json"], b""),
        (["cache", "path", "--json"], b""),
        (["cache", "clear", "--json"], b""),
        (["neighbors", "cat", "-m", "gpt2", "-m", "small", "--json"], b""),  # a note: small is gpt2 again
        (["neighbors", "cat", "-m", "no-such-model", "--json"], b""),  # an error
    ]
    for args, given in runs:
        stdin(given)
        result = run_cli(*args)
        assert result.exit_code in (0, 3), f"{args}: {result.stderr}"
    grown = {e for e in schemacheck.entries() if schemacheck.checked.get(e, 0) > before.get(e, 0)}
    for command in commands.commands():  # one none of these ran: its declared warm row (gpt2emb/commands/)
        if command.warm and f"{command.name} --mode json" not in grown:
            stdin(b"")
            warm = [part.replace("{out}", str(tmp_path / "out")) for part in command.warm]
            assert run_cli(*warm, "--json").exit_code == 0, warm
    grown = {e for e in schemacheck.entries() if schemacheck.checked.get(e, 0) > before.get(e, 0)}
    assert sorted(set(schemacheck.entries()) - grown) == []


def neighbors_doc() -> dict[str, Any]:
    neighbor = {"rank": 1, "id": 3, "token": " cats", "score": 0.5, "forms": None}
    item = {"word": "cat", "tokens": [{"id": 2, "token": " cat"}], "pool": "mean", "note": ""}
    return {
        "model": "gpt2",
        "k": 1,
        "items": [{**item, "neighbors": [neighbor], "form_share": None}],
        "candidates": None,
        "fold": False,
        "notes": [],
        "static": False,
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("k"), "'k' is a required property"),
        (lambda d: d.update(k="1"), "at k: '1' is not of type 'integer'"),
        (lambda d: d["items"][0]["neighbors"][0].update(score="0.5"), "items/0/neighbors/0/score"),
        (lambda d: d["items"][0]["tokens"][0].pop("id"), "'id' is a required property"),
        (lambda d: d.update(candidates={"count": 3}), "at candidates"),
    ],
)
def test_a_document_that_breaks_its_schema_fails_the_test(change: Any, message: str) -> None:
    doc = neighbors_doc()
    schemacheck.check(["neighbors", "cat", "--json"], json.dumps(doc), "")  # as it is: valid
    schemacheck.check(["neighbors", "cat", "--json"], json.dumps({**doc, "later": 1}), "")  # a key added
    change(doc)
    with pytest.raises(AssertionError, match=message):
        schemacheck.check(["neighbors", "cat", "--json"], json.dumps(doc), "")


@pytest.mark.parametrize(
    ("cell", "valid"), [(0.5, True), (None, True), (1, True), ("0.5", False), (True, False), ([0.5], False)]
)
def test_an_array_of_numbers_is_checked_element_by_element(cell: Any, valid: bool) -> None:
    """The checker's shortcut for arrays of plain values (a 1,024 x 1,024 matrix) lets through what the
    schema allows and nothing else: a null (NaN written by to_dict) yes, a string or a bool no."""
    doc = {"model": "gpt2", "positions": [0, 1], "norms": [1.0, 2.0], "matrix": [[1.0, 0.5], [0.5, cell]]}
    check = functools.partial(schemacheck.check, ["positions", "0", "1", "--json"], stderr="")
    if valid:
        check(json.dumps({**doc, "rows": [0, 1]}))
    else:
        with pytest.raises(AssertionError, match=r"PositionsResult\.json at matrix/1/1: .* is not of type"):
            check(json.dumps({**doc, "rows": [0, 1]}))
    with pytest.raises(AssertionError, match=r"at rows/1: 1\.5 is not of type 'integer'"):
        check(json.dumps({**doc, "rows": [0, 1.5]}))


def test_a_line_of_stderr_or_a_number_that_is_not_strict_json_fails_the_test() -> None:
    args = ["neighbors", "cat", "--json"]
    line = json.dumps(neighbors_doc()["items"][0])
    schemacheck.check(["neighbors", "cat", "--jsonl"], line + "\n" + line + "\n", "")
    with pytest.raises(AssertionError, match=r"NeighborsItem\.json at word"):
        schemacheck.check(
            ["neighbors", "cat", "--jsonl"], line + "\n" + line.replace('"cat"', "1") + "\n", ""
        )
    with pytest.raises(AssertionError, match="not strict JSON: NaN"):
        schemacheck.check(args, json.dumps(neighbors_doc()).replace("0.5", "NaN"), "")
    schemacheck.check(
        args, "", '{"error": {"type": "usage", "code": 2, "message": "m", "line": 3}}\n{"note": "n"}'
    )
    with pytest.raises(AssertionError, match=r"Error\.json at error/code"):
        schemacheck.check(args, "", '{"error": {"type": "usage", "code": "2", "message": "m"}}')
    with pytest.raises(AssertionError, match="neither an error nor a note"):
        schemacheck.check(args, "", '{"warning": "w"}')


def test_schema_prints_the_shipped_schema_of_a_command_and_mode() -> None:
    for args, name in [
        ([], "index.json"),
        (["neighbors"], "NeighborsResult.json"),
        (["neighbors", "--mode", "jsonl"], "NeighborsItem.json"),
        (["analogy", "--mode", "stdin"], "AnalogyBatch.json"),
        (["cache", "verify"], "VerifyResult.json"),
        (["error"], "Error.json"),
        (["note"], "Note.json"),
    ]:
        result = run_cli("schema", *args)
        assert result.exit_code == 0 and result.stdout == (SHIPPED / name).read_text(), args


# every command with JSON, in --help's order (wherever a command sits there, the message names them all)
PRINTING_JSON = ", ".join(c.name for c in commands.commands() if c.modes)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch"], f"'nosuch' is not a command that prints JSON; give one of {PRINTING_JSON} (or error,"),
        (["schema"], f"give one of {PRINTING_JSON} (or error, note: the lines on stderr)"),
        (["cache"], "cache is a group: its schemas are those of cache list, cache clear,"),
        (["sizes", "--mode", "jsonl"], "sizes has no mode 'jsonl'; its modes: json"),
        (["neighbors", "--mode", "eval"], "its modes: json, jsonl, side-by-side, stdin"),
        (["--mode", "jsonl"], "--mode picks a mode of a command"),
        (["error", "--mode", "json"], "error (a line on stderr) has one schema"),
    ],
)
def test_schema_of_what_has_none_is_a_usage_error_naming_the_choices(args: list[str], message: str) -> None:
    result = run_cli("schema", *args)
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr
    as_json = run_cli("schema", *args, "--json")  # as every command: the error as a JSON object
    assert as_json.exit_code == 2 and message in json.loads(as_json.stderr)["error"]["message"]


def test_schema_is_light_and_works_from_the_installed_package() -> None:
    """No numpy, no torch: a script may ask for a schema before each run. The files are read as package
    data (importlib.resources), as the wheel carries them."""
    probe = (
        "import sys; from gpt2emb.cli import main; sys.argv = ['gpt2emb', 'schema', 'lab']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0\n"
        "heavy = {'numpy', 'torch', 'transformers', 'tokenizers', 'pydantic'} & set(sys.modules)\n"
        "sys.stderr.write(f'HEAVY={sorted(heavy)}')"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stderr == "HEAVY=[]"
    schema = json.loads(done.stdout)
    assert (
        schema["title"] == "LabResult"
        and schema["properties"]["neighbors"]["$ref"] == "#/$defs/NeighborsResult"
    )
