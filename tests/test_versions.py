"""The declared versions: the constraints of .ci/run's lowest-versions run, derived from pyproject.toml."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from lowest_versions import constraints, dependencies, floors  # noqa: E402


def test_every_runtime_dependency_but_torch_is_pinned_at_its_floor() -> None:
    declared = dependencies()
    pinned = floors(declared)
    names = {d.split(">")[0].split("<")[0].split("=")[0].strip().lower() for d in declared}
    assert set(map(str.lower, pinned)) == names - {"torch"}
    assert pinned["transformers"] == "5.4" and pinned["huggingface_hub"] == "1.27"  # as pyproject says
    lines = constraints(declared).splitlines()
    assert lines[1:] == [f"{name}=={version}" for name, version in pinned.items()]


@pytest.mark.parametrize(
    "requirement, floor",
    [
        ("numpy>=1.26", "1.26"),
        ("typer>=0.27,<0.30", "0.27"),
        ("rich >= 14.3.4", "14.3.4"),
        ("a[x]>=2 ; python_version>'3'", "2"),
    ],
)
def test_a_floor_is_read_from_any_spelling(requirement: str, floor: str) -> None:
    assert list(floors([requirement]).values()) == [floor]


@pytest.mark.parametrize("requirement", ["numpy", "numpy<3", "numpy==2.0"])
def test_a_dependency_without_a_floor_is_refused(requirement: str) -> None:
    with pytest.raises(ValueError, match="declares no floor"):
        floors([requirement])


def test_ci_runs_the_suite_again_at_the_floors() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python scripts/lowest_versions.py" in ci and "-c .venv-lowest/constraints.txt" in ci
    assert ci.rstrip().endswith("pytest -p no:cacheprovider")
