"""ops.py pinned where a mutation run (scripts/mutate.py) found it loose, each figure against an independent
computation: scipy's cosine distance, and float64 loops written out from the definitions (the analogy's
sums: tests/test_sums.py)."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest
from scipy.spatial import distance

from gpt2emb import measures, ops, tables
from gpt2emb.choices import Pool
from gpt2emb.queries import Query

REL = 1e-9  # float64 against float64, summed in other orders: far below any changed constant


def unit64(rows: np.ndarray) -> np.ndarray:
    w = rows.astype(np.float64)
    return np.array([r / np.linalg.norm(r) for r in w])


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


def brute_cosines(rows: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each row's cosine with v, in float64 row by row (0 for a zero row), scaled first so that no square
    under- or overflows float64 either."""
    out = np.zeros(len(rows))
    v64 = v.astype(np.float64) / np.abs(v).max()
    for i, row in enumerate(rows.astype(np.float64)):
        if row.any():
            r = row / np.abs(row).max()
            out[i] = r @ v64 / (np.linalg.norm(r) * np.linalg.norm(v64))
    return out


def extreme_table(scale: float) -> tuple[np.ndarray, np.ndarray]:
    """A query of norm `scale` (2^-70 or 2^66: outside what float32 products of two such vectors survive),
    rows of ordinary norm that point near it, and rows of the same extreme norm, one of them the query's
    own direction: in float32 the extreme rows' products with the query under- or overflow."""
    rng = np.random.default_rng(9)
    d = 16
    q = np.abs(rng.standard_normal(d)) + 0.5  # all positive: an overflow is +inf, never inf - inf
    rows = q + 0.8 * rng.standard_normal((40, d))  # cosines about 0.5 to 0.9
    rows[30:] = np.abs(rng.standard_normal((10, d))) * scale  # cosines below 0.9, extreme norm
    rows[35] = q * scale  # the best row: the query's direction
    return rows.astype(np.float32), (q * scale).astype(np.float32)


@pytest.mark.parametrize("scale", [2.0**-70, 2.0**66], ids=["tiny", "huge"])
def test_a_query_of_extreme_norm_ranks_every_row_exactly(scale: float) -> None:
    """Float32 products of two vectors of such norms underflow to 0 or overflow to inf: neither the query
    nor those rows may get a fast bound, and the ranking is the exact one."""
    rows, q = extreme_table(scale)
    norms = np.array([np.linalg.norm(r.astype(np.float64)) for r in rows], dtype=np.float32)
    exact = brute_cosines(rows, q)
    expected = sorted(range(len(rows)), key=lambda i: (-exact[i], i))[:5]
    assert expected[0] == 35
    (ranking,) = ops.cosine_rankings(rows, norms, [q])
    got = ranking.top(5)
    assert [i for i, _ in got] == expected
    assert [s for _, s in got] == pytest.approx(exact[expected], rel=REL)
    (tops,) = ops.cosine_tops(rows, norms, [q], 5, [()])
    assert [i for i, _ in tops] == expected
    ((place, score),) = ranking.ranks([35])
    assert place == 1 and score == pytest.approx(1.0, rel=REL)


# ---------------------------------------------------------------- whole tables, rows, h0: brute force


def cos64(x: np.ndarray, y: np.ndarray) -> float:
    return float(1 - distance.cosine(x.astype(np.float64), y.astype(np.float64)))


@pytest.mark.parametrize(("d", "expected"), [(2, 2 / np.pi), (3, 0.5), (4, 4 / (3 * np.pi)), (5, 3 / 8)])
def test_random_mean_abs_cosine_closed_forms(d: int, expected: float) -> None:
    """E|cos| = Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)): 2/pi, 1/2, 4/(3 pi), 3/8 for d = 2 to 5."""
    assert tables.random_mean_abs_cosine(d) == pytest.approx(expected, rel=1e-12)


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


# ---------------------------------------------------------------- rankings and tops against every row scored


def crowded_table(n: int, d: int, seed: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Random rows, a zero row, and for three queries of four a crowd of rows within 1e-6 of its direction
    (float32's fast pass cannot order them: the exact pass must) and one row equal to it."""
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, d))
    queries = [rng.standard_normal(d) for _ in range(3)]
    for q, where in zip(queries, (0, 300, 520), strict=True):  # row 0: the first a screen reads
        rows[where : where + 12] = q * rng.uniform(0.5, 2, (12, 1)) + 1e-6 * rng.standard_normal((12, d))
        rows[where + 12] = q
    rows[[0, 12]] = rows[[12, 0]]  # the first query's own direction is row 0
    rows[20] = 0.0
    queries.append(rng.standard_normal(d))  # and a query without a crowd: its best rows are far apart
    return rows.astype(np.float32), [q.astype(np.float32) for q in queries]


def brute_top(exact: np.ndarray, k: int, exclude: tuple[int, ...], allowed: np.ndarray | None) -> list[int]:
    """The k best ids by exact score, ties to the smaller id, among the rows left."""
    ids = [i for i in range(len(exact)) if i not in exclude and (allowed is None or allowed[i])]
    return sorted(ids, key=lambda i: (-exact[i], i))[:k]


@pytest.mark.parametrize("columns", [8192, 64])
@pytest.mark.parametrize("unsafe", [False, True])
def test_cosine_tops_and_rankings_are_every_row_scored(
    columns: int, unsafe: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ops, "_COLUMNS", columns)
    rows, queries = crowded_table(600, 16, seed=21)
    if unsafe:  # a row without a fast bound: lo and hi of every row, _kth_largest's groups
        rows[99] = rows[99] * np.float32(2.0**-60)
    norms = np.array([np.linalg.norm(r.astype(np.float64)) for r in rows], dtype=np.float32)
    excludes = [(12,), (312, 305), (), ()]
    allowed = np.ones(len(rows), dtype=bool)
    allowed[[5, 6, 7, 300, 301, 525]] = False
    exacts = [brute_cosines(rows, q) for q in queries]
    assert brute_top(exacts[0], 1, (), None) == [0]
    for k in (1, 5, 80):  # 80: more than a block of 64 columns holds
        for mask in (None, allowed):
            tops = ops.cosine_tops(rows, norms, queries, k, excludes, mask)
            rankings = ops.cosine_rankings(rows, norms, queries)
            for exact, e, top, ranking in zip(exacts, excludes, tops, rankings, strict=True):
                assert (ranking.lo <= exact).all() and (exact <= ranking.hi).all()
                expected = brute_top(exact, k, e, mask)
                assert [i for i, _ in top] == expected
                assert [s for _, s in top] == pytest.approx(exact[expected], rel=REL)
                assert [i for i, _ in ranking.top(k, e, mask)] == expected
    ranking = ops.cosine_rankings(rows, norms, queries)[0]
    exact = exacts[0]
    asked = [5, 10, 12, 20, 200, 10]  # one pass for them all, a repeat among them
    for i, (place, score) in zip(asked, ranking.ranks(asked), strict=True):
        assert place == int((exact > exact[i]).sum()) + 1
        assert score == pytest.approx(exact[i], rel=REL)
    for i, (place, _) in zip(asked, ranking.ranks(asked, allowed), strict=True):
        assert place == int((exact[allowed] > exact[i]).sum()) + 1
    # 512 rows: 64 groups of exactly 8 (no rows left over for a last group)
    tops = ops.cosine_tops(rows[:512], norms[:512], queries, 5, excludes)
    for scores, e, top in zip(exacts, excludes, tops, strict=True):
        assert [i for i, _ in top] == brute_top(scores[:512], 5, e, None)
    # many excluded ids: more than a block of 64 columns holds, with few asked for
    excluded = tuple(range(100, 160))
    (top,) = ops.cosine_tops(rows, norms, queries[3:], 10, [excluded])
    assert [i for i, _ in top] == brute_top(exacts[3], 10, excluded, None)
    assert ranking.top(5, allowed=np.zeros(len(rows), dtype=bool)) == []
    # nearly every row asked for: one by one, fewer than k when fewer remain
    many = ops.cosine_tops(rows[:20], norms[:20], queries[:1], 19, [(3, 4)])
    assert [i for i, _ in many[0]] == brute_top(exact[:20], 19, (3, 4), None)


# ---------------------------------------------------------------- single figures, analogy vectors, bounds


def test_cosine_cosines_and_matrices_are_scipys() -> None:
    rng = np.random.default_rng(17)
    rows = rng.standard_normal((6, 5)).astype(np.float32)
    rows[1] *= np.float32(0.01)  # a norm below 1: two such rows' norms multiply to less than 1
    rows[3] *= np.float32(0.02)
    rows[2] = 0.0
    rows[4, 1] = np.nan
    v = rng.standard_normal(5).astype(np.float32)
    assert ops.cosine(rows[0], v) == pytest.approx(cos64(rows[0], v), rel=REL)
    assert ops.cosine(rows[2], v) is None and ops.cosine(v, rows[2]) is None
    got = ops.cosines(rows, v)
    for i in (0, 1, 3, 5):
        assert got[i] == pytest.approx(cos64(rows[i], v), rel=REL)
    assert got[2] == 0.0 and np.isnan(got[4])
    matrix, norms = measures.cosine_matrix(rows)
    whole, whole_norms = measures.all_cosines(rows)
    for i in (0, 1, 3, 5):
        assert norms[i] == pytest.approx(math.hypot(*map(float, rows[i])), rel=REL)
        assert whole_norms[i] == pytest.approx(norms[i], rel=REL)
        for j in (0, 1, 3, 5):
            assert matrix[i, j] == pytest.approx(cos64(rows[i], rows[j]), rel=REL)
            assert whole[i, j] == pytest.approx(cos64(rows[i], rows[j]), rel=1e-12)
    assert np.isnan(matrix[4]).all() and np.isnan(matrix[:, 4]).all() and np.isnan(whole[4]).all()
    assert matrix[2, 0] == 0.0 and matrix[0, 2] == 0.0 and whole[2, 0] == 0.0


def test_a_mean_of_rows_near_float32s_largest_is_the_float64_mean() -> None:
    rows = np.array([[3e38, -3e38, 1.0], [3e38, -1e38, 3.0], [2e38, 1e38, 8.0]], dtype=np.float32)
    got = ops.query_vector(rows, Query(word="w", ids=(0, 1, 2), pool=Pool.mean))
    expected = [statistics.fmean(float(x) for x in rows[:, j]) for j in range(3)]
    assert got.dtype == np.float32 and got.tolist() == pytest.approx(expected, rel=1e-7)
    assert ops.query_vector(rows, Query(word="w", ids=(1, 2), pool=Pool.first)).tolist() == rows[1].tolist()


def test_a_table_of_one_row_repeated_has_no_principal_direction() -> None:
    """Every row the same: cosine 1 for every pair, and no variance for a principal direction to share."""
    rows = np.tile(np.array([[0.5, -2.0, 3.0]], dtype=np.float32), (6, 1))
    shape = tables.table_shape(rows, k=2)
    assert shape.mean_cosine == pytest.approx(1.0, rel=REL)
    assert np.isnan(shape.pc_variance).all() and shape.pc_variance.shape == (2,)


def test_slack_is_the_documented_bound() -> None:
    """3.7e-4 for d = 768, as its docstring and the analogy evaluation's integer steps rely on."""
    assert ops.slack(768) == pytest.approx(3.7e-4, rel=0.01)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_the_bounds_hold_in_one_two_and_three_dimensions(d: int) -> None:
    """The fewest dimensions: the float32 pass's error is still within the bounds of every row."""
    rng = np.random.default_rng(47 + d)
    rows = rng.standard_normal((200, d)).astype(np.float32)
    q = rng.standard_normal(d).astype(np.float32)
    norms = np.array([np.linalg.norm(r.astype(np.float64)) for r in rows], dtype=np.float32)
    (ranking,) = ops.cosine_rankings(rows, norms, [q])
    exact = brute_cosines(rows, q)
    assert (ranking.lo <= exact).all() and (exact <= ranking.hi).all()
    assert [i for i, _ in ranking.top(7)] == brute_top(exact, 7, (), None)


@pytest.mark.parametrize("size", [1e-3, 0.5, 1.0, 3.0])
def test_the_cosine_of_two_short_vectors_is_a_cosine(size: float) -> None:
    """Found loose on seed 13: the cosine of vectors whose norms multiply to 1 or less (a direction is a
    direction whatever its length); None only for a vector of zeros."""
    a, b = np.array([size, 0.0]), np.array([size, size])
    assert ops.cosine(a, b) == pytest.approx(1 / math.sqrt(2), rel=1e-12)  # 45 degrees apart
    assert ops.cosine(a, np.zeros(2)) is None


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
