"""Checks every family's tests share: the same commands, oracles computed from the fixture's own rows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from conftest import run_cli, run_json


def unit(rows: np.ndarray) -> np.ndarray:
    r = rows.astype(np.float64)
    return np.asarray(r / np.linalg.norm(r, axis=1, keepdims=True))


def geometry_similarity_vector(
    model: str, wte: np.ndarray, positions: np.ndarray, id_of: Callable[[str], int]
) -> None:
    """geometry's wpe norms (positions: the usable rows), similarity's matrix and vector's row against the
    fixture's tables, and each command's table."""
    geo = run_json("geometry", "-m", model)
    assert geo["wpe"]["rows"] == len(positions) and geo["wte"]["rows"] == len(wte)
    norms = np.linalg.norm(positions.astype(np.float64), axis=1)
    assert geo["wpe"]["norm"]["mean"] == pytest.approx(norms.mean(), rel=1e-6)
    sim = run_json("similarity", "cat", "cats", "dog", "-m", model)
    u = unit(wte[[id_of("cat"), id_of("cats"), id_of("dog")]])
    np.testing.assert_allclose(np.array(sim["matrix"]), u @ u.T, atol=1e-6)
    vec = run_json("vector", "cat", "--full", "-m", model)
    np.testing.assert_allclose(vec["items"][0]["vector"], wte[id_of("cat")], rtol=1e-6)
    for args in (["geometry"], ["similarity", "cat", "dog"], ["vector", "cat"]):
        assert run_cli(*args, "-m", model).exit_code == 0
