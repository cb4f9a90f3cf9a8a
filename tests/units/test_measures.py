"""measures.py: the measures of rows, each against an independent computation.

The oracles are float64 loops written out from the definitions and numpy's eigenvectors: block means,
principal components, a vector's statistics, means that leave out what is not finite, and sampled rows."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

from gpt2emb import measures
from oracles import REL


def test_block_means_by_loops() -> None:
    m = np.arange(49, dtype=np.float64).reshape(7, 7) ** 1.5
    edges = [0, 2, 5, 7]  # 7 rows in 3 cells: linspace 0, 2.33, 4.67, 7 rounded
    expected = [
        [m[a:b, c:e].mean() for c, e in itertools.pairwise(edges)] for a, b in itertools.pairwise(edges)
    ]
    assert measures.block_means(m, 3) == pytest.approx(np.array(expected), rel=REL)


def test_principal_components_are_the_covariance_eigenvectors() -> None:
    rng = np.random.default_rng(4)
    rows = rng.standard_normal((30, 5)) * [5.0, 3.0, 2.0, 1.0, 0.5]
    rows[7] = np.nan
    got = measures.principal_components(rows, 3)
    assert np.isnan(got[7]).all() and np.isfinite(np.delete(got, 7, axis=0)).all()
    x = np.delete(rows, 7, axis=0)
    centred = x - x.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    expected = centred @ vectors[:, ::-1][:, :3]
    assert np.abs(np.delete(got, 7, axis=0)) == pytest.approx(np.abs(expected), rel=1e-9, abs=1e-9)
    few = measures.principal_components(
        rows[:3], 5
    )  # three rows: three singular values (one 0), the rest NaN
    assert np.isfinite(few[:, :3]).all() and np.isnan(few[:, 3:]).all()
    assert few[:, 2] == pytest.approx(0.0, abs=1e-9)


def test_vector_stats_by_the_definitions() -> None:
    v = np.array([3.0, -4.0, 12.0, 0.5], dtype=np.float32)
    values = [float(x) for x in v]
    got = measures.vector_stats(v)
    assert got["norm"] == pytest.approx(math.hypot(*values), rel=REL)
    assert got["mean"] == pytest.approx(statistics.fmean(values), rel=REL)
    assert got["std"] == pytest.approx(statistics.pstdev(values), rel=REL)
    assert (got["min"], got["max"]) == (-4.0, 12.0)


def test_mean_defined_leaves_out_what_is_not_finite() -> None:
    assert measures.mean_defined(np.array([1.0, np.nan, 2.0, np.inf, 6.0])) == pytest.approx(3.0)
    assert measures.mean_defined(np.array([np.nan])) is None


def test_other_rows_are_other_rows_and_each_other_row_comes() -> None:
    ids = np.zeros(300, dtype=np.int64)
    got = measures.other_rows(ids, 3, seed=1)
    assert set(got.tolist()) == {1, 2}  # never itself, and both others, in range
    got = measures.other_rows(np.arange(300) % 7, 7, seed=2)
    assert (got != np.arange(300) % 7).all() and got.min() >= 0 and got.max() <= 6


def test_sample_runs_are_runs_apart_in_order() -> None:
    runs = measures.sample_runs(1000, 64, 8, seed=3)
    assert len(runs) == 8 and all(len(r) == 8 and r.start % 8 == 0 for r in runs)
    starts = [r.start for r in runs]
    assert starts == sorted(starts) and len(set(starts)) == 8 and runs[-1].stop <= 1000
    every = measures.sample_runs(24, 24, 4, seed=0)  # all the runs there are: the whole table
    assert [list(r) for r in every] == [list(range(s, s + 4)) for s in range(0, 24, 4)]


def test_principal_components_of_rows_of_fewer_numbers_than_asked() -> None:
    """Found loose on seed 13: more components asked for than the rows have numbers (k > d, with more rows
    than numbers): the d that there are, each row's projection, and NaN past them."""
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((12, 2)) * [3.0, 1.0]
    got = measures.principal_components(rows, 3)
    assert got.shape == (12, 3) and np.isnan(got[:, 2]).all()
    centred = rows - rows.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    expected = centred @ vectors[:, ::-1]
    assert np.abs(got[:, :2]) == pytest.approx(np.abs(expected), rel=1e-9, abs=1e-9)
