"""The JSON Schemas of what the commands print (gpt2emb/schemas/, written by scripts/gen_schemas.py): their
index, and the schema of one command's output in one mode. Reads files only: no numpy."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from gpt2emb.errors import UsageError

DEFAULT_MODE = "json"


def text(name: str) -> str:
    """A shipped schema file's text, as scripts/gen_schemas.py wrote it."""
    return (resources.files("gpt2emb") / "schemas" / name).read_text(encoding="utf-8")


def index() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(text("index.json"))
    return found


def schema(words: list[str], mode: str | None = None) -> str:
    """The text of the schema of `gpt2emb WORDS... --json` in this mode (json when None); no words: the index.
    error and note name the objects written on stderr."""
    if not words:
        if mode is not None:
            raise UsageError(
                "--mode picks a mode of a command: give the command, as in: schema neighbors --mode jsonl"
            )
        return text("index.json")
    name = " ".join(words)
    found = index()
    commands, stderr = found["commands"], found["stderr"]
    if name in stderr:
        if mode is not None:
            raise UsageError(f"{name} (a line on stderr) has one schema: give no --mode")
        return text(stderr[name]["schema"])
    modes = commands.get(name)
    if modes is None:
        within = [c for c in commands if c.startswith(f"{name} ")]
        if within:
            raise UsageError(f"{name} is a group: its schemas are those of {', '.join(within)}")
        raise UsageError(
            f"{name!r} is not a command that prints JSON; give one of {', '.join(commands)} (or error, note: "
            "the lines on stderr)"
        )
    entry = modes.get(mode or DEFAULT_MODE)
    if entry is None:
        raise UsageError(f"{name} has no mode {mode!r}; its modes: {', '.join(modes)}")
    return text(entry["schema"])


def names() -> list[str]:
    """What `schema` takes as COMMAND: each command that prints JSON, then stderr's objects."""
    found = index()
    return [*found["commands"], *found["stderr"]]


def modes(words: list[str]) -> list[str]:
    """The modes of a command (none for an unknown one)."""
    return list(index()["commands"].get(" ".join(words), {}))
