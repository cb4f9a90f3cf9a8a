"""Generated files: scripts/generate.py runs every generator of scripts/ (each one's output is checked by its
own test: test_schemas.py, test_completions.py, test_docs.py, test_figures.py)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import generate  # noqa: E402


def test_generate_runs_every_generator() -> None:
    found = {p.name for p in (ROOT / "scripts").glob("gen_*.py")}
    assert set(generate.GENERATORS) | set(generate.CALLED) | set(generate.BY_HAND) == found
    assert set(generate.CALLED.values()) <= set(generate.GENERATORS)
    for name, caller in generate.CALLED.items():
        assert f"import {name.removesuffix('.py')}" in (ROOT / "scripts" / caller).read_text()
