"""The geometry of whole tables and the model's input, as records: h0 and its norms per position (input),
a table's norms, mean cosine and principal directions, and the cosines across two tables (geometry)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpt2emb.measures import blocks, norms_of, paired_cosines, row_norms
from gpt2emb.ops import SAFE, slack


@dataclass(frozen=True)
class InputRows:
    """h0 as the model makes it (float32): wte[ids] + wpe[0..n-1] (+ token type 0's row), passed through
    the family's layer norm where it has one; per position the norms of the two rows, of their sum and of h0,
    and the cosine of the wte row with the wpe row (NaN where a row is all zeros), in float64. Without a
    position table (wpe None: rotary models), h0 is the token rows alone, and the wpe figures are None."""

    h0: np.ndarray
    wte_norm: np.ndarray
    wpe_norm: np.ndarray | None
    sum_norm: np.ndarray
    h0_norm: np.ndarray
    cos_wte_wpe: np.ndarray | None


def input_rows(
    wte: np.ndarray,
    wpe: np.ndarray | None,
    ids: tuple[int, ...],
    type_row: np.ndarray | None = None,
    norm: np.ndarray | None = None,
    eps: float = 1e-5,
) -> InputRows:
    tokens = np.asarray(wte[list(ids)], dtype=np.float32)
    places = None if wpe is None else np.asarray(wpe[: len(ids)], dtype=np.float32)
    # the model adds in float32: two rows near 3e38 make inf there, and h0 shows it (no warning); a row of
    # NaN or inf makes NaN in the layer norm, as the model's own
    with np.errstate(over="ignore", invalid="ignore"):
        total = tokens if places is None else tokens + places
        if type_row is not None:
            total = total + type_row
        h0 = total
        if norm is not None:  # LayerNorm over each row, in float64, as torch's up to float32 rounding
            t = total.astype(np.float64)
            centred = t - t.mean(axis=1, keepdims=True)
            scaled = centred / np.sqrt((centred * centred).mean(axis=1, keepdims=True) + eps)
            h0 = (scaled * norm[0] + norm[1]).astype(np.float32)
    wte_norm = norms_of(tokens)
    if places is None:
        return InputRows(h0, wte_norm, None, norms_of(total), norms_of(h0), None)
    return InputRows(
        h0, wte_norm, norms_of(places), norms_of(total), norms_of(h0), paired_cosines(tokens, places)
    )


@dataclass(frozen=True)
class TableShape:
    """The shape of one embedding table, from a few blocked passes over its rows.

    norms        each row's norm (float64), zero rows included;
    zero_rows    how many rows are all zeros: left out of mean_cosine, which needs directions;
    mean_cosine  the mean cosine over all pairs of distinct non-zero rows, exact (None below two such rows,
                 or when a row holds NaN or inf);
    pc_variance  the share of the total variance of the (centred) rows along each of the first principal
                 directions, all rows included (NaN when the rows do not vary or a row holds NaN or inf);
    broken_rows  how many rows hold NaN or inf (their norm is not finite): no figure with them is defined."""

    norms: np.ndarray
    zero_rows: int
    mean_cosine: float | None
    pc_variance: np.ndarray
    broken_rows: int = 0


def table_shape(rows: np.ndarray, k: int = 10) -> TableShape:
    """mean over i != j of u_i . u_j = (|sum u|^2 - sum |u_i|^2) / (n (n - 1)) for the unit rows u_i: the
    cosine of all n^2 pairs from one sum. (sum |u_i|^2 rather than n: then it is exact for the unit rows as
    rounded, not only for ideal ones.) The principal components come from the d x d covariance (eigvalsh),
    never from a decomposition of the whole table. A row holding NaN or inf leaves both undefined: it is
    counted and nothing is computed with it (inf - inf would only make NaN, and numpy warn)."""
    n, d = rows.shape
    norms = np.empty(n)
    unit_sum, unit_sq, total = np.zeros(d), 0.0, np.zeros(d)
    steps = blocks(n, d)
    for start in steps:
        x = np.asarray(rows[start : start + steps.step], dtype=np.float64)
        norm_b = np.sqrt((x * x).sum(axis=1))  # float32 rows: no square of theirs overflows float64
        norms[start : start + len(x)] = norm_b
        kept = (norm_b != 0) & np.isfinite(norm_b)
        unit = x[kept] / norm_b[kept, None]
        unit_sum += unit.sum(axis=0)
        unit_sq += float((unit * unit).sum())
        total += x[kept].sum(axis=0)  # a zero row adds nothing; a broken one leaves the mean unused
    broken = int((~np.isfinite(norms)).sum())
    zero = int((norms == 0).sum())
    m = n - zero
    mean_cosine = None
    if m >= 2 and not broken:  # rounding can take the mean of a table of one direction past 1
        mean_cosine = float(np.clip((unit_sum @ unit_sum - unit_sq) / (m * (m - 1)), -1.0, 1.0))
    shares = np.full(min(k, d), np.nan)
    if not broken:
        mean = total / n
        cov = np.zeros((d, d))
        for start in steps:
            centred = np.asarray(rows[start : start + steps.step], dtype=np.float64) - mean
            cov += centred.T @ centred  # a product of an array with its own transpose: numpy calls syrk
        # a covariance has no negative eigenvalue: one that rounding made so is none of the variance
        eig = np.maximum(np.linalg.eigvalsh(cov)[::-1], 0.0)
        trace = float(eig.sum())
        if trace > 0:
            shares = eig[: len(shares)] / trace
    return TableShape(norms, zero, mean_cosine, shares, broken)


@dataclass(frozen=True)
class CrossCosines:
    """|cosine| between every non-zero row of a and every non-zero row of b: the mean, and the largest with
    its pair (indexes into a and b) and signed value; None when either table has no non-zero row."""

    pairs: int
    mean_abs: float | None
    max_abs: float | None
    argmax: tuple[int, int] | None
    max_cosine: float | None


def _unit64(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero rows as float64 unit vectors, and their indexes (rows of finite numbers: see
    cross_cosines)."""
    x = np.asarray(rows, dtype=np.float64)
    norm_x = np.sqrt((x * x).sum(axis=1))
    kept = np.flatnonzero(norm_x != 0)
    return x[kept] / norm_x[kept, None], kept


def cross_cosines(a: np.ndarray, b: np.ndarray, norms_a: np.ndarray | None = None) -> CrossCosines:
    """All len(a) x len(b) cosines by float32 matrix products over blocks of a's rows (so memory stays at a
    block, whatever len(a)), summed in float64; norms_a, a's row norms, when they are known already. A row
    is scaled to unit length after its product, or, when its norm lies outside SAFE (tiny numbers: 1 / norm
    past float32; huge ones: products past it), before it, in float64: a direction like any other. The
    largest is then found exactly: every row of a whose fast maximum comes within twice the float32 error
    bound of the overall fast maximum is scored again in float64, so the pair and value shown are those of
    the exact cosines (ties: the smaller indexes). A row holding NaN or inf (a norm that is not finite)
    leaves every figure undefined: None, with the pairs counted."""
    n, d = a.shape
    norms_a = row_norms(a) if norms_a is None else norms_a
    norms_b = row_norms(b)
    live = norms_a != 0
    pairs = int(live.sum()) * int((norms_b != 0).sum())
    if not pairs or not (np.isfinite(norms_a).all() and np.isfinite(norms_b).all()):
        return CrossCosines(pairs, None, None, None, None)
    unit_b, kept_b = _unit64(b)
    fast_b = unit_b.astype(np.float32).T
    safe = (norms_a >= SAFE[0]) & (norms_a <= SAFE[1])
    # a zero row's cosines count as none; a row outside SAFE is made a unit row before its product
    scale = np.where(safe, 1 / np.where(safe, norms_a, 1.0), np.where(live, 1.0, 0.0)).astype(np.float32)
    row_max = np.full(n, -np.inf)
    total = 0.0
    steps = blocks(n, max(d, len(kept_b)))
    for start in steps:
        end = min(n, start + steps.step)
        x = np.asarray(a[start:end], dtype=np.float32)
        odd = np.flatnonzero(live[start:end] & ~safe[start:end])
        if len(odd):
            x = x.copy()  # a is read-only (memory-mapped)
            x[odd] = np.asarray(x[odd], dtype=np.float64) / norms_a[start + odd, None]
        fast = x @ fast_b  # the rows scaled after: fewer numbers
        np.abs(fast, out=fast)
        fast *= scale[start:end, None]
        total += float(fast.sum(dtype=np.float64))
        row_max[start:end] = np.where(live[start:end], fast.max(axis=1), -np.inf)
    best = float(row_max.max())
    near = np.flatnonzero(row_max >= best - 2 * slack(d))
    unit_near, _ = _unit64(a[near])  # every one of them is a non-zero row
    exact = unit_near @ unit_b.T
    magnitude = np.abs(exact)
    top = float(magnitude.max())
    i, j = np.argwhere(magnitude == top)[0]  # row-major: the smallest row of a, then of b
    return CrossCosines(pairs, total / pairs, top, (int(near[i]), int(kept_b[j])), float(exact[i, j]))


def random_mean_abs_cosine(d: int) -> float:
    """E|cos| of two independent uniformly random directions in d dimensions, exactly:
    Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)), which is 2/pi for d = 2, 1/2 for d = 3, about sqrt(2/(pi d))."""
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)
