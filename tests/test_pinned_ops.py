"""ops.py pinned where a mutation run (scripts/mutate.py) found it loose, each figure against an independent
computation: gensim in float64 (so that parity is tight enough to see 3cosmul's epsilon), scipy's cosine
distance, and float64 loops written out from the definitions."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models import KeyedVectors
from scipy.spatial import distance

from gpt2emb import ops
from gpt2emb.choices import Method

REL = 1e-9  # float64 against float64, summed in other orders: far below any changed constant


def unit64(rows: np.ndarray) -> np.ndarray:
    w = rows.astype(np.float64)
    return np.array([r / np.linalg.norm(r) for r in w])


def gensim64(wte: np.ndarray) -> KeyedVectors:
    """gensim over the same numbers widened to float64: it computes in its vectors' dtype."""
    kv = KeyedVectors(vector_size=wte.shape[1], dtype=np.float64)
    kv.add_vectors([f"t{i}" for i in range(len(wte))], wte.astype(np.float64))
    return kv


def near_opposite(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, int, int, int]:
    """A table where most rows point almost away from row b: (1 + cos(x, b)) / 2 is about 1e-3 for them,
    so 3cosmul's epsilon of 1e-6 moves their scores by about 1e-3 of their value."""
    wte = rng.standard_normal((n, d)).astype(np.float32)
    a, b, c = 0, 1, 2
    scale = np.linalg.norm(wte[b]) / np.sqrt(d)
    wte[3 : n - 8] = -wte[b] + 0.05 * scale * rng.standard_normal((n - 11, d))
    return wte, a, b, c


def cosmul_loop(wte: np.ndarray, a: int, b: int, c: int, eps: float = 1e-6) -> np.ndarray:
    """Levy and Goldberg's 3cosmul with gensim's epsilon, one row at a time."""
    unit = unit64(wte)
    shifted = [(1 + unit @ unit[i]) / 2 for i in (a, b, c)]
    return np.array([shifted[0][x] * shifted[2][x] / (shifted[1][x] + eps) for x in range(len(wte))])


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`")  # inside gensim's most_similar_cosmul
def test_3cosmul_equals_gensim_where_its_epsilon_counts() -> None:
    wte, a, b, c = near_opposite(np.random.default_rng(5), 64, 16)
    norms = np.linalg.norm(wte.astype(np.float64), axis=1).astype(np.float32)
    rankings = ops.cosine_rankings(wte, norms, ops.analogy_vectors(wte[a], wte[b], wte[c], Method.cosmul))
    ranking = ops.analogy_of(rankings, Method.cosmul)
    got = ranking.top(20, exclude=(a, b, c))
    expected = gensim64(wte).most_similar_cosmul(positive=[f"t{a}", f"t{c}"], negative=[f"t{b}"], topn=20)
    assert [i for i, _ in got] == [int(key[1:]) for key, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=REL)
    loop = cosmul_loop(wte, a, b, c)
    assert ranking.scores(np.arange(len(wte))) == pytest.approx(loop, rel=REL)
    # the table is one where the epsilon shows: twice as large, and the top scores move by far more than REL
    top = [i for i, _ in got]
    assert cosmul_loop(wte, a, b, c, eps=2e-6)[top] != pytest.approx(loop[top], rel=1e-4)


def test_the_mean_cosine_of_two_rows_is_their_cosine() -> None:
    rng = np.random.default_rng(3)
    rows = np.zeros((5, 8), dtype=np.float32)
    rows[1], rows[3] = rng.standard_normal((2, 8))
    shape = ops.table_shape(rows)
    assert shape.zero_rows == 3
    r1, r3 = rows[1].astype(np.float64), rows[3].astype(np.float64)  # scipy computes in its inputs' dtype
    assert shape.mean_cosine == pytest.approx(1 - distance.cosine(r1, r3), rel=REL)
    rows[3] = 0.0  # one direction left: no pair
    assert ops.table_shape(rows).mean_cosine is None


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
    place, score = ranking.rank(35)
    assert place == 1 and score == pytest.approx(1.0, rel=REL)
