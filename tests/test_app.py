"""Cross-cutting: the app as a whole, every command alike: a bad value is one line (or one JSON error) and
no traceback, option values checked and typed, --version and --help, a piped table unpadded, offline without a
cache, an option that would change nothing refused, and a real process end to end."""

import json
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest

from conftest import every_command, run_cli, run_json, run_process
from fakehub import FakeHub
from tinymodel import Tiny


@pytest.mark.parametrize(
    "args", [["neighbors", "cat", "king"], ["positions", "0-30"], ["sizes"], ["vector", "cat"], ["models"]]
)
def test_a_piped_table_has_no_padding_at_its_line_ends(hub: FakeHub, args: list[str]) -> None:
    out = run_cli(*args).stdout
    assert "─" in out and out.endswith("\n")  # a table was printed
    assert [line for line in out.split("\n") if line.endswith(" ")] == []


@pytest.mark.parametrize(
    ("code", "args"),
    [
        (2, ("neighbors", "cat", "-k", "0")),
        (2, ("neighbors", "cat", "-k", "-3")),
        (2, ("neighbors", "cat", "-k", "100000")),
        (2, ("vector", "")),
        (2, ("vector", "   ")),
        (2, ("vector", "id:-1")),
        (2, ("vector", "id:99999999")),
        (2, ("vector", "id:x")),
        (2, ("analogy", "king", "man")),
        (3, ("neighbors", "cat", "-m", "gpt2-xxl")),
        (3, ("neighbors", "cat", "-m", "someone/missing")),
        (2, ("vector", "x" * 10000)),
        (2, ("positions",)),
        (2, ("sizes", "--dtype", "int8")),
    ],
)
def test_bad_input_is_one_line_without_traceback(
    hub: FakeHub, code: int, args: tuple[str, ...], caches: dict[str, Path]
) -> None:
    plain = run_cli(*args)
    assert plain.exit_code == code, plain.output
    assert plain.stdout == "" and "Traceback" not in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1 and plain.stderr.startswith("gpt2emb: ")
    as_json = run_cli(*args, "--json")
    assert as_json.exit_code == plain.exit_code and as_json.stdout == ""
    error = json.loads(as_json.stderr)["error"]
    assert error["code"] == plain.exit_code and error["message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("neighbors", "cat", "-k", "abc"), "Invalid value for '-k' / '--top': 'abc' is not a whole number."),
        (("neighbors", "cat", "-k", "1.5"), "'1.5' is not a whole number."),
        (("neighbors", "cat", "-k", "1_0"), "'1_0' is not a whole number."),  # as id:1_0 is refused
        (("neighbors", "cat", "--restrict", "\u0665\u0660"), "is not a whole number."),  # Arabic-Indic 50
        (("vector", "king", "--dims", "0"), "Invalid value for '--dims': 0 is less than 1."),
        (("neighbors", "cat", "--pool", "MEAN"), "'MEAN' is not one of 'mean', 'first', 'strict'."),
        (("analogy", "king", "man", "woman", "--method", "x"), "'x' is not one of 'add', '3cosadd', '3cos"),
        (("sizes", "--dtype", "int8"), "'int8' is not one of 'fp32', 'fp16'."),
        (("neighbors",), "Missing argument 'WORD'."),
    ],
)
def test_option_values_are_checked_with_clear_messages(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_option_values_arrive_typed(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("neighbors", "cat", "-k", " 2", "--pool", "first", "-m", "gpt2", "-m", "small")
    assert doc["model"] == "gpt2" and doc["k"] == 2  # two names of one model: answered once
    assert doc["items"][0]["pool"] == "first"
    assert run_json("vector", "king", "--dims", "3")["items"][0]["norm"] > 0
    analogy = run_json("analogy", "king", "man", "woman", "--method", "3cosmul", "-k", "1")
    assert analogy["method"] == "3cosmul" and len(analogy["results"]) == 1


def test_offline_without_cache(hub: FakeHub, offline: None) -> None:
    result = run_cli("neighbors", "cat", "--json")
    assert result.exit_code == 4
    assert "not cached" in json.loads(result.stderr)["error"]["message"]


def test_version_and_help() -> None:
    assert run_cli("--version").stdout.strip() == f"gpt2emb {version('gpt2emb')}"
    helps = run_cli("--help").stdout
    for command in ("vector", "neighbors", "analogy", "positions", "sizes", "tying"):
        assert command in helps
        assert "Examples:" in run_cli(command, "--help").stdout


def test_real_process_end_to_end_then_offline(hub: FakeHub, tiny: Tiny) -> None:
    first = run_process("analogy", "king", "man", "woman", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["results"][0]["token"] == " queen"
    assert first.stderr == ""  # nothing on stderr when piped: no progress bars
    hub.requests.clear()
    again = run_process("analogy", "king", "man", "woman", "--json", env={"HF_HUB_OFFLINE": "1"})
    assert again.returncode == 0 and again.stdout == first.stdout
    assert hub.requests == []
    table = run_process("neighbors", "cat", env={"COLUMNS": "120"})
    assert table.returncode == 0 and '" cats"' in table.stdout and "\x1b[" not in table.stdout
    module = subprocess.run([sys.executable, "-m", "gpt2emb", "--version"], capture_output=True, text=True)
    assert module.stdout.strip() == f"gpt2emb {version('gpt2emb')}"


def test_help_shows_every_option_text_whole() -> None:
    """Rich markup must not eat anything: `needs "gpt2emb[plot]"` once showed as `needs "gpt2emb"`."""
    commands = every_command()
    assert len(commands) > 8
    for path, command in commands:
        shown = " ".join(run_cli(*path, "--help").stdout.replace("│", " ").split())
        for param in command.params:
            text = getattr(param, "help", None)
            if text:
                assert " ".join(text.replace("\\[", "[").split()) in shown, (path, text)


def test_a_command_promises_stdin_only_if_it_reads_it(hub: FakeHub, stdin: Callable[[bytes], None]) -> None:
    """An argument's help that says `-` reads stdin is given only to commands that do (a shared argument
    promised it to every command using it, issue 57): each such command answers a word from stdin."""
    promising = [
        path
        for path, command in every_command()
        if any("reads them from stdin" in (getattr(p, "help", None) or "") for p in command.params)
    ]
    assert {("vector",), ("neighbors",), ("similarity",)} <= {tuple(p) for p in promising}
    for path in promising:
        stdin(b"cat\nking\n")
        done = run_cli(*path, "-", "--json")
        assert done.exit_code == 0, (path, done.output)
        assert "king" in done.stdout and "cat" in done.stdout, path


@pytest.mark.parametrize("args", [(), ("cache",)])
def test_no_command_shows_the_help_and_nothing_else(args: tuple[str, ...]) -> None:
    result = run_process(*args)
    assert result.returncode == 2 and "Usage: gpt2emb" in result.stdout + result.stderr
    assert "gpt2emb: " not in result.stderr  # no empty error line after the help


@pytest.mark.parametrize(
    ("args", "named", "without"),
    [
        (["analogy", "king", "man", "woman", "--rule", "bare", "--errors"], "--rule, --errors", 4),
        (["analogy", "--eval", "Q", "-k", "3", "--keep-inputs"], "-k/--top, --keep-inputs", 3),
        (["analogy", "--eval", "Q", "--exact", "--pool", "first"], "--exact, --pool", 3),
        (["similarity", "cat", "dog", "--ignore-case"], "--ignore-case", 3),
        (["similarity", "cat", "dog", "--rule", "space"], "--rule", 3),  # the default, given: still nothing
        (["similarity", "--eval", "P", "--pool", "strict"], "--pool", 3),
    ],
)
def test_an_option_that_would_change_nothing_is_refused(
    hub: FakeHub, tmp_path: Path, args: list[str], named: str, without: int
) -> None:
    files = {"Q": tmp_path / "q.txt", "P": tmp_path / "p.tsv"}
    files["Q"].write_text(": capital\nking man queen woman\n")
    files["P"].write_text("cat\tdog\t7\nking\tqueen\t8\n")
    args = [str(files[a]) if a in files else a for a in args]
    result = run_cli(*args)
    assert result.exit_code == 2
    assert f"gpt2emb: {named} would change nothing" in result.stderr
    assert hub.requests == []  # refused before anything was fetched
    assert run_cli(*args[:without]).exit_code == 0  # without them, the same command answers
