"""Cross-cutting: the command line stands on typer's, click's and rich's public ground (issue 38), and its
help reads right: no placeholder after a flag, a flag given a value told so, a summary one sentence."""

import ast
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import every_command, run_cli, run_process
from fakehub import FakeHub

ROOT = Path(__file__).resolve().parents[1]
THEIRS = ("typer", "click", "rich")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def reached(path: Path) -> list[str]:
    """Where a file reaches a private name of typer, click or rich: imports one (from typer.testing import
    _get_command, from typer._click import ...), reads one off a name it imported from them (testing._x), or
    names one to a patch (patch.object(testing, "_x"), patch("typer.main._x"))."""
    tree = ast.parse(path.read_text(), str(path))
    bound: set[str] = set()  # the names this file binds to their modules and objects
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in THEIRS:
                    bound.add((alias.asname or alias.name).split(".")[0])
                    if any(map(_private, alias.name.split("."))):
                        found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in THEIRS:
            parts = (node.module or "").split(".")
            for alias in node.names:
                bound.add(alias.asname or alias.name)
                if any(map(_private, [*parts, alias.name])):
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call):
            first = node.args[0] if node.args else None
            named = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant) and type(a.value) is str]
            if isinstance(first, ast.Name) and first.id in bound and any(map(_private, named)):
                found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts = node.value.split(".")
            if parts[0] in THEIRS and len(parts) > 1 and any(map(_private, parts)):
                found.append(f"line {node.lineno}: {node.value!r}")
    return found


def test_src_reaches_no_private_member() -> None:
    """ruff's SLF001 (pyproject.toml selects it for src/): no `obj._name` of another object in src."""
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "SLF001", "--no-cache", "src"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_file_reaches_a_private_name_of_typer_click_or_rich() -> None:
    files = [p for part in ("src", "tests", "scripts", "bench") for p in sorted((ROOT / part).rglob("*.py"))]
    assert len(files) > 100
    found = {str(p.relative_to(ROOT)): where for p in files if (where := reached(p))}
    assert found == {}


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from unittest import mock\nfrom typer import testing\nimport typer.main as tm\nimport rich\n"
        "from typer._click import Context\n"
        "mock.patch.object(testing, '_get_command', None)\nx = tm._get_command\ny = rich.console._null\n"
        "mock.patch('typer.main._x')\nz = other._fine\n"
    )
    assert sorted(int(w.split(":")[0].removeprefix("line ")) for w in reached(sample)) == [5, 6, 7, 8, 9]


def help_rows(text: str) -> list[list[str]]:
    """The words of each row of a help's panels (inside the │ borders)."""
    return [line.strip("│ ").split() for line in text.splitlines() if line.startswith("│")]


def flag_rows(command: Any, text: str) -> list[tuple[str, str, str]]:
    """Each flag of command (and -h/--help): its name, the first word its help row shows after its names, and
    the first word of its help."""
    flags = [p for p in command.params if p.param_type_name == "option" and p.is_flag]
    named = [([*p.opts, *p.secondary_opts], p.help or "") for p in flags]
    named.append((["--help", "-h"], "Show this message and exit."))
    rows = []
    for names, help_text in named:
        row = next(r for r in help_rows(text) if r and r[0] in names)
        shown = [w for w in row if w not in names]
        rows.append((names[0], shown[0], help_text.split()[0]))
    return rows


def test_flags_show_no_placeholder() -> None:
    """A flag's help row goes straight from its names to its help (Typer 0.29 put <bool> between them)."""
    import typer

    from gpt2emb.cli import app

    root = typer.main.get_command(app)
    commands = [([], root), *every_command()]
    assert len(commands) > 15
    checked = 0
    for path, command in commands:
        text = run_cli(*path, "--help").stdout
        assert "<bool>" not in text, path
        for flag, shown, first in flag_rows(command, text):
            assert shown == first, (path, flag)  # the first word after the names is its help's
            checked += 1
    assert checked > 60


@pytest.mark.parametrize(
    ("args", "flag", "value"),
    [
        (["lab", "--load", "true"], "--load", "true"),
        (["sizes", "--json", "yes"], "--json", "yes"),
        (["sizes", "--verify", "--dtype", "fp16", "--json", "1"], "--json", "1"),
        (["cache", "list", "--json", "yes"], "--json", "yes"),
        (
            ["tying", "--load", "yes"],
            "--load",
            "yes",
        ),  # input takes its words unquoted: `--full yes` is a word
        (["geometry", "--json", "--", "x"], None, None),  # after --: an argument, not a flag's value
    ],
)
def test_a_flag_given_a_value_is_told_it_is_a_flag(
    hub: FakeHub, args: list[str], flag: str | None, value: str | None
) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2 and result.stdout == ""
    message = json.loads(result.stderr)["error"]["message"] if "--json" in args else result.stderr
    if flag is None:
        assert "unexpected extra argument" in message
        return
    assert f"{flag} is a flag and takes no value ({value}): give {flag} alone, or leave it out" in message
    assert hub.requests == []  # refused before anything was fetched


def test_completion_after_a_flag_given_a_value_still_completes() -> None:
    """Completion parses resiliently: what the command line holds so far is never refused there."""
    words = {"COMP_WORDS": "gpt2emb lab --load true --", "COMP_CWORD": "4"}
    done = run_process(env={"_GPT2EMB_COMPLETE": "complete_bash", **words})
    assert done.returncode == 0 and done.stderr == ""
    assert {"--word", "--json"} <= set(done.stdout.split())


def test_a_word_after_a_flag_is_a_word_where_words_go(hub: FakeHub) -> None:
    doc = json.loads(run_cli("neighbors", "cat", "--json", "dog", "-k", "1").stdout)
    assert [item["word"] for item in doc["items"]] == ["cat", "dog"]
    assert run_cli("lab", "--word", "true", "--help").exit_code == 0  # --word takes a value; --help as ever


def summaries(text: str) -> dict[str, list[str]]:
    """Each command's summary in --help's command list, as its lines show it."""
    panel = text[text.index("╭─ Commands") :].splitlines()[1:]
    panel = panel[: next(i for i, line in enumerate(panel) if line.startswith("╰"))]
    inner = [line[1:-1] for line in panel]
    name = inner[0].split()[0]
    offset = inner[0].index(inner[0].split()[1], inner[0].index(name) + len(name))
    found: dict[str, list[str]] = {}
    for line in inner:
        if line[:offset].strip():
            name = line[:offset].strip()
            found[name] = []
        found[name].append(line[offset:].rstrip())
    return found


def test_each_summary_is_one_sentence_without_a_forced_break_at_80_columns() -> None:
    """At 80 columns the command list wraps each summary where the column ends, never before (lab's broke
    after "king - man +"), and a summary is one sentence (schema's was two)."""
    done = run_process("--help", env={"COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb"})
    assert done.returncode == 0 and max(map(len, done.stdout.splitlines())) == 80
    found = summaries(done.stdout)
    assert {"vector", "lab", "schema", "cache", "models"} <= set(found)
    line = next(line for line in done.stdout.splitlines() if line.startswith("│ vector"))
    width = len(line) - 2 - line.index("The raw")  # the summary column: to the border's padding
    for name, lines in found.items():
        for this, following in itertools.pairwise(lines):
            assert len(this) + 1 + len(following.split()[0]) > width, f"{name}: a break after {this!r}"
        summary = " ".join(lines)
        assert re.fullmatch(r"[^\n]*[.?]", summary) and not re.search(r"[.?!]\s", summary), (name, summary)


@pytest.mark.parametrize(
    "path",
    [
        path
        for path, command in every_command()
        if any(p.param_type_name == "argument" and p.nargs == -1 for p in command.params)
    ],
    ids=" ".join,
)
def test_an_argument_of_many_values_says_so_in_the_usage_line(path: list[str]) -> None:
    """`Usage: gpt2emb neighbors [OPTIONS] {WORD}...`: the ... that Typer 0.27 and 0.28 leave out where the
    argument has a metavar (cli.options.Command puts it back)."""
    command = dict((" ".join(p), c) for p, c in every_command())[" ".join(path)]
    usage = next(line for line in run_cli(*path, "--help").stdout.splitlines() if "Usage:" in line)
    for param in command.params:
        if param.param_type_name == "argument" and param.nargs == -1:
            name = re.escape(param.metavar or param.name)
            assert re.search(rf"[{{\[]{name}[}}\]]\.\.\.", usage), usage
