"""Where each command is declared: commands/STEM.py, found by its file alone. A warm run looks its command up
here without importing a declaration (commands/ re-exports these for everything else)."""

from __future__ import annotations

import os

FOLDER = os.path.join(os.path.dirname(__file__), "commands")


def names() -> list[str]:
    """Every stem's name, from the declarations' folder (no import)."""
    return sorted(f[:-3] for f in os.listdir(FOLDER) if f.endswith(".py") and not f.startswith("_"))


def is_stem(name: str) -> bool:
    """Whether name is a stem's, by its module's file: what a run of a command looks up, importing nothing."""
    declared = name.isidentifier() and not name.startswith("_")  # commands/__init__.py declares no command
    return declared and os.path.isfile(os.path.join(FOLDER, f"{name}.py"))
