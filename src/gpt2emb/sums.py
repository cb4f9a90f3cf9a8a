"""An analogy's sum as numbers: its terms in an order of their own, the vector that add and 3cosadd rank by,
whether that vector is nothing but rounding, and 3cosmul's rankings, scored in log space."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from gpt2emb.choices import Method
from gpt2emb.ops import SAFE, Ranking, column_cosines, norm, norms_of, slack, widen_nan_bounds

Signed = tuple[int, np.ndarray]  # a term of an analogy's sum: its sign (1 or -1) and its word's vector


def in_order(terms: Sequence[Signed]) -> list[Signed]:
    """The terms in an order of their own, whatever the order written: the positive ones first, each sign's
    by the bytes of their vectors. Sums and products are taken in this order, so that the same terms in any
    order give the same vector to the last bit (floating-point addition is not associative)."""
    return sorted(terms, key=lambda t: (t[0] < 0, np.asarray(t[1], dtype=np.float32).tobytes()))


# How each method scores a row x as the answer to the signed sum of the terms ("A is to B as C is to ?" for
# A - B + C; higher is better):
#
# add      the lab's arithmetic: cosine with the sum of the signed raw rows, v(A) - v(B) + v(C);
# 3cosadd  cosine with the sum of the signed unit vectors, unit(A) - unit(B) + unit(C) (gensim's
#          most_similar(positive=[A, C], negative=[B]));
# 3cosmul  Levy and Goldberg's product of cos'(x, P) over the positive terms P, divided by the product of
#          cos'(x, N) over the negative ones N, plus 1e-6, with cos' = (1 + cos) / 2 (gensim's
#          most_similar_cosmul): cos'(x, A) cos'(x, C) / (cos'(x, B) + 1e-6). It is ranked by its logarithm,
#          which orders rows alike: a product of a thousand factors near 0.5 is below any float's range.


def _total(terms: Sequence[Signed], method: Method) -> tuple[np.ndarray, float]:
    """The float64 sum that add (raw rows) or 3cosadd (unit rows) ranks by, and the sum of its terms' norms.
    A sum of rows near float32's largest numbers (or the norm of one) is past float32."""
    ordered = in_order(terms)
    vectors = [np.asarray(v, dtype=np.float64) for _, v in ordered]
    if method is Method.cosadd:
        vectors = [v / n if (n := norm(v)) > 0 else v for v in vectors]
    total = np.zeros_like(vectors[0])
    for (sign, _), v in zip(ordered, vectors, strict=True):
        total = total + v if sign > 0 else total - v
    return total, sum(norm(v) for v in vectors)


def cancels(terms: Sequence[Signed], method: Method) -> bool:
    """Whether the vector that the method ranks by is nothing but rounding (king - king, cat + dog - cat -
    dog): ranked, such noise would look like a direction, the more so once scaled into float32's range.
    3cosmul ranks by no sum: its scores are defined whenever each term has a direction."""
    if method is Method.cosmul:
        return False
    total, size = _total(terms, method)
    return norm(total) <= 1e-6 * size


def analogy_vector(terms: Sequence[Signed], method: Method) -> np.ndarray:
    """The vector whose cosine ranking is add's or 3cosadd's ranking, in float32."""
    return _in_float32(_total(terms, method)[0])


def _in_float32(v: np.ndarray) -> np.ndarray:
    """v as float32, scaled by a power of two when its norm is outside SAFE: a cosine does not change with
    the length of v, and then v fits in float32 and its fast scores have a bound."""
    n = norm(v)
    if n > 0 and not SAFE[0] <= n <= SAFE[1]:
        v = np.ldexp(v, -int(np.frexp(n)[1]))  # exact: only the exponents change
    return v.astype(np.float32)


# ---------------------------------------------------------------- 3cosmul, in log space
# A row's score is log(prod P) - log(prod N + 1e-6) = sum of log cos'(x, P) - g(sum of log cos'(x, N)), with
# g(z) = log(exp(z) + 1e-6). Its fast bounds come from one float64 matrix product of the rows with every
# term's unit vector (float32's bounds, summed over a thousand terms, would leave most rows in doubt): each
# fast cosine is within _PAD of the exact one, so each term's log within _PAD / m of its exact value, m a
# bound below 1 + cos for every term of that row; g moves less than its argument. The exact score of a row
# comes from its exact cosines (`ops.column_cosines`), term after term in the terms' order.

_U64 = 2.0**-53  # float64's unit roundoff
_LOG_EPS = math.log(1e-6)
_LN2 = math.log(2.0)
_CELLS = 1 << 21  # fast cosines held at once (rows x terms), 16 MB: a block of rows stays in cache
_ROWS = 2048  # rows of wte in float64 at a time, 12.6 MB for d = 768
_FEW = 16  # terms in all (of a pass's questions) scored by float32's product


def _pad(d: int) -> float:
    """A bound on |fast cosine - exact cosine| for the float64 product (ops.slack's, in float64's roundoff):
    every finite row is safe, as no product of float32 numbers under- or overflows float64."""
    return 8 * (d + 2) * _U64


def cosmul_rankings(wte: np.ndarray, questions: Sequence[Sequence[Signed]]) -> list[Ranking]:
    """Each question's 3cosmul ranking over the rows of wte, in log space: the fast pass for all questions
    together, a block of rows at a time (each term's vector must have a direction: `words.direction`)."""
    ordered = [in_order(terms) for terms in questions]
    vectors = [np.asarray(v, dtype=np.float64) for terms in ordered for _, v in terms]
    units = np.stack([v / norm(v) for v in vectors])
    spans = np.cumsum([0, *(len(terms) for terms in ordered)])
    n, d = wte.shape
    lo = [np.empty(n) for _ in ordered]
    hi = [np.empty(n) for _ in ordered]
    # a few terms: float32's product, whose bounds, summed over a few terms, stay narrow; else float64's
    few = len(units) <= _FEW
    kind, pad = (np.float32, slack(d)) if few else (np.float64, _pad(d))
    step = max(1, min(n, _ROWS, _CELLS // len(units)))
    # buffers used again block after block: memory touched anew costs more here than the products
    rows_buffer, fast_buffer = np.empty((step, d), dtype=kind), np.empty((step, len(units)), dtype=kind)
    towards = units.T.astype(kind)
    with np.errstate(all="ignore"):  # a row of NaN or inf gets no bound, not a warning
        for start in range(0, n, step):
            size = min(step, n - start)
            rows, fast = rows_buffer[:size], fast_buffer[:size]
            rows[...] = wte[start : start + size]
            norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))  # bounded, like the product
            np.matmul(rows, towards, out=fast)
            cosines = fast.astype(np.float64) if few else fast
            cosines /= np.where(norms > 0, norms, np.inf)[:, None]  # a zero row scores 0, exactly
            if few:  # float32's products under- or overflow outside SAFE: no bound
                cosines[~((norms == 0) | ((norms >= SAFE[0]) & (norms <= SAFE[1])))] = np.nan
            for q, terms in enumerate(ordered):
                block = cosines[:, spans[q] : spans[q + 1]]
                a, b = _log_bounds(block, sum(s > 0 for s, _ in terms), pad)
                lo[q][start : start + size], hi[q][start : start + size] = a, b
    for a, b in zip(lo, hi, strict=True):
        widen_nan_bounds(a, b)
    return [
        Ranking(a, b, _exact_for(wte, [v for _, v in terms], sum(s > 0 for s, _ in terms)))
        for a, b, terms in zip(lo, hi, ordered, strict=True)
    ]


def _log_bounds(fast: np.ndarray, positive: int, pad: float) -> tuple[np.ndarray, np.ndarray]:
    """lo <= exact log score <= hi for each row of a block of fast cosines (a column per term, the positive
    terms first), which become their logs in place. A row with a cosine near -1, or not finite, gets no
    bound: (-inf, inf). pad: how far a fast cosine may lie from the exact one."""
    count = fast.shape[1]
    logs = np.add(fast, 1, out=fast)
    least = logs.min(axis=1) - pad  # at most 1 + cos, for every term of the row
    np.log(logs, out=logs)
    tops = np.add.reduce(logs[:, :positive], axis=1) - positive * _LN2
    bottoms = np.add.reduce(logs[:, positive:], axis=1) - (count - positive) * _LN2
    width = pad / least  # how far each term's log may lie from its exact value
    slack = allowance(count, least)
    lo = tops - positive * width - np.logaddexp(bottoms + (count - positive) * width, _LOG_EPS) - slack
    hi = tops + positive * width - np.logaddexp(bottoms - (count - positive) * width, _LOG_EPS) + slack
    unbounded = ~(least > 0) | ~np.isfinite(lo) | ~np.isfinite(hi)
    lo[unbounded], hi[unbounded] = -np.inf, np.inf
    return lo, hi


def allowance(count: int, least: np.ndarray) -> np.ndarray:
    """What rounding may move a log score of count terms, in the bounds' sums and in the exact score's own:
    a float64 sum of n numbers is within (n - 1) roundoffs of the sum of their sizes, each log here at most
    1 - log(least / 2) in size (least: a bound below 1 + cos for every term), and the logs, shifts and the
    logaddexp add a few roundoffs each; (count + 2)^2 roundoffs of the largest, 8 times over, hold it all."""
    result: np.ndarray = 8 * (count + 2) ** 2 * _U64 * (1 - np.log(np.minimum(least, 1) / 2))
    return result


_AMONG = 4096  # the most distinct terms whose cosines with each other are kept (128 MB)


def _exact_for(
    wte: np.ndarray, vectors: list[np.ndarray], positive: int
) -> Callable[[np.ndarray], np.ndarray]:
    """The exact log score of rows by id. A term repeated is scored once; and as an input's rank needs its
    row scored against every term, the rows that are terms' vectors themselves (a word of one token) take
    their cosines from those of the distinct terms with each other: a symmetric matrix, half of it computed
    (the cosine of x with y is the one of y with x to the bit, as `ops.column_cosines` computes it)."""
    keys = [np.asarray(v, dtype=np.float32).tobytes() for v in vectors]
    index = {key: j for j, key in enumerate(dict.fromkeys(keys))}
    distinct = [np.frombuffer(key, dtype=np.float32) for key in index]
    column = np.array([index[key] for key in keys])
    among: list[np.ndarray] = []  # computed once, when first needed

    def cosines_among() -> np.ndarray:
        if not among:
            table = np.stack(distinct).astype(np.float64)
            norms = norms_of(table)
            both = np.empty((len(table), len(table)))
            for j in range(len(table)):
                both[j:, j] = column_cosines(table[j:], [table[j]], norms[j:])[:, 0]
                both[j, j:] = both[j:, j]
            among.append(both)
        return among[0]

    def exact(ids: np.ndarray) -> np.ndarray:
        rows = np.asarray(wte[ids], dtype=np.float32)
        found = np.array([index.get(row.tobytes(), -1) for row in rows], dtype=np.int64)
        known = found >= 0
        # the matrix costs half the rows' own cosines when they are all the terms: worth it from half on
        if len(distinct) > _AMONG or not (among or 2 * known.sum() > len(distinct)):
            known[:] = False
        cosines = np.empty((len(rows), len(distinct)))
        if known.any():
            cosines[known] = cosines_among()[found[known]]
        cosines[~known] = column_cosines(rows[~known], distinct)
        return log_cosmul(cosines[:, column], positive)

    return exact


def log_cosmul(cosines: np.ndarray, positive: int) -> np.ndarray:
    """3cosmul's log score of each row of exact cosines (a column per term, the positive terms first):
    -inf where a positive term's cosine is -1; NaN where a cosine is (a broken row)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log((1 + cosines) / 2)
        tops = np.add.reduce(np.ascontiguousarray(logs[:, :positive]), axis=1)
        bottoms = np.add.reduce(np.ascontiguousarray(logs[:, positive:]), axis=1)
        result: np.ndarray = tops - np.logaddexp(bottoms, _LOG_EPS)
    return result
