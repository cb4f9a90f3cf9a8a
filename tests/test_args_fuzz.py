"""Any command line gets an answer or one clear refusal (issue 24.2: arguments that are not UTF-8 are exit 2
in the words stdin's lines get), and `neighbors - --strict` stops at its first bad line without ranking the
lines after it (issue 23.8)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpt2emb import commands, ops

from conftest import FUZZ, every_command, run_cli, run_process
from fakehub import FakeHub

DOCUMENTED = {0, 2, 3, 4, 5, 6, 7}  # errors.ExitCode, but 1 (a bug) and 130 (interrupted)


# ---------------------------------------------------------------- arguments that are not UTF-8


@pytest.mark.parametrize(
    ("args", "byte"),
    [
        (["input", "\udcff", "-m", "gpt2"], 1),  # was: internal error, TextInputSequence must be str
        (["context", "cat", "the cat\udcff", "the cat sat"], 8),  # the same
        (["tying", "--grad", "ab\udcff"], 3),  # the same
        (["vector", "\udcff"], 1),  # was: "control character U+DCFF"
        (["neighbors", "caf\udce9", "-k", "3"], 4),
        (["analogy", "king", "man", "wo\udcc3"], 3),
        (["positions", "\udcff"], 1),
        (["neighbors", "cat", "--among", "caf\udce9.txt"], 4),  # a path is refused too (cli.root._check_utf8)
        (["vector", "king", "-m", "fold\udce9"], 5),
        (["export", "--format", "word2vec", "-o", "v\udce9.txt"], 2),
        (["vector", "king", "--revision", "ma\udcffin"], 3),
    ],
)
def test_an_argument_that_is_not_utf8_is_refused_as_stdin_is(
    hub: FakeHub, caches: dict[str, Path], args: list[str], byte: int
) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    assert f"is not UTF-8 text (byte {byte}); give it in UTF-8" in result.stderr
    assert hub.requests == [] and not caches["cache"].exists()  # refused before anything is fetched
    doc = json.loads(run_cli(*args, "--json").stderr)["error"]
    assert doc["code"] == 2 and doc["type"] == "usage" and f"(byte {byte})" in doc["message"]


def test_the_bytes_of_a_real_command_line(hub: FakeHub) -> None:
    """In a real process: argv's byte 0xff reaches Python as U+DCFF (surrogateescape), and the message shows
    it as the byte it was."""
    proc = run_process("input", "O Brasil \udce9 gigante")  # the bytes of "é" in Latin-1
    assert proc.returncode == 2
    assert proc.stderr == (
        'gpt2emb: the argument "O Brasil \\xe9 gigante" is not UTF-8 text (byte 10); give it in UTF-8 '
        "(iconv -t UTF-8 converts a text; a file or folder whose name is not UTF-8: rename it, or link it "
        "under a UTF-8 name with ln -s)\n"
    )


def test_a_path_too_long_for_the_system_is_a_clear_refusal(hub: FakeHub, tmp_path: Path) -> None:
    long = str(tmp_path / ("x" * 5000))
    for args in (["tying", "-m", long], ["geometry", "-m", long], ["vector", "king", "-m", long]):
        result = run_cli(*args)
        assert result.exit_code in (2, 3) and "internal error" not in result.stderr, (args, result.stderr)
    result = run_cli("export", "--format", "word2vec", "-o", long)
    assert result.exit_code == 2 and "File name too long" in result.stderr, result.stderr


# ---------------------------------------------------------------- --strict stops at its first bad line


@pytest.fixture
def ranked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many vectors each matrix pass of neighbors ranks (ops.cosine_tops, counted)."""
    passes: list[int] = []
    real = ops.cosine_tops

    def counted(*args: Any, **kwargs: Any) -> Any:
        passes.append(len(args[2]))
        return real(*args, **kwargs)

    monkeypatch.setattr(ops, "cosine_tops", counted)
    return passes


def test_strict_ranks_nothing_after_a_bad_first_line(
    hub: FakeHub, stdin: Callable[[bytes], None], ranked: list[int]
) -> None:
    assert run_cli("neighbors", "cat", "-k", "1").exit_code == 0  # cached: what follows only ranks
    ranked.clear()
    stdin(b"id:99999\ncat\ndog\nking\n")
    result = run_cli("neighbors", "-", "--strict", "-k", "3")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "gpt2emb: line 1: id:99999 does not exist: token ids go from 0 to 342\n"
    assert ranked == []  # was [3]: the rest of the block ranked, then thrown away


def test_strict_ranks_only_the_lines_before_a_bad_one(
    hub: FakeHub, stdin: Callable[[bytes], None], ranked: list[int]
) -> None:
    stdin(b"cat\nid:99999\ndog\nking\n")
    result = run_cli("neighbors", "-", "--strict", "-k", "3", "--jsonl")
    assert result.exit_code == 2, (result.stdout, result.stderr, ranked)
    assert [json.loads(line)["word"] for line in result.stdout.splitlines()] == ["cat"]
    assert json.loads(result.stderr)["error"]["line"] == 2
    assert ranked == [1]  # was [3]


def test_without_strict_a_block_is_at_most_two_passes(
    hub: FakeHub, stdin: Callable[[bytes], None], ranked: list[int]
) -> None:
    stdin(b"cat\nid:99999\ndog\nid:99998\nking\n")
    result = run_cli("neighbors", "-", "-k", "3", "--jsonl")
    assert result.exit_code == 7
    assert [json.loads(line)["word"] for line in result.stdout.splitlines()] == ["cat", "dog", "king"]
    assert [json.loads(line)["error"]["line"] for line in result.stderr.splitlines()] == [2, 4]
    assert ranked == [1, 2]  # before the first failure, then the rest of the block at once


# ---------------------------------------------------------------- any command line


def _confined(path: str) -> str:
    """A path drawn for -o, --png, --among, --eval, kept inside the test's folder: relative, no way up, no ~
    (tests may run as root, and export and --png write where they are told, replacing what is there)."""
    return path if path.strip() in ("", ".") else "drawn-" + path.replace("/", "_").replace("\\", "_")


NOT_UTF8 = st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)  # argv's bytes that are not UTF-8
# any text a shell can pass: Unicode, bytes that are not UTF-8 (as Python hands them over), numbers of any
# size, ranges, options, empty and very long strings
WORD = st.one_of(
    st.text(max_size=30),
    st.text(NOT_UTF8 | st.characters(), min_size=1, max_size=8),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.tuples(st.integers(-5, 2000), st.integers(-5, 2000)).map(lambda r: f"{r[0]}-{r[1]}"),
    st.sampled_from(
        ["", " ", "-", "--", "5-2", "0-5", "-3", "id:5", "id:-1", "id:99999999999999999999",
         "<|endoftext|>", " <|endoftext|>", "king", "cat", "the cat sat", "x" * 5000, "--json", "-k",
         "--strict", "mean", "gpt2", "openai-community/gpt2", "someone/none", "word2vec", "projector", "wpe",
         "fp16", "3cosmul", "main", "~", "~nosuchuser/x", "caf\udce9", "\udcff"]
    ),
)  # fmt: skip
NUMBER = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(
        ["0", "1", "2", "3", "5", "256", "342", "343", "1023", "1024", "1e3", "1_0", " 7", "-0", ""]
    ),
)

Builder = Callable[[str, str, str], list[str]]  # (a word, another, a number) -> the arguments
PLACE = re.compile(r"\{(?:(path):)?([wvn])\}")


def builder(line: tuple[str, ...]) -> Builder:
    """A declared fuzz line's builder: {w}, {v} and {n} the drawn values, {path:w} a value kept as a path."""

    def build(w: str, v: str, n: str) -> list[str]:
        drawn = {"w": w, "v": v, "n": n}

        def put(m: re.Match[str]) -> str:
            return _confined(drawn[m.group(2)]) if m.group(1) else drawn[m.group(2)]

        return [PLACE.sub(put, part) for part in line]

    return build


# each command's lines, as its stem declares them (gpt2emb/commands/STEM.py; a group's under its name)
COMMANDS: dict[str, list[Builder]] = {}
for _command in commands.commands():
    COMMANDS.setdefault(_command.name.split()[0], []).extend(builder(line) for line in _command.fuzz)
BUILDERS = [b for builders in COMMANDS.values() for b in builders]


def test_every_command_is_fuzzed() -> None:
    assert set(COMMANDS) == {path[0] for path, _ in every_command()}  # the app's own, cache a group of them
    assert all(COMMANDS.values())  # each declares a line at least


@FUZZ
@given(
    build=st.sampled_from(BUILDERS),
    word=WORD,
    other=WORD,
    number=NUMBER,
    as_json=st.booleans(),
    lines=st.sampled_from([b"cat\nid:99999\n\xff\xfe\nking man woman\n", b"", b"\xef\xbb\xbfdog\n"]),
)
def test_any_command_line_ends_in_a_documented_exit_code(
    hub: FakeHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stdin: Callable[[bytes], None],
    build: Builder,
    word: str,
    other: str,
    number: str,
    as_json: bool,
    lines: bytes,
) -> None:
    monkeypatch.chdir(tmp_path)  # what -o and --png write stays in the test's folder
    monkeypatch.setenv("HOME", str(tmp_path))  # and so does ~
    stdin(lines)
    args = build(word, other, number) + (["--json"] if as_json else [])
    result = run_cli(*args)
    said = result.output + result.stderr
    assert result.exit_code in DOCUMENTED, (args, said[-2000:])
    assert "Traceback" not in said and "internal error" not in said, (args, said[-2000:])
