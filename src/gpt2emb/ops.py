"""The math, in plain numpy over read-only arrays: pooled vectors, cosine ranking, analogy, positions."""

from __future__ import annotations

import numpy as np

from gpt2emb.choices import Method, Pool
from gpt2emb.tokens import Query


def query_vector(wte: np.ndarray, query: Query) -> np.ndarray:
    rows: np.ndarray = np.asarray(wte[list(query.ids)], dtype=np.float32)
    if query.pool is Pool.first or len(query.ids) == 1:
        return np.array(rows[0])
    return np.asarray(rows.mean(axis=0), dtype=np.float32)


def cosine_scores(wte: np.ndarray, norms: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Cosine of every row of wte with each vector: shape (len(vectors), rows). One pass over the matrix."""
    vectors = np.atleast_2d(vectors).astype(np.float32)
    dots = (wte @ vectors.T).T
    q_norms = np.linalg.norm(vectors, axis=1)
    denom = norms[None, :] * q_norms[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(denom > 0, dots / denom, 0.0)
    return scores.astype(np.float32)


def top_k(scores: np.ndarray, k: int, exclude: tuple[int, ...] = ()) -> list[tuple[int, float]]:
    """The k best (id, score) pairs, best first, ties broken by the smaller id; excluded ids never appear."""
    s = np.array(scores, dtype=np.float64)
    if exclude:
        s[list(exclude)] = -np.inf
    k = min(k, int(np.isfinite(s).sum()))
    if k <= 0:
        return []
    part = np.argpartition(-s, k - 1)[:k] if k < len(s) else np.arange(len(s))
    order = sorted(part.tolist(), key=lambda i: (-s[i], i))
    return [(i, float(s[i])) for i in order]


def rank_of(scores: np.ndarray, token_id: int) -> int:
    """1-based place of a row in the full ranking (rows with a strictly higher score come before it)."""
    return int((scores > scores[token_id]).sum()) + 1


def analogy_scores(
    wte: np.ndarray, norms: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, method: Method
) -> np.ndarray:
    """A score for every row as the answer to "A is to B as C is to ?" (higher is better).

    add      the lab's arithmetic: cosine with v(A) - v(B) + v(C) on the raw rows;
    3cosadd  cosine with unit(A) - unit(B) + unit(C) (gensim's most_similar(positive=[A, C], negative=[B]));
    3cosmul  Levy and Goldberg's cos'(x, A) cos'(x, C) / (cos'(x, B) + 1e-6) with cos' = (1 + cos) / 2
             (gensim's most_similar_cosmul).
    """
    if method is Method.cosmul:
        shifted = (1 + cosine_scores(wte, norms, np.stack([a, b, c]))) / 2
        product: np.ndarray = shifted[0] * shifted[2] / (shifted[1] + 1e-6)
        return product
    if method is Method.cosadd:
        a, b, c = (v / max(float(np.linalg.norm(v)), 1e-30) for v in (a, b, c))
    scores: np.ndarray = cosine_scores(wte, norms, a - b + c)[0]
    return scores


def cosine_matrix(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise cosine similarity of some rows, and each row's norm."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1)
    unit = rows / np.where(norms > 0, norms, 1.0)[:, None]
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
