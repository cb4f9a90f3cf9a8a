"""tables.py: the geometry of whole tables and of the model's input, against independent computations.

The oracles are scipy's cosine distance and float64 loops written out from the definitions: a table's mean
cosine and shape, the cosines across two tables, and h0's rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import distance

from gpt2emb import measures, tables
from oracles import REL, cos64


def test_the_mean_cosine_of_two_rows_is_their_cosine() -> None:
    rng = np.random.default_rng(3)
    rows = np.zeros((5, 8), dtype=np.float32)
    rows[1], rows[3] = rng.standard_normal((2, 8))
    shape = tables.table_shape(rows)
    assert shape.zero_rows == 3
    r1, r3 = rows[1].astype(np.float64), rows[3].astype(np.float64)  # scipy computes in its inputs' dtype
    assert shape.mean_cosine == pytest.approx(1 - distance.cosine(r1, r3), rel=REL)
    rows[3] = 0.0  # one direction left: no pair
    assert tables.table_shape(rows).mean_cosine is None


@pytest.mark.parametrize(("d", "expected"), [(2, 2 / np.pi), (3, 0.5), (4, 4 / (3 * np.pi)), (5, 3 / 8)])
def test_random_mean_abs_cosine_closed_forms(d: int, expected: float) -> None:
    """E|cos| = Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)): 2/pi, 1/2, 4/(3 pi), 3/8 for d = 2 to 5."""
    assert tables.random_mean_abs_cosine(d) == pytest.approx(expected, rel=1e-12)


def layer_norm(row: list[float], weight: list[float], bias: list[float], eps: float) -> list[float]:
    mean = sum(row) / len(row)
    var = sum((x - mean) ** 2 for x in row) / len(row)
    return [(x - mean) / math.sqrt(var + eps) * w + b for x, w, b in zip(row, weight, bias, strict=True)]


@pytest.mark.parametrize("eps", [1e-5, 1e-1])
def test_input_rows_by_the_definitions(eps: float) -> None:
    rng = np.random.default_rng(8)
    wte = rng.standard_normal((10, 6)).astype(np.float32) * 0.1
    wpe = rng.standard_normal((5, 6)).astype(np.float32) * 0.1
    wpe[1] = 0.0  # no direction: its cosine is NaN
    type_row = rng.standard_normal(6).astype(np.float32) * 0.1
    norm = rng.standard_normal((2, 6)).astype(np.float32)
    ids = (3, 7, 3)
    got = (
        tables.input_rows(wte, wpe, ids, type_row, norm, eps)
        if eps != 1e-5
        else tables.input_rows(wte, wpe, ids, type_row, norm)
    )
    for pos, i in enumerate(ids):
        total = wte[i] + wpe[pos] + type_row  # float32, as the model adds
        h0 = layer_norm(
            [float(x) for x in total], [float(x) for x in norm[0]], [float(x) for x in norm[1]], eps
        )
        assert got.h0[pos] == pytest.approx(np.array(h0), rel=1e-6, abs=1e-6)
        assert got.wte_norm[pos] == pytest.approx(math.hypot(*map(float, wte[i])), rel=REL)
        assert got.wpe_norm is not None and got.wpe_norm[pos] == pytest.approx(
            math.hypot(*map(float, wpe[pos]))
        )
        assert got.sum_norm[pos] == pytest.approx(math.hypot(*map(float, total)), rel=REL)
        assert got.h0_norm[pos] == pytest.approx(math.hypot(*map(float, got.h0[pos])), rel=REL)
        assert got.cos_wte_wpe is not None
        if pos == 1:
            assert np.isnan(got.cos_wte_wpe[pos])
        else:
            assert got.cos_wte_wpe[pos] == pytest.approx(cos64(wte[i], wpe[pos]), rel=REL)
    bare = tables.input_rows(wte, None, ids)  # no position table, no norm: h0 is the token rows
    assert np.array_equal(bare.h0, wte[list(ids)]) and bare.wpe_norm is None and bare.cos_wte_wpe is None
    assert bare.sum_norm == pytest.approx(bare.wte_norm, rel=REL)


def pairs_mean_cosine(rows: np.ndarray) -> float:
    live = [r for r in rows if r.any()]
    cs = [cos64(x, y) for i, x in enumerate(live) for j, y in enumerate(live) if i != j]
    return float(np.mean(cs))


@pytest.mark.parametrize("block", [None, 12])
def test_table_shape_by_pairs_and_singular_values(block: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if block:  # 12 values a block: two rows of 6 at a time
        monkeypatch.setattr(measures, "_BLOCK_VALUES", block)
    rng = np.random.default_rng(12)
    rows = (rng.standard_normal((9, 6)) + np.array([2.0, 0, 0, 0, 0, 1.0])).astype(np.float32)
    rows[4] = 0.0
    shape = tables.table_shape(rows, k=4)
    assert shape.zero_rows == 1 and shape.broken_rows == 0
    assert shape.norms == pytest.approx([math.hypot(*map(float, r)) for r in rows], rel=REL)
    assert shape.mean_cosine == pytest.approx(pairs_mean_cosine(rows), rel=1e-9)
    x = rows.astype(np.float64)
    s = np.linalg.svd(x - x.mean(axis=0), compute_uv=False)
    assert shape.pc_variance == pytest.approx((s**2 / (s**2).sum())[:4], rel=1e-9)
    rows[2, 1] = np.inf
    broken = tables.table_shape(rows, k=4)
    assert broken.broken_rows == 1 and broken.mean_cosine is None and np.isnan(broken.pc_variance).all()


def brute_cross(a: np.ndarray, b: np.ndarray) -> tuple[float, float, tuple[int, int], float]:
    found = [
        (abs(cos64(x, y)), i, j, cos64(x, y))
        for i, x in enumerate(a)
        if x.any()
        for j, y in enumerate(b)
        if y.any()
    ]
    best = max(found, key=lambda t: (t[0], -t[1], -t[2]))
    return float(np.mean([t[0] for t in found])), best[0], (best[1], best[2]), best[3]


@pytest.mark.parametrize("block", [None, 10])
def test_cross_cosines_by_every_pair(block: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if block:
        monkeypatch.setattr(measures, "_BLOCK_VALUES", block)
    rng = np.random.default_rng(13)
    a = rng.standard_normal((12, 5)).astype(np.float32)
    b = rng.standard_normal((7, 5)).astype(np.float32)
    a[3] = 0.0
    b[2] = 0.0
    a[5] *= np.float32(2.0**-60)  # outside _SAFE: a unit row before its product
    a[8] *= np.float32(2.0**50)
    a[10] = -b[4] * np.float32(2.0**-60)  # the largest |cosine|, -1, on a tiny row
    near_b0 = b[0] + 0.3 * b[1]
    a[11] = near_b0 / np.abs(near_b0).max() * np.float32(3e38)  # near float32's largest: products past it
    got = tables.cross_cosines(a, b)
    mean, top, where, signed = brute_cross(a, b)
    assert got.pairs == 11 * 6
    assert got.mean_abs == pytest.approx(mean, rel=1e-5)  # float32 products, summed in float64
    assert got.argmax == where
    assert got.max_abs == pytest.approx(top, rel=REL)
    assert got.max_cosine == pytest.approx(signed, rel=REL)
    assert where == (10, 4)
    a[1, 0] = np.nan
    assert tables.cross_cosines(a, b) == tables.CrossCosines(66, None, None, None, None)
    assert tables.cross_cosines(np.zeros((3, 5), np.float32), b).pairs == 0


def test_a_table_of_one_row_repeated_has_no_principal_direction() -> None:
    """Every row the same: cosine 1 for every pair, and no variance for a principal direction to share."""
    rows = np.tile(np.array([[0.5, -2.0, 3.0]], dtype=np.float32), (6, 1))
    shape = tables.table_shape(rows, k=2)
    assert shape.mean_cosine == pytest.approx(1.0, rel=REL)
    assert np.isnan(shape.pc_variance).all() and shape.pc_variance.shape == (2,)
