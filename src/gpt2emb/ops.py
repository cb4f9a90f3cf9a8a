"""The math, in plain numpy over read-only arrays: pooled vectors, cosine ranking, analogy, positions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpt2emb.choices import Method, Pool
from gpt2emb.tokens import Query


def query_vector(wte: np.ndarray, query: Query) -> np.ndarray:
    return pooled(np.asarray(wte[list(query.ids)], dtype=np.float32), query.pool)


def pooled(rows: np.ndarray, pool: Pool) -> np.ndarray:
    """One vector for a word's rows (its pieces'): the first row, or their mean."""
    if pool is Pool.first or len(rows) == 1:
        return np.array(rows[0])
    return np.asarray(rows.mean(axis=0), dtype=np.float32)


# Scores against all of wte come in two steps. A fast pass, one float32 matrix product for every query at
# once, gives each row a score and an interval that surely holds its exact value. Only the rows whose
# interval reaches the top k (or a rank's boundary) are then scored exactly, by `cosines`, whose value for a
# row depends on that row and the query alone. So what is shown never depends on which BLAS kernel ran, nor
# on which other words were asked with it (a matrix-vector and a matrix-matrix product round differently).

_U32 = 2.0**-24  # float32's unit roundoff


def _slack(d: int) -> float:
    """A bound on |fast cosine - exact cosine| for d-dimensional float32 rows (Higham's gamma_d for the dot
    product and again for each norm, plus the divisions), doubled for safety: about 2e-4 for d = 768."""
    return 8 * (d + 2) * _U32


def dots(rows: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each row's dot product with v in float64. Products of float32 numbers are exact in float64 and each row
    is summed on its own (numpy's pairwise sum along the row), so a value depends on that row and v alone."""
    rows64 = np.array(rows, dtype=np.float64, ndmin=2)
    result: np.ndarray = (rows64 * np.asarray(v, dtype=np.float64)).sum(axis=1)
    return result


def norm(v: np.ndarray) -> float:
    return float(np.sqrt(dots(v, v)[0]))


def cosine(a: np.ndarray, b: np.ndarray) -> float | None:
    """The cosine of two vectors from them alone, in float64; None when either is all zeros (no direction)."""
    scale = norm(a) * norm(b)
    return float(dots(a, b)[0] / scale) if scale > 0 else None


def cosines(rows: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Cosine of each row with v (0 where a norm is 0), computed as `dots` is: per row, never per batch."""
    rows64 = np.array(rows, dtype=np.float64, ndmin=2)
    denom = np.sqrt((rows64 * rows64).sum(axis=1)) * norm(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        result: np.ndarray = np.where(denom > 0, dots(rows64, v) / denom, 0.0)
    return result


@dataclass(frozen=True)
class Ranking:
    """A score for every row of a table: lo <= exact <= hi, and exact(ids) gives the exact scores."""

    lo: np.ndarray
    hi: np.ndarray
    exact: Callable[[np.ndarray], np.ndarray]

    def top(self, k: int, exclude: tuple[int, ...] = ()) -> list[tuple[int, float]]:
        """The k best (id, exact score) pairs, best first, ties broken by the smaller id; excluded ids never
        appear. Every row that could belong is scored exactly, so the answer is that of the exact scores."""
        lo = np.array(self.lo, dtype=np.float64)
        if exclude:
            lo[list(exclude)] = -np.inf
        k = min(k, int(np.isfinite(lo).sum()))
        if k <= 0:
            return []
        kth = np.partition(lo, len(lo) - k)[len(lo) - k]  # the k-th largest lower bound
        candidates = np.flatnonzero((self.hi >= kth) & np.isfinite(lo))
        exact = self.exact(candidates)
        order = np.lexsort((candidates, -exact))[:k]
        return [(int(candidates[i]), float(exact[i])) for i in order]

    def rank(self, i: int) -> tuple[int, float]:
        """Row i's exact score and 1-based place among all rows (those scoring strictly higher come first)."""
        score = float(self.exact(np.array([i]))[0])
        surely_above = int((self.lo > score).sum())
        unsure = np.flatnonzero((self.lo <= score) & (self.hi > score))
        return surely_above + int((self.exact(unsure) > score).sum()) + 1, score


def cosine_rankings(wte: np.ndarray, norms: np.ndarray, vectors: list[np.ndarray]) -> list[Ranking]:
    """Each vector's cosine with every row of wte: one matrix pass for all, then exact where it counts."""
    stacked = np.stack(vectors).astype(np.float32)
    fast = (wte @ stacked.T).T  # (len(vectors), rows)
    q_norms = np.linalg.norm(stacked, axis=1)
    denom = norms[None, :] * q_norms[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        fast = np.where(denom > 0, fast / denom, 0.0)
    slack = _slack(wte.shape[1])

    def exact_for(v: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return lambda ids: cosines(wte[ids], v)

    return [Ranking(row - slack, row + slack, exact_for(v)) for row, v in zip(fast, vectors, strict=True)]


def analogy_ranking(
    wte: np.ndarray, norms: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, method: Method
) -> Ranking:
    """A score for every row as the answer to "A is to B as C is to ?" (higher is better).

    add      the lab's arithmetic: cosine with v(A) - v(B) + v(C) on the raw rows;
    3cosadd  cosine with unit(A) - unit(B) + unit(C) (gensim's most_similar(positive=[A, C], negative=[B]));
    3cosmul  Levy and Goldberg's cos'(x, A) cos'(x, C) / (cos'(x, B) + 1e-6) with cos' = (1 + cos) / 2
             (gensim's most_similar_cosmul).
    """
    if method is Method.cosmul:
        ra, rb, rc = cosine_rankings(wte, norms, [a, b, c])

        def shifted(x: np.ndarray) -> np.ndarray:
            return np.clip((1 + x) / 2, 0.0, 1.0)

        def cosmul(sa: np.ndarray, sb: np.ndarray, sc: np.ndarray) -> np.ndarray:
            result: np.ndarray = sa * sc / (sb + 1e-6)
            return result

        lo = cosmul(shifted(ra.lo), shifted(rb.hi), shifted(rc.lo))
        hi = cosmul(shifted(ra.hi), shifted(rb.lo), shifted(rc.hi))
        return Ranking(lo, hi, lambda ids: cosmul(*((1 + r.exact(ids)) / 2 for r in (ra, rb, rc))))
    if method is Method.cosadd:
        a, b, c = (v / max(norm(v), 1e-30) for v in (a, b, c))
    return cosine_rankings(wte, norms, [(a - b + c).astype(np.float32)])[0]


def cosine_matrix(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise cosines of some rows, each computed as `cosines` does (so the same figure as neighbors gives,
    whatever other rows are asked with it), and each row's norm."""
    rows64 = np.array(rows, dtype=np.float64, ndmin=2)
    norms = np.sqrt((rows64 * rows64).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        matrix = np.stack(
            [
                np.where(norms * n > 0, (rows64 * r).sum(axis=1) / (norms * n), 0.0)
                for r, n in zip(rows64, norms, strict=True)
            ]
        )
    return matrix, norms


def all_cosines(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cosine matrix of a whole table by one matrix product (fast; for pictures of all rows at once)."""
    rows64 = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows64, axis=1)
    unit = rows64 / np.where(norms > 0, norms, 1.0)[:, None]
    return unit @ unit.T, norms


def block_means(matrix: np.ndarray, cells: int) -> np.ndarray:
    """A square matrix shrunk to cells x cells by averaging blocks (the last block takes what is left)."""
    edges = np.linspace(0, len(matrix), cells + 1).round().astype(int)
    sums = np.add.reduceat(np.add.reduceat(matrix, edges[:-1], axis=0), edges[:-1], axis=1)
    sizes = np.diff(edges)
    result: np.ndarray = sums / np.outer(sizes, sizes)
    return result


def principal_components(rows: np.ndarray, k: int) -> np.ndarray:
    """The projection of each (centred) row on the first k principal directions: shape (len(rows), k)."""
    centred = np.asarray(rows, dtype=np.float64) - np.mean(rows, axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    result: np.ndarray = u[:, :k] * s[:k]
    return result


def vector_stats(v: np.ndarray) -> dict[str, float]:
    v64 = v.astype(np.float64)
    return {
        "norm": float(np.linalg.norm(v64)),
        "mean": float(v64.mean()),
        "std": float(v64.std()),
        "min": float(v64.min()),
        "max": float(v64.max()),
    }
