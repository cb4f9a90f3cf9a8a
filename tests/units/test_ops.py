"""ops.py: the ranking math against independent references.

The references are numpy written out by hand, scipy's cosine distance, float64 loops from the definitions,
and gensim for the analogy methods. Rows of extreme norm and crowded tables are ranked exactly."""

import math
import statistics

import numpy as np
import pytest
from gensim.models import KeyedVectors

from gpt2emb import measures, ops, sums
from gpt2emb.choices import Method, Pool
from gpt2emb.queries import Query
from oracles import REL, cos64

from conftest import run_json
from fakehub import FakeHub
from tinymodel import Tiny


def exact_ranking(scores: np.ndarray, slack: float, asked: list[int] | None = None) -> ops.Ranking:
    """A ranking whose fast scores are the exact ones blurred by +-slack; `asked` collects the rows scored
    exactly."""

    def exact(ids: np.ndarray) -> np.ndarray:
        if asked is not None:
            asked.extend(int(i) for i in ids)
        chosen: np.ndarray = scores[ids]
        return chosen

    return ops.Ranking(scores - slack, scores + slack, exact)


@pytest.mark.parametrize("slack", [0.0, 0.05, 10.0])
def test_top_k_breaks_ties_by_id_and_never_returns_excluded(slack: float) -> None:
    scores = np.array([0.5, 0.9, 0.9, 0.1, 0.7])
    ranking = exact_ranking(scores, slack)
    assert [i for i, _ in ranking.top(3)] == [1, 2, 4]
    assert ranking.top(10, exclude=(1, 4)) == [(2, 0.9), (0, 0.5), (3, 0.1)]
    assert ranking.ranks([4, 2, 3]) == [(3, 0.7), (1, 0.9), (5, 0.1)]


def test_only_rows_that_could_place_are_scored_exactly() -> None:
    scores = np.linspace(0, 1, 1000)
    asked: list[int] = []
    ranking = exact_ranking(scores, 0.001, asked)
    assert [i for i, _ in ranking.top(3)] == [999, 998, 997]
    assert set(asked) <= set(range(990, 1000))  # the fast bounds settle every other row


def test_pooling() -> None:
    wte = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(ops.query_vector(wte, Query("w", (1, 3), Pool.mean)), [6, 7, 8])
    np.testing.assert_array_equal(ops.query_vector(wte, Query("w", (1, 3), Pool.first)), [3, 4, 5])


def gensim_peer(wte: np.ndarray) -> KeyedVectors:
    kv = KeyedVectors(vector_size=wte.shape[1])
    kv.add_vectors([f"t{i}" for i in range(len(wte))], wte.astype(np.float32))
    return kv


TRIPLES = [
    ("king", "man", "woman"),
    ("cat", "dog", "kitten"),
    ("id:7", "id:40", "id:123"),
    ("id:5", "id:9", "id:2"),
]


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`")  # inside gensim's most_similar_cosmul
@pytest.mark.parametrize("method", [Method.cosadd, Method.cosmul])
@pytest.mark.parametrize("triple", TRIPLES, ids=lambda t: "-".join(t))
def test_analogy_methods_equal_gensim(
    hub: FakeHub, tiny: Tiny, method: Method, triple: tuple[str, str, str]
) -> None:
    doc = run_json("analogy", *triple, "--method", method.value, "-k", "15")
    assert doc["method"] == method.value
    kv = gensim_peer(tiny.wte)
    ids = [int(w[3:]) if w.startswith("id:") else tiny.id(w) for w in triple]
    a, b, c = (f"t{i}" for i in ids)
    if method is Method.cosadd:
        expected = kv.most_similar(positive=[a, c], negative=[b], topn=15)
    else:
        expected = kv.most_similar_cosmul(positive=[a, c], negative=[b], topn=15)
    assert [r["id"] for r in doc["results"]] == [int(key[1:]) for key, _ in expected]
    assert [r["score"] for r in doc["results"]] == pytest.approx([s for _, s in expected], abs=1e-5)


def test_add_is_the_labs_raw_arithmetic(hub: FakeHub, tiny: Tiny) -> None:
    """The sum of the raw rows, taken in float64 (where these rows' sum is exact) and rounded once to float32,
    so that it does not depend on the order of its terms (float32's a - b + c rounds twice)."""
    doc = run_json("analogy", "cat", "dog", "kitten", "--method", "add", "-k", "5")
    w64 = tiny.wte.astype(np.float64)
    v = (w64[tiny.id("cat")] - w64[tiny.id("dog")] + w64[tiny.id("kitten")]).astype(np.float32)
    w = tiny.wte.astype(np.float64)
    scores = w @ v / (np.linalg.norm(w, axis=1) * np.linalg.norm(v.astype(np.float64)))
    scores[[tiny.id("cat"), tiny.id("dog"), tiny.id("kitten")]] = -np.inf
    best = np.argsort(-scores, kind="stable")[:5]
    assert [r["id"] for r in doc["results"]] == list(best)
    assert [r["score"] for r in doc["results"]] == pytest.approx(list(scores[best]), abs=1e-12)


def test_the_fast_bounds_hold_the_exact_scores_for_hard_rows() -> None:
    """lo <= exact <= hi for rows that cancel, rows of extreme scale, rows of NaN and inf, at d = 1600,
    for plain cosines and for 3cosmul; and the top k is the exact one."""
    rng = np.random.default_rng(11)
    d = 1600
    base = rng.standard_normal((400, d)).astype(np.float32)
    q = rng.standard_normal(d).astype(np.float32)
    # close calls: cosines within 1e-8 of each other, below float32's resolution near 1
    base[:50] = (q + 1e-4 * rng.standard_normal((50, d))).astype(np.float32)
    base[50:60] *= np.float32(1e-22)  # squares underflow float32
    base[60] = q * np.float32(1e37)  # its norm overflows float32 (inf): no fast score, yet it is the best row
    base[61:70] *= np.float32(1e19)  # squares overflow float32
    base[70] = np.nan
    base[71, 0] = np.inf
    base[72] = 0.0
    with np.errstate(over="ignore"):  # as the cache stores it: the norm of row 60 is inf in float32
        norms = np.linalg.norm(base.astype(np.float64), axis=1).astype(np.float32)
    (ranking,) = ops.cosine_rankings(base, norms, [q])
    lo, hi = ranking.lo, ranking.hi
    exact = ranking.scores(np.arange(len(base)))
    finite = np.isfinite(exact)
    assert ((lo[finite] <= exact[finite]) & (exact[finite] <= hi[finite])).all()
    k = 60
    best = ranking.top(k)
    expected = sorted(np.flatnonzero(finite), key=lambda i: (-exact[i], i))[:k]
    assert [i for i, _ in best] == expected and len(best) == k and best[0][0] == 60
    tiny = base[50:60] * np.float32(1e-3)  # query and rows tiny: their products underflow float32
    (small,) = ops.cosine_rankings(
        tiny, np.linalg.norm(tiny.astype(np.float64), axis=1).astype(np.float32), [q * np.float32(1e-22)]
    )
    exact_small = small.scores(np.arange(10))
    assert [i for i, _ in small.top(3)] == sorted(range(10), key=lambda i: (-exact_small[i], i))[:3]
    a, b = base[100], base[101]
    abq = [(1, a), (-1, b), (1, q)]
    (cosmul,) = sums.cosmul_rankings(base, [abq])
    lo, hi = cosmul.lo, cosmul.hi
    exact = cosmul.scores(np.arange(len(base)))
    finite = np.isfinite(exact)
    assert ((lo[finite] <= exact[finite]) & (exact[finite] <= hi[finite])).all()
    assert len(cosmul.top(k)) == k


def test_a_broken_row_never_hides_the_others() -> None:
    wte = np.eye(6, 4, dtype=np.float32)
    wte[3] = [1.0, 1.0, 0.0, 0.0]
    wte[4] = [np.inf, 0.0, 0.0, 0.0]
    wte[5] = np.nan
    norms = np.linalg.norm(wte.astype(np.float64), axis=1).astype(np.float32)
    (ranking,) = ops.cosine_rankings(wte, norms, [np.array([1.0, 0.0, 0.0, 0.0], np.float32)])
    best = ranking.top(1)
    assert best == [(0, 1.0)]  # not emptied by the rows whose fast score is NaN
    ids = [i for i, _ in ranking.top(6)]
    assert ids[:4] == [0, 3, 1, 2] and sorted(ids[4:]) == [4, 5]  # broken rows last, scored NaN
    assert ranking.ranks([3])[0][0] == 2


@pytest.mark.parametrize(("broken", "columns"), [(False, 512), (False, 4096), (True, 4096)])
def test_a_block_of_tops_is_each_ranking_s_top(
    broken: bool, columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways of a block: every norm safe (the fast path: screened a few columns at a time, no lo and hi
    made), and some rows without a fast bound (underflowing squares, NaN): the same ids and exact scores as
    each ranking's top, bit for bit, whether the rows come in one product or in several."""
    monkeypatch.setattr(ops, "_COLUMNS", columns)
    rng = np.random.default_rng(7)
    d = 48
    wte = rng.standard_normal((3000, d)).astype(np.float32)
    wte[100:140] = wte[7]  # ties: the same row many times, ordered by id
    wte[301] = 0.0
    wte[400:500] = wte[9] + 1e-4 * rng.standard_normal((100, d)).astype(np.float32)  # closer than float32
    if broken:
        wte[200:210] *= np.float32(1e-22)  # squares underflow float32: no fast bound
        wte[300] = np.nan
    norms = np.linalg.norm(wte.astype(np.float64), axis=1).astype(np.float32)
    vectors = [wte[7].copy(), rng.standard_normal(d).astype(np.float32), wte[5] * np.float32(1e-3), wte[9]]
    if broken:
        vectors[2] = wte[5] * np.float32(1e-22)  # a query without a fast bound
    excludes: list[tuple[int, ...]] = [(7, 100, 101), (), (5,), (9, 9, 2999)]
    allowed = np.ones(3000, dtype=bool)
    allowed[::3] = False  # as --restrict, --among or --whole-words would
    allowed[[5, 9, 104]] = True
    rankings = ops.cosine_rankings(wte, norms, vectors)
    for k in (1, 10, 60):
        for mask in (None, allowed):
            expected = [r.top(k, e, mask) for r, e in zip(rankings, excludes, strict=True)]
            assert ops.cosine_tops(wte, norms, vectors, k, excludes, mask) == expected
    assert [i for i, _ in ops.cosine_tops(wte, norms, vectors, 5, excludes)[0]] == [102, 103, 104, 105, 106]
    assert [i for i, _ in ops.cosine_tops(wte, norms, vectors, 3, excludes, allowed)[0]] == [103, 104, 106]
    assert ops.cosine_tops(wte, norms, vectors[:1], 2990, [()]) == [rankings[0].top(2990)]  # nearly all rows
    every = ops.cosine_tops(wte, norms, vectors[3:], 2999, excludes[3:])  # a broken row last, scored NaN
    assert repr(every) == repr([rankings[3].top(2999, excludes[3])])


def test_a_cosine_never_passes_one() -> None:
    # rows whose cosine with themselves rounds past 1 in float64: the figures shown are 1 (arccos takes them)
    rows = np.random.default_rng(3).standard_normal((400, 64)).astype(np.float32)
    r64 = rows.astype(np.float64)
    raw = np.add.reduce(r64 * r64, axis=1) / (np.sqrt(np.add.reduce(r64 * r64, axis=1)) ** 2)
    past = np.flatnonzero(raw > 1.0)
    assert len(past) > 0  # the rounding this test is about happens for these rows
    i = int(past[0])
    assert ops.cosines(rows, rows[i])[i] == 1.0
    assert ops.cosine(rows[i], rows[i]) == 1.0
    assert ops.cosine(rows[i], -rows[i]) == -1.0
    matrix, _ = measures.cosine_matrix(rows[past])
    assert np.all(np.abs(matrix) <= 1.0) and np.all(matrix.diagonal() == 1.0)
    assert np.all(np.abs(measures.all_cosines(rows)[0]) <= 1.0)
    assert np.all(measures.paired_cosines(rows[past], rows[past]) == 1.0)
    assert np.isnan(ops.cosines(np.full((1, 64), np.nan, dtype=np.float32), rows[i])[0])  # NaN stays NaN


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


def test_no_ids_have_no_scores() -> None:
    ranking = ops.cosine_rankings(np.eye(3, dtype=np.float32), np.ones(3, dtype=np.float32), [np.ones(3)])[0]
    assert ranking.scores(np.array([], dtype=np.int64)).shape == (0,)
    assert ranking.scores(np.array([2, 0])).tolist() == pytest.approx([1 / np.sqrt(3)] * 2)


def test_a_zero_row_is_bounded_around_its_exact_0() -> None:
    """A zero row scores 0 exactly in the fast pass, so it keeps a bound: it is never scored again."""
    wte = np.array([[1.0, 0.0], [0.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    norms = np.linalg.norm(wte, axis=1).astype(np.float32)
    (ranking,) = ops.cosine_rankings(wte, norms, [np.array([1.0, 0.0])])
    # the bound is the fast pass's pad around 0, a few times slack(2) = 2e-6 at most; not every number
    assert -1e-5 < ranking.lo[1] < 0 < ranking.hi[1] < 1e-5
