"""The ranking math, in plain numpy over read-only arrays: pooled vectors, cosines, exact top-k and whole
rankings over wte, analogy (measures.py: the measures of rows and whole tables)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from gpt2emb.choices import Pool
from gpt2emb.queries import Query


def query_vector(wte: np.ndarray, query: Query) -> np.ndarray:
    return pooled(np.asarray(wte[list(query.ids)], dtype=np.float32), query.pool)


def pooled(rows: np.ndarray, pool: Pool) -> np.ndarray:
    """One vector for a word's rows (its pieces'): the first row, or their mean, summed in float64 (a float32
    sum of rows of 3e38 overflows, though their mean is a float32 number)."""
    if pool is Pool.first or len(rows) == 1:
        return np.array(rows[0])
    with np.errstate(invalid="ignore"):  # inf and -inf pieces: a mean of NaN, as the row is broken
        return np.asarray(rows.mean(axis=0, dtype=np.float64), dtype=np.float32)


# Scores against all of wte come in two steps. A fast pass, float32 matrix products for every query at once,
# gives each row a score within `slack` of its exact value (a ranking keeps that interval for every row; a
# block's top k is screened as the products come, see `_screen`). Only the rows that can reach the top k (or
# a rank's boundary) are then scored exactly, by `cosines`, whose value for a row depends on that row and
# the query alone. So what is shown never depends on which BLAS kernel ran, nor on which other words were
# asked with it (a matrix-vector and a matrix-matrix product round differently).

_U32 = 2.0**-24  # float32's unit roundoff


def slack(d: int) -> float:
    """A bound on |fast cosine - exact cosine| for d-dimensional float32 rows (Higham's gamma_d for the dot
    product and again for each norm, plus the divisions), doubled for safety: 3.7e-4 for d = 768. It holds
    while no product under- or overflows float32: rows and queries of a norm outside SAFE get no bound."""
    return 8 * (d + 2) * _U32


SAFE = (2.0**-40, 2.0**40)  # norms whose products stay far from float32's subnormals and its overflow
_CHUNK = 4096  # rows scored exactly at a time: memory stays bounded however large k is


def dots(rows: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each row's dot product with v in float64. Products of float32 numbers are exact in float64 and each row
    is summed on its own (numpy's pairwise sum along the row), so a value depends on that row and v alone."""
    rows64 = np.atleast_2d(np.asarray(rows, dtype=np.float64))  # a copy only where the dtype differs
    # np.add.reduce is what .sum(axis=1) runs, without its Python wrapper: this runs for every word of a batch
    result: np.ndarray = np.add.reduce(rows64 * np.asarray(v, dtype=np.float64), axis=1)
    return result


def norm(v: np.ndarray) -> float:
    return float(np.sqrt(dots(v, v)[0]))


def cosine(a: np.ndarray, b: np.ndarray) -> float | None:
    """The cosine of two vectors from them alone, in float64; None when either is all zeros (no direction)."""
    scale = norm(a) * norm(b)
    return float(within_one(dots(a, b) / scale)[0]) if scale > 0 else None


def cosines(rows: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Cosine of each row with v, computed as `dots` is: per row, never per batch. 0 where a norm is 0 (a zero
    row points nowhere), NaN where a row or v holds NaN or inf (shown as null)."""
    v64 = np.array(v, dtype=np.float64, ndmin=2)
    return _cosines(rows, v64, np.sqrt(np.add.reduce(v64 * v64, axis=1)))


def column_cosines(
    rows: np.ndarray, vectors: Sequence[np.ndarray], row_norms: np.ndarray | None = None
) -> np.ndarray:
    """`cosines` of the rows with each vector, a column per vector: each figure the one `cosines` gives (the
    rows' norms given or not: given, they are the ones `cosines` computes, as `row_norms` gives them)."""
    rows64 = np.atleast_2d(np.asarray(rows, dtype=np.float64))  # a copy only where the dtype differs
    if row_norms is None:
        row_norms = norms_of(rows64)
    result = np.empty((len(rows64), len(vectors)))
    for j, v in enumerate(vectors):
        v64 = np.array(v, dtype=np.float64, ndmin=2)
        result[:, j] = _cosines(rows64, v64, norms_of(v64), row_norms)
    return result


def norms_of(rows64: np.ndarray) -> np.ndarray:
    """Each row's norm in float64, as `cosines` computes it: numpy's pairwise sum along the row."""
    result: np.ndarray = np.sqrt(np.add.reduce(rows64 * rows64, axis=1))
    return result


def _cosines(
    rows: np.ndarray, v64: np.ndarray, v_norms: np.ndarray, row_norms: np.ndarray | None = None
) -> np.ndarray:
    """`cosines` of each row with one vector (v64 of one row) or each with its own (a row of v64 each), in
    float64, given the vectors' norms. Every figure comes from its row and its vector alone: numpy sums each
    row of a product on its own, however many rows there are."""
    rows64 = np.atleast_2d(np.asarray(rows, dtype=np.float64))  # a copy only where the dtype differs
    if row_norms is None:
        row_norms = norms_of(rows64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        denom = row_norms * v_norms
        result: np.ndarray = np.where(denom > 0, np.add.reduce(rows64 * v64, axis=1) / denom, 0.0)
        result[~np.isfinite(denom)] = np.nan
    return within_one(result)


def within_one(cosines: np.ndarray) -> np.ndarray:
    """Cosines that rounding took past 1 or -1 (a row with itself: 1.0000000000000002) brought back to it, so
    that arccos and the like take every one; NaN stays NaN."""
    result: np.ndarray = np.clip(cosines, -1.0, 1.0, out=cosines)
    return result


class Ranking(NamedTuple):
    """A score for every row of a table: lo <= exact <= hi, and exact(ids) gives the exact scores. lo and hi
    hold no NaN (see `widen_nan_bounds`): a row without a bound has lo = -inf and hi = inf."""

    lo: np.ndarray
    hi: np.ndarray
    exact: Callable[[np.ndarray], np.ndarray]

    def scores(self, ids: np.ndarray) -> np.ndarray:
        """Exact scores of some rows, a bounded number at a time (NaN: a broken row, below any number)."""
        ids = np.asarray(ids, dtype=np.int64)
        parts = [self.exact(ids[i : i + _CHUNK]) for i in range(0, len(ids), _CHUNK)]
        return np.concatenate(parts) if parts else np.zeros(0)

    def top(
        self, k: int, exclude: tuple[int, ...] = (), allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The k best (id, exact score) pairs, best first, ties broken by the smaller id; excluded ids never
        appear, nor rows outside `allowed` (a boolean mask over the rows; None: every row), and fewer than k
        come back when fewer rows remain. Every row that could belong is scored exactly, so the answer is that
        of the exact scores, the same as scoring only the allowed rows."""
        keep = np.ones(len(self.lo), dtype=bool) if allowed is None else allowed.copy()
        keep[list(exclude)] = False
        k = min(k, int(keep.sum()))
        if k <= 0:
            return []
        lo, hi = self.lo.copy(), self.hi.copy()
        sink_outside(lo, hi, keep)
        # the k-th largest lower bound among the rows left: every row that can make the top k reaches it
        n = len(lo)
        kth = np.partition(lo, n - k)[n - k]
        # a row without a bound (lo = -inf) can make kth -inf, and every outsider reach it: the mask decides
        candidates = np.flatnonzero((hi >= kth) & keep)
        exact = self.scores(candidates)
        order = np.lexsort((candidates, -np.nan_to_num(exact, nan=-np.inf)))[:k]
        return [(int(candidates[i]), float(exact[i])) for i in order]

    def ranks(self, ids: Sequence[int], allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Each row's 1-based place among all rows (those scoring strictly higher come first), or among the
        allowed rows only (a boolean mask: where the row would stand among them, allowed or not), with its
        exact score: one pass for all the rows asked about, each row scored once however often asked."""
        unique, back = np.unique(np.asarray(ids, dtype=np.int64), return_inverse=True)
        scores = self.scores(unique)
        lo, hi = self.lo, self.hi
        if allowed is not None:
            lo, hi = lo.copy(), hi.copy()
            sink_outside(lo, hi, allowed)
        asked = np.sort(scores[~np.isnan(scores)])  # a NaN score (a broken row) has nothing above it
        # a row is in doubt when its interval [lo, hi) holds an asked score; any other row stands above
        # every asked score its lo exceeds, and below the rest
        at = np.searchsorted(asked, lo)
        doubt = np.flatnonzero(at < len(asked))
        doubt = doubt[asked[at[doubt]] < hi[doubt]]
        sure = np.ones(len(lo), dtype=bool)
        sure[doubt] = False
        sure_lo = np.sort(lo[sure])
        known = np.isin(doubt, unique)  # the asked rows are in doubt of their own score: scored already
        exact = np.empty(len(doubt))
        exact[known] = scores[np.searchsorted(unique, doubt[known])]
        exact[~known] = self.scores(doubt[~known])
        exact = np.sort(exact[~np.isnan(exact)])  # a broken row counts above nothing
        # numpy sorts NaN last: a NaN score has no row above it, and so is placed first
        above = len(sure_lo) - np.searchsorted(sure_lo, scores, "right")
        above += len(exact) - np.searchsorted(exact, scores, "right")
        return [(int(above[j]) + 1, float(scores[j])) for j in back.ravel()]


def sink_outside(lo: np.ndarray, hi: np.ndarray, allowed: np.ndarray) -> None:
    """Sink, in place, every row outside `allowed` (a boolean mask over the last axis: the rows of a ranking,
    or the columns of a block of queries by rows) below any score: its bounds become -inf, so no k-th best
    and no rank counts it. The one place candidates are restricted (--among, --restrict, --whole-words)."""
    lo[..., ~allowed] = -np.inf
    hi[..., ~allowed] = -np.inf


def cosine_rankings(wte: np.ndarray, norms: np.ndarray, vectors: list[np.ndarray]) -> list[Ranking]:
    """Each vector's cosine with every row of wte: one matrix pass for all, then exact where it counts."""
    lo, hi = _cosine_bounds(wte, norms, vectors)

    def exact_for(v: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return lambda ids: cosines(wte[ids], v)

    return [Ranking(a, b, exact_for(v)) for a, b, v in zip(lo, hi, vectors, strict=True)]


def cosine_tops(
    wte: np.ndarray,
    norms: np.ndarray,
    vectors: list[np.ndarray],
    k: int,
    excludes: list[tuple[int, ...]],
    allowed: np.ndarray | None = None,
) -> list[list[tuple[int, float]]]:
    """For each vector, `cosine_rankings(...)[i].top(k, excludes[i], allowed)`: the same answers, for a whole
    block in a few array operations instead of a few per vector (a batch of words from stdin is this loop)."""
    if allowed is not None:  # only the allowed rows, in id order (ties still go to the smaller id)
        rows = np.flatnonzero(allowed)
        inside = [tuple(int(np.searchsorted(rows, i)) for i in e if allowed[i]) for e in excludes]
        tops = cosine_tops(wte[rows], norms[rows], vectors, k, inside)
        return [[(int(rows[i]), score) for i, score in best] for best in tops]
    n = len(norms)
    outs = [sorted(set(e)) for e in excludes]
    most = max((len(o) for o in outs), default=0)
    if k + most >= n:  # nearly every row asked for: one by one
        rankings = cosine_rankings(wte, norms, vectors)
        return [r.top(k, tuple(o)) for r, o in zip(rankings, outs, strict=True)]
    stacked = np.stack(vectors).astype(np.float64)
    q_norms = np.sqrt(np.add.reduce(stacked * stacked, axis=1))  # as `norm` gives each
    if _safe(norms).all() and _safe(q_norms).all() and 8 * (k + most) <= min(n, _COLUMNS):
        queries, rows = _screen(wte, norms, stacked / q_norms[:, None], k + most)
    else:  # a row or query without a fast bound, or many rows asked for: lo and hi of every row
        lo, hi = _cosine_bounds(wte, norms, vectors)
        queries, rows = np.divmod(np.flatnonzero(hi >= _kth_largest(lo, k + most)[:, None]), n)
        del lo, hi
    if most:
        kept = ~np.isin(queries * n + rows, [q * n + i for q, o in enumerate(outs) for i in o])
        queries, rows = queries[kept], rows[kept]
    # exact scores by `cosines`, as a ranking computes them: each pair from its row and its query alone, a few
    # pairs at a time (their float64 copies stay in cache)
    exact = np.concatenate(
        [np.zeros(0)]
        + [
            _cosines(
                wte[rows[i : i + _PAIRS]], stacked[queries[i : i + _PAIRS]], q_norms[queries[i : i + _PAIRS]]
            )
            for i in range(0, len(rows), _PAIRS)
        ]
    )
    order = np.lexsort((rows, -np.nan_to_num(exact, nan=-np.inf), queries))  # by query, best first, then id
    starts = np.searchsorted(queries[order], np.arange(len(vectors) + 1))
    ids, scores = rows[order].tolist(), exact[order].tolist()
    return [
        list(zip(ids[a : min(a + k, b)], scores[a : min(a + k, b)], strict=True))
        for a, b in itertools.pairwise(starts.tolist())
    ]


_COLUMNS = 8192  # rows of wte per matrix product of a block's screen: their scores are screened in cache
_PAIRS = 256  # (query, row) pairs scored exactly at a time


def _screen(wte: np.ndarray, norms: np.ndarray, units: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The (query, row) pairs whose exact cosine could place among the query's m best, maybe a few more: each
    query (a unit vector, float64) against every row, by float32 matrix products of _COLUMNS rows at a time,
    screened while their scores are in cache. A fast score is the product with the query's unit vector
    rounded to float32, times the row's 1 / norm: fewer roundings than `slack` allows for. Every norm must be
    safe (see `slack`), and 8m at most the columns of a product (a few candidates per query in each).

    A row is kept when its fast score is within the pad (twice the slack, a little more for rounding) of a
    value at most the query's m-th best fast score: the m-th best of the first columns while the others come,
    then the m-th best of all that was kept. Every row that can place is kept: at least m rows score at least
    that value exactly, less the slack."""
    n, d = len(norms), wte.shape[1]
    pad = np.float32(2.02 * slack(d) * 1.01)  # 1% more than slack: the fast scores are rounded to float32
    with np.errstate(divide="ignore"):
        inv = np.where(norms > 0, np.float32(1) / norms, np.float32(0))  # a zero row scores 0, exactly
    unit = units.astype(np.float32)
    buffer = np.empty(len(unit) * min(n, _COLUMNS), dtype=np.float32)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for start in range(0, n, _COLUMNS):
        width = min(_COLUMNS, n - start)
        fast = buffer[: len(unit) * width].reshape(len(unit), width)
        np.matmul(unit, wte[start : start + width].T, out=fast)  # float32 throughout: the batch's cost
        fast *= inv[start : start + width]
        if start == 0:  # the first product has 8m columns or more
            floor = np.partition(fast, width - m, axis=1)[:, width - m]
        cut = np.nextafter(floor - pad, np.float32(-np.inf))
        hit = np.flatnonzero(fast >= cut[:, None])
        queries, rows = np.divmod(hit, width)
        found.append((queries, rows + start, fast.ravel()[hit]))
    queries, rows, scores = (np.concatenate(parts) for parts in zip(*found, strict=True))
    # each query's m-th best among what was kept (it holds the m best): its kept scores in a row of a matrix
    counts = np.bincount(queries, minlength=len(unit))
    order = np.argsort(queries, kind="stable")
    place = np.arange(len(order)) - np.repeat(np.cumsum(counts) - counts, counts)
    kept_scores = np.full((len(unit), int(counts.max())), -np.inf, dtype=np.float32)
    kept_scores[queries[order], place] = scores[order]
    mth = np.partition(kept_scores, kept_scores.shape[1] - m, axis=1)[:, kept_scores.shape[1] - m]
    kept = scores >= np.nextafter(mth - pad, np.float32(-np.inf))[queries]
    return queries[kept], rows[kept]


def _kth_largest(scores: np.ndarray, k: int) -> np.ndarray:
    """For each row of scores, a value at most its k-th largest, close to it. The k-th largest of the maxima
    of 8k or more groups of the row is one (k groups hold a score at least that high): a pass of max over the
    row, not a partition of a copy of it, which costs six times as much."""
    n = scores.shape[1]
    groups = max(64, 8 * k)
    width = n // groups
    if width < 8:
        return np.partition(scores, n - k, axis=1)[:, n - k]
    maxima = scores[:, : groups * width].reshape(len(scores), groups, width).max(axis=2)
    if groups * width < n:
        maxima = np.concatenate([maxima, scores[:, groups * width :].max(axis=1, keepdims=True)], axis=1)
    result: np.ndarray = np.partition(maxima, maxima.shape[1] - k, axis=1)[:, maxima.shape[1] - k]
    return result


def _cosine_bounds(
    wte: np.ndarray, norms: np.ndarray, vectors: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The fast pass: lo <= cosine <= hi for each vector (a row of lo, hi) and each row of wte."""
    fast, pad = _fast_cosines(wte, norms, vectors)
    return _bounded(fast, pad, norms, vectors)


def _fast_cosines(
    wte: np.ndarray, norms: np.ndarray, vectors: list[np.ndarray]
) -> tuple[np.ndarray, np.float32]:
    """Each vector's fast float32 cosine with each row of wte (a row per vector), and the pad that bounds its
    error where the row's and the vector's norms are safe (see `slack`)."""
    stacked = np.stack(vectors).astype(np.float32)
    q_norms = np.array([norm(v) for v in stacked])
    pad = np.float32(slack(wte.shape[1]) * 1.01)  # 1% more: lo and hi are themselves rounded to float32
    with np.errstate(all="ignore"):  # a row of NaN, inf or extreme scale gets no bound, not a warning
        fast = stacked @ wte.T  # (len(vectors), rows), float32 throughout: this pass is the batch's cost
        fast /= norms[None, :]
        fast /= q_norms[:, None].astype(np.float32)
        zero = norms == 0
        if zero.any():
            fast[:, zero] = 0.0  # a zero row scores 0, exactly
    return fast, pad


def _bounded(
    fast: np.ndarray, pad: np.float32, norms: np.ndarray, vectors: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """lo and hi from the fast scores (fast becomes hi): no bound (-inf, inf) where a norm is not safe."""
    with np.errstate(all="ignore"):
        lo = fast - pad
        fast += pad
    hi = fast
    safe_rows, safe_queries = _safe(norms), _safe(np.array([norm(v) for v in vectors]))
    if not (safe_rows.all() and safe_queries.all()):
        for rows in (np.s_[:, ~safe_rows], np.s_[~safe_queries, :]):
            lo[rows], hi[rows] = -np.inf, np.inf
        widen_nan_bounds(lo, hi)
    return lo, hi


def widen_nan_bounds(lo: np.ndarray, hi: np.ndarray) -> None:
    """Widen, in place, a bound that is NaN (a row holding NaN or inf) to all numbers."""
    lo[np.isnan(lo)], hi[np.isnan(hi)] = -np.inf, np.inf


def _safe(norms: np.ndarray) -> np.ndarray:
    """Norms whose rows the fast float32 pass scores within slack (zero rows too: they score 0 exactly)."""
    result: np.ndarray = (norms == 0) | ((norms >= SAFE[0]) & (norms <= SAFE[1]))
    return result
