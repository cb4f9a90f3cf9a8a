"""The lowest versions pyproject.toml declares, as pip constraints: each runtime dependency at its floor.

    python scripts/lowest_versions.py > lowest.txt
    pip install torch==2.13.0 -c lowest.txt -e ".[test]"     # what .ci/run's second run installs

torch is left out by name: PyPI's Linux wheel of its floor is a multi-GB CUDA build, so its floor is declared
but untested, and the tests run on the README's pin. Every other dependency must declare a floor (`>=`).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# PyPI's Linux torch at its floor is a multi-GB CUDA build; the tests run on the README's pin
UNTESTED = {"torch"}
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)")
FLOOR = re.compile(r">=\s*([0-9][0-9A-Za-z.]*)")


def dependencies(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    with pyproject.open("rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def floors(requirements: list[str]) -> dict[str, str]:
    """Each requirement's name and its floor, but torch's; a requirement with no floor is an error."""
    found: dict[str, str] = {}
    for requirement in requirements:
        m = REQUIREMENT.match(requirement)
        if m is None:
            raise ValueError(f"cannot read the requirement {requirement!r}")
        name, spec = m.group(1), m.group(2)
        if name.lower() in UNTESTED:
            continue
        floor = FLOOR.search(spec)
        if floor is None:
            raise ValueError(f"{name} declares no floor (>=): its lowest version cannot be tested")
        found[name] = floor.group(1)
    return found


def constraints(requirements: list[str]) -> str:
    head = "# each runtime dependency at the floor pyproject.toml declares (scripts/lowest_versions.py)"
    return "\n".join([head, *(f"{name}=={version}" for name, version in floors(requirements).items())]) + "\n"


if __name__ == "__main__":
    sys.stdout.write(constraints(dependencies()))
