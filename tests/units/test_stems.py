"""stems.py: a command's stem found by its declaration's file, as a warm run looks it up."""

from __future__ import annotations

from pathlib import Path

from gpt2emb import commands, stems

from conftest import run_cli


def test_the_stems_are_the_declarations_files() -> None:
    files = sorted(p.stem for p in Path(stems.FOLDER).glob("*.py") if p.stem != "__init__")
    assert stems.names() == files and "neighbors" in files and "text" in files
    assert commands.names is stems.names and commands.is_stem is stems.is_stem  # said once


def test_a_stem_is_a_declarations_name_and_nothing_else() -> None:
    assert stems.is_stem("neighbors") and stems.is_stem("text")
    for name in ("models", "input", "nosuch", "", "__init__", "_x", "../neighbors", "neighbors.py", "cli"):
        assert not stems.is_stem(name), name


def test_the_packages_own_file_is_no_command() -> None:
    """`gpt2emb __init__` once made cli/__init__.py's app a command group (a warning from typer)."""
    result = run_cli("__init__")
    assert result.exit_code == 2 and "No such command '__init__'" in result.stderr
    assert "Warning" not in result.stderr
