"""The measures of rows, in plain numpy over read-only arrays: cosine matrices and their block means
(positions), principal components, a vector's statistics, paired cosines (tying --compare), row norms a
block at a time. No records here (tables.py has those): a warm command that checks its rows imports this."""

from __future__ import annotations

import numpy as np

from gpt2emb.ops import norm, within_one


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
    broken = ~np.isfinite(norms)  # NaN fails `> 0` above and would read as a zero row's 0
    matrix[broken, :] = matrix[:, broken] = np.nan
    return within_one(matrix), norms


def all_cosines(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cosine matrix of a whole table by one matrix product (fast; for pictures of all rows at once)."""
    rows64 = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows64, axis=1)
    with np.errstate(invalid="ignore"):  # a row of inf: inf / inf, NaN, as its every cosine is
        unit = rows64 / np.where(norms > 0, norms, 1.0)[:, None]
    unit[~np.isfinite(norms)] = np.nan  # a row of NaN and inf, whose norm is inf, gives no number either
    return within_one(unit @ unit.T), norms


def block_means(matrix: np.ndarray, cells: int) -> np.ndarray:
    """A square matrix shrunk to cells x cells by averaging blocks (the last block takes what is left)."""
    edges = np.linspace(0, len(matrix), cells + 1).round().astype(int)
    sums = np.add.reduceat(np.add.reduceat(matrix, edges[:-1], axis=0), edges[:-1], axis=1)
    sizes = np.diff(edges)
    result: np.ndarray = sums / np.outer(sizes, sizes)
    return result


def principal_components(rows: np.ndarray, k: int) -> np.ndarray:
    """The projection of each (centred) row on the first k principal directions: shape (len(rows), k). Those
    of the rows of finite numbers: a row holding NaN or inf has no place among them (NaN), and would leave
    the decomposition nothing to converge on."""
    x = np.asarray(rows, dtype=np.float64)
    finite = np.isfinite(x).all(axis=1)
    result = np.full((len(x), k), np.nan)
    if finite.any():
        centred = x[finite] - x[finite].mean(axis=0)
        u, s, _ = np.linalg.svd(centred, full_matrices=False)
        result[finite, : min(k, len(s))] = u[:, :k] * s[:k]
    return result


def vector_stats(v: np.ndarray) -> dict[str, float]:
    """A row's norm, mean, spread and ends, in float64; NaN (shown as null) for a figure a row holding NaN
    or inf has no number for (the spread of inf is inf - inf)."""
    v64 = v.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return {
            "norm": norm(v64),  # the norm every cosine here divides by
            "mean": float(v64.mean()),
            "std": float(v64.std()),
            "min": float(v64.min()),
            "max": float(v64.max()),
        }


def norms_of(rows: np.ndarray) -> np.ndarray:
    """Each row's norm, in float64."""
    r = rows.astype(np.float64)
    return np.asarray(np.sqrt((r * r).sum(axis=1)))


def paired_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cosine of row i of a with row i of b, for each i, in float64 from those two rows alone; NaN where
    either row is all zeros (no direction)."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    denom = norms_of(a64) * norms_of(b64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return within_one(np.where(denom > 0, (a64 * b64).sum(axis=1) / denom, np.nan))


def mean_defined(values: np.ndarray) -> float | None:
    """The mean of the finite values (a cosine of a zero row is NaN, left out); None when there are none."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else None


def other_rows(ids: np.ndarray, n_rows: int, seed: int) -> np.ndarray:
    """For each id, another row of a table of n_rows, picked at random (seeded: the same on every run)."""
    rng = np.random.default_rng(seed)
    return np.asarray((ids + rng.integers(1, n_rows, size=len(ids))) % n_rows)


def sample_runs(n_rows: int, rows: int, run: int, seed: int) -> list[range]:
    """rows of a table of n_rows, chosen at random (seeded) as rows // run runs of run consecutive rows that
    do not overlap, in order: a sample read with few byte ranges."""
    rng = np.random.default_rng(seed)
    starts = np.sort(rng.choice(n_rows // run, rows // run, replace=False)) * run
    return [range(int(s), int(s) + run) for s in starts]


_BLOCK_VALUES = 1 << 22  # float64 values per block (32 MiB): the whole-table passes stay small in memory


def blocks(n_rows: int, width: int) -> range:
    """The first row of each block of a whole-table pass: _BLOCK_VALUES float64 values a block."""
    return range(0, n_rows, max(1, _BLOCK_VALUES // max(1, width)))


_NORM_BLOCK_VALUES = 1 << 19  # row_norms' block (4 MiB): the sums of each row are the same in any block


def row_norms(rows: np.ndarray) -> np.ndarray:
    """Each row's norm in float64, a block at a time."""
    norms = np.empty(len(rows))
    steps = range(0, len(rows), max(1, _NORM_BLOCK_VALUES // max(1, rows.shape[1])))
    # one small buffer for every block, squared in place: a fresh array per step is memory the system maps
    # and zeroes anew each time, and a large one is as slow to touch first (twice the time of the sums)
    buffer = np.empty((min(steps.step, len(rows)), rows.shape[1]))
    for start in steps:
        with np.errstate(invalid="ignore", over="ignore"):  # a row of NaN or inf has such a norm, and says so
            x = buffer[: min(steps.step, len(rows) - start)]
            np.copyto(x, rows[start : start + len(x)])
            np.multiply(x, x, out=x)
            norms[start : start + len(x)] = np.sqrt(x.sum(axis=1))
    return norms
