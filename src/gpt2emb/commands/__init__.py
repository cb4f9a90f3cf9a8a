"""Each command declared once, in its stem: commands/STEM.py holds its `STEM` record (its commands, what each
shows, their JSON modes and warm benchmark rows, the handle's methods and their examples, its parameters'
checks). The app's command list, the handle, the schemas' index, docs/index.md, bench/warm.py and the tests
read these records; nothing lists the stems. Plain data, free of every import but the standard library's:
--help reads them all."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from gpt2emb.stems import FOLDER, is_stem, names

__all__ = ["FOLDER", "is_stem", "names"]  # said once, in stems.py: a warm run reads them there

# a command's JSON modes, as `schema COMMAND --mode MODE` names them
JSON, JSONL, SIDE, STDIN, EVAL = "json", "jsonl", "side-by-side", "stdin", "eval"
EVAL_SIDE = "eval-side-by-side"  # --eval with -m given more than once


class Command(NamedTuple):
    """One command, as typed after gpt2emb (a group's own: `cache list`)."""

    name: str
    shows: str = ""  # its line in docs/index.md (a command the top level lists); a group's own: ""
    modes: Mapping[
        str, tuple[str, str]
    ] = {}  # its JSON: mode -> (result class, the command line printing it)
    # command lines that the arguments fuzz (tests/test_args_fuzz.py) draws: {w} and {v} a word, {n} a
    # number, {path:w} a word as a path kept in the test's folder
    fuzz: tuple[tuple[str, ...], ...] = ()
    warm: tuple[str, ...] = ()  # bench/warm.py's row, the command line timed warm ({out}: a file it writes)
    floor: bool = False  # warm is held against the floor, gensim and the lab (issue 30's limits)


class Method(NamedTuple):
    """What the Python handle offers of a stem: a method of gpt2emb.open(...) or a function of gpt2emb."""

    name: str
    example: Mapping[str, Any]  # a good value of every parameter, in order (the contract's fuzz varies one)
    same_as: tuple[str, ...] = ()  # the command line whose --json the example answers (none: not compared)
    module_level: bool = False  # gpt2emb.NAME (needs no model opened), not a method of the handle
    # the method itself is written in handle.py, typed, where mypy and a notebook see it


class Stem(NamedTuple):
    """A stem's declaration: commands/STEM.py's `STEM`."""

    place: int  # where `gpt2emb --help` lists its commands: lower first
    commands: tuple[Command, ...]
    handle: tuple[Method, ...] = ()
    # parameter names that contract.CHECKS lacks, each with the name of the contract's check it takes
    # (flag, count, maybe_count, text, maybe_text, path, maybe_path)
    checks: Mapping[str, str] = {}


def stem(name: str) -> Stem:
    declared: Stem = importlib.import_module(f"{__name__}.{name}").STEM
    return declared


def declared() -> dict[str, Stem]:
    """Every stem's declaration by name, in --help's order."""
    found = {name: stem(name) for name in names()}
    return dict(sorted(found.items(), key=lambda kv: (kv[1].place, kv[0])))


def stem_of(command: str) -> str | None:
    """The stem that holds a command typed at the top level: the stem of its name, or the one declaring it."""
    if is_stem(command):
        return command
    for name, declaration in declared().items():
        if any(c.name == command for c in declaration.commands):
            return name
    return None


def commands() -> list[Command]:
    """Every command, in --help's order (a group's own after it)."""
    return [c for declaration in declared().values() for c in declaration.commands]


def methods() -> list[Method]:
    """Everything the handle offers, stem by stem."""
    return [m for declaration in declared().values() for m in declaration.handle]


def checks() -> dict[str, str]:
    """The parameter checks the stems declare, by parameter name."""
    return {n: c for declaration in declared().values() for n, c in declaration.checks.items()}
