"""The evaluations' arithmetic: every analogy question answered in batches of numpy (exactly, as gensim's
evaluate_word_analogies ranks), and the Pearson and Spearman correlations of evaluate_word_pairs."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from gpt2emb import measures, ops
from gpt2emb.choices import Method
from gpt2emb.core.evaluate_files import RuleWords


def analogy_answers(
    wte: np.ndarray, vocab: RuleWords, abc: np.ndarray, method: Method, ignore_case: bool
) -> np.ndarray:
    """For each question (rows of indices a, b, c into the word vocabulary) the index of the predicted word;
    word i's row is wte[vocab.ids[i]].

    As gensim: b - a + c, the inputs themselves excluded, and the answer is the first of the best five whose
    word is not (case-folded) one of the inputs; -1 where all five are, or where an input's row holds NaN or
    inf (it points nowhere).

    Every method's score is a function of a candidate's dot products with the three inputs, and a file holds
    few distinct words: one matrix product of each block of candidates with those words, then a few additions
    (3cosmul: multiplications) per question and candidate, score every question fast. The fast scores only
    choose: every candidate whose bound reaches the best is scored again exactly (`_Questions.exact`), so an
    answer depends on its question and the table alone, never on the other questions of the file nor on how
    the matrix product was blocked and rounded.
    """
    answers = np.full(len(abc), -1, dtype=np.int64)
    q = _Questions.of(wte, vocab, abc, method, ignore_case)
    best = np.full(len(q.order), -np.inf)  # each question's best fast score so far (3cosmul: lower bound)
    held = _Held()
    for start, g, broken in q.products(wte, vocab):
        passes = q.tables(g)
        hidden = q.hidden_in(start, start + g.shape[1])
        for q0 in range(0, len(q.order), _CHUNK):
            q1 = min(q0 + _CHUNK, len(q.order))
            scores = q.fast(passes[0], q0, q1, hidden, start, broken)
            block_top = scores.max(axis=1)
            top = np.maximum(best[q0:q1], block_top)
            best[q0:q1] = top
            if len(passes) == 2:  # 3cosmul: best holds lower bounds, the upper bounds say who may reach them
                scores = q.fast(passes[1], q0, q1, hidden, start, broken)
                block_top = scores.max(axis=1)
            bar = top - q.reach[q0:q1]
            if scores.dtype.kind == "i":  # an integer reaches the bar when it reaches the bar rounded up
                bar = np.ceil(bar)
            near = np.flatnonzero((block_top >= bar) & (top > passes[0][3]))
            if len(near):
                # flatnonzero: numpy's nonzero of a 2-d mask is many times slower
                r, c = np.divmod(
                    np.flatnonzero(scores[near] >= bar[near, None].astype(scores.dtype)), scores.shape[1]
                )
                held.add(q0 + near[r], start + c, scores[near[r], c])
                if held.size > _HELD:
                    held.prune(best - q.reach, q, wte, vocab)
        held.prune(best - q.reach, q, wte, vocab)
    who, predicted, exact = held.winners(q, wte, vocab)
    if len(q.others[0]):  # another spelling of an input is no answer, but gensim sees the best five only
        oq, ox = q.others
        mine = np.isin(oq, who)
        oq, ox = oq[mine], ox[mine]
        at = np.searchsorted(who, oq)
        beaten = np.bincount(at, weights=q.exact(wte, vocab, oq, ox) > exact[at], minlength=len(who))
        predicted[beaten >= 5] = -1
    answers[q.order[who]] = predicted
    return answers


_BUDGET = 128 << 20  # bytes for a block of candidates: its rows, their products with the words, the tables
_CHUNK = 128  # questions scored together: a chunk by a block of scores stays in the processor's cache
_HELD = 1 << 20  # near-best (question, candidate) pairs held before the surplus is settled exactly
_EXACT = 1024  # pairs scored exactly at a time
_SCALE = 2.0**13  # additive scores are counted in steps of 1/_SCALE: three cosines sum within int16
_FLOOR = np.iinfo(np.int16).min  # below any additive score: a hidden candidate's
_OUT = (1 - 2.0**-20, 1 + 2.0**-20)  # 3cosmul's float32 bounds widened past the rounding of their operations


def _step(d: int, tables: int) -> int:
    """Candidates per block: 12 bytes for each number of their rows (float64, float32), 40 per table entry."""
    return int(np.clip(_BUDGET // (12 * d + 40 * tables), 1, 2048))


def _unit(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows as float64 unit vectors and their norms, each from its own row alone: a zero row stays zeros, a
    row holding NaN or inf (non-finite norm) becomes NaN."""
    x = np.array(rows, dtype=np.float64, ndmin=2)
    norms = measures.row_norms(x)
    with np.errstate(invalid="ignore"):
        x /= np.where(norms > 0, norms, 1.0)[:, None]
    x[~np.isfinite(norms)] = np.nan
    return x, norms


def _combine(method: Method, cos: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Exact scores from each candidate's cosines with a, b, c (columns) and those inputs' norms."""
    if method is Method.cosmul:
        sa, sb, sc = ((1 + cos[:, i]) / 2 for i in range(3))
        result: np.ndarray = sb * sc / (sa + 1e-6)
    elif method is Method.cosadd:
        result = cos[:, 1] - cos[:, 0] + cos[:, 2]
    else:  # (b - a + c) . unit(x) on the raw rows: the cosine would divide by |b - a + c|, the same for all x
        result = norms[:, 1] * cos[:, 1] - norms[:, 0] * cos[:, 0] + norms[:, 2] * cos[:, 2]
    return result


# pair table, word table, how a question joins them, and the value of a hidden candidate, below any score
_Pass = tuple[np.ndarray, np.ndarray, np.ufunc, float]


@dataclass(frozen=True)
class _Questions:
    """The questions in the order they are scored: those whose inputs all have a direction, grouped by their
    pair (a, b) and then by c, so the rows a chunk gathers lie together. Their words are columns into the
    file's distinct words."""

    method: Method
    order: np.ndarray  # position in abc of each scored question
    cols: np.ndarray  # (questions, 3): the columns of a, b, c
    pair: np.ndarray  # each question's pair
    pair_cols: np.ndarray  # (pairs, 2): the columns of a pair's a and b
    words: np.ndarray  # the file's distinct words (indices into the vocabulary)
    unit_words: np.ndarray  # their float64 unit rows
    norms: np.ndarray  # their norms
    # the file's words as the fast pass sees them: float32 unit rows, for the additive methods times
    # _SCALE (and for `add` times their norm over the largest: a positive factor changes no ranking)
    fast_words: np.ndarray
    slack: float  # bound on |fast cosine - exact cosine|
    reach: np.ndarray  # how far below the best fast score a question's candidate may lie and still win
    hidden: tuple[np.ndarray, np.ndarray]  # (question, candidate) pairs that are never answers, by candidate
    others: tuple[np.ndarray, np.ndarray]  # (question, candidate): the other spellings of its inputs

    @staticmethod
    def of(
        wte: np.ndarray, vocab: RuleWords, abc: np.ndarray, method: Method, ignore_case: bool
    ) -> _Questions:
        words, cols = np.unique(abc, return_inverse=True)
        cols = cols.reshape(-1, 3)
        unit_words, norms = _unit(wte[vocab.ids[words]])
        finite = np.isfinite(norms)
        live = np.flatnonzero(finite[cols].all(axis=1))
        pairs, pair = np.unique(cols[live, 0] * len(words) + cols[live, 1], return_inverse=True)
        by = np.lexsort((cols[live, 2], pair))
        order, pair, cols = live[by], pair[by], cols[live[by]]
        weight = np.where(finite, 1.0 if method is Method.cosmul else _SCALE, 0.0)
        top = float(norms[finite].max(initial=0.0))
        if method is Method.add:
            weight *= np.where(finite, norms, 0.0) / top if top > 0 else 0.0
        slack = ops.slack(wte.shape[1])
        # the additive methods: each weighted cosine is within weight * slack of the exact one (slack covers
        # the rounding of the weighted rows to float32 too), then rounded to a whole step (half a step each),
        # and the integer additions are exact; 1% more for the rest. So a candidate whose fast score lies two
        # such widths below the best cannot win.
        width = 1.01 * (slack * weight[cols].sum(axis=1) + 1.5)
        reach = np.zeros(len(order)) if method is Method.cosmul else 2 * width
        inputs = (np.repeat(np.arange(len(order)), 3), abc[order].ravel())
        rows = abc[order] if ignore_case else abc[:0]
        spelt = [(i, s) for i, row in enumerate(rows) for s in vocab.spellings(row)]
        others = tuple(np.array(spelt, dtype=np.int64).reshape(-1, 2).T)
        hq, hx = np.concatenate([inputs[0], others[0]]), np.concatenate([inputs[1], others[1]])
        by = np.argsort(hx, kind="stable")
        return _Questions(
            method,
            order,
            cols,
            pair,
            np.stack([pairs // len(words), pairs % len(words)], axis=1),
            words,
            unit_words,
            norms,
            np.where(finite[:, None], unit_words * weight[:, None], 0.0).astype(np.float32),
            slack,
            reach,
            (hq[by], hx[by]),
            (others[0], others[1]),
        )

    def products(self, wte: np.ndarray, vocab: RuleWords) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Block by block of candidates: the first one's index, the fast dot products of the file's words with
        them (words x candidates, one matrix product), and those that have no direction (never an answer)."""
        step = _step(wte.shape[1], len(self.words) + len(self.pair_cols))
        for start in range(0, len(vocab.ids) if len(self.order) else 0, step):
            rows, norms = _unit(wte[vocab.ids[start : start + step]])
            broken = np.flatnonzero(~np.isfinite(norms))
            rows[broken] = 0.0
            yield start, self.fast_words @ rows.astype(np.float32).T, broken

    def tables(self, g: np.ndarray) -> list[_Pass]:
        """From one block's fast cosines (words x candidates), the tables a question's scores join: for the
        additive methods one pass (a score; the exact one lies within reach/2 of it), for 3cosmul a pass of
        lower bounds and one of upper bounds."""
        pa, pb = self.pair_cols[:, 0], self.pair_cols[:, 1]
        if self.method is Method.cosmul:
            g64 = g.astype(np.float64)
            lo, hi = (np.clip((1 + g64 + s) / 2, 0.0, 1.0) for s in (-self.slack, self.slack))
            return [
                (
                    (lo[pb] / (hi[pa] + 1e-6) * _OUT[0]).astype(np.float32),
                    (lo * _OUT[0]).astype(np.float32),
                    np.multiply,
                    -np.inf,
                ),
                (
                    (hi[pb] / (lo[pa] + 1e-6) * _OUT[1]).astype(np.float32),
                    (hi * _OUT[1]).astype(np.float32),
                    np.multiply,
                    -np.inf,
                ),
            ]
        steps = np.rint(g, out=g).astype(np.int16)
        return [(steps[pb] - steps[pa], steps, np.add, _FLOOR)]

    def hidden_in(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """The hidden (question, candidate) pairs of candidates start..end, by question."""
        hq, hx = self.hidden
        lo, hi = np.searchsorted(hx, [start, end])
        by = np.argsort(hq[lo:hi], kind="stable")
        return hq[lo:hi][by], hx[lo:hi][by]

    def fast(
        self,
        tables: _Pass,
        q0: int,
        q1: int,
        hidden: tuple[np.ndarray, np.ndarray],
        start: int,
        broken: np.ndarray,
    ) -> np.ndarray:
        """Questions q0..q1 by a block's candidates (from `start`): float32 scores, -inf where hidden."""
        pair_table, word_table, join, floor = tables
        scores: np.ndarray = pair_table[self.pair[q0:q1]]
        join(scores, word_table[self.cols[q0:q1, 2]], out=scores)
        hq, hx = hidden
        lo, hi = np.searchsorted(hq, [q0, q1])
        scores[hq[lo:hi] - q0, hx[lo:hi] - start] = floor
        scores[:, broken] = floor
        return scores

    def exact(
        self, wte: np.ndarray, vocab: RuleWords, questions: np.ndarray, candidates: np.ndarray
    ) -> np.ndarray:
        """Each (question, candidate) pair's exact score, in float64 from the rows involved alone: each dot
        product summed along its own row, whichever pairs are asked with it; NaN for a row of no direction."""
        out = np.empty(len(candidates))
        for i in range(0, len(candidates), _EXACT):
            x, _ = _unit(wte[vocab.ids[candidates[i : i + _EXACT]]])
            cols = self.cols[questions[i : i + _EXACT]]
            cos = np.stack([(x * self.unit_words[cols[:, j]]).sum(axis=1) for j in range(3)], axis=1)
            out[i : i + len(x)] = _combine(self.method, cos, self.norms[cols])
        return out


class _Held:
    """The candidates that may be their question's answer: the question (its place in the scored order), the
    candidate, and the fast value that let it in."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.size = 0

    def add(self, question: np.ndarray, candidate: np.ndarray, value: np.ndarray) -> None:
        self.parts.append((question, candidate, value))
        self.size += len(question)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
        question, candidate, value = (np.concatenate(p) for p in zip(*self.parts, strict=True))
        return question, candidate, value

    def prune(self, bar: np.ndarray, q: _Questions, wte: np.ndarray, vocab: RuleWords) -> None:
        """Drop the candidates below their question's bar; if near-ties (rows repeated) still hold too many,
        keep each question's exact best, which is the best of the rest too."""
        question, candidate, value = self._arrays()
        kept = value >= bar[question]
        question, candidate, value = question[kept], candidate[kept], value[kept]
        if len(question) > _HELD:
            won, _ = _best(q, wte, vocab, question, candidate)
            question, candidate, value = question[won], candidate[won], value[won]
        self.parts, self.size = [(question, candidate, value)], len(question)

    def winners(
        self, q: _Questions, wte: np.ndarray, vocab: RuleWords
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The questions that have an answer (in order), their answers and their exact scores."""
        question, candidate, _ = self._arrays()
        won, exact = _best(q, wte, vocab, question, candidate)
        return question[won], candidate[won], exact


def _best(
    q: _Questions, wte: np.ndarray, vocab: RuleWords, question: np.ndarray, candidate: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each question's exact best candidate (ties: the smaller index), as places in the arrays ordered by
    question, and its exact score."""
    exact = np.nan_to_num(q.exact(wte, vocab, question, candidate), nan=-np.inf)
    order = np.lexsort((candidate, -exact, question))
    first = order[np.r_[True, question[order][1:] != question[order][:-1]]] if len(order) else order
    return first, exact[first]


def spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    """Spearman's rho: Pearson's r of the ranks (ties share their average rank), as scipy.stats.spearmanr.
    None when undefined: a NaN (it has no rank), or a list holding one value repeated."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if np.isnan(x).any() or np.isnan(y).any():
        return None
    return pearson(_ranks(x), _ranks(y))


def constant(x: np.ndarray) -> bool:
    """One value repeated: no correlation with it is defined. (Compared, never subtracted: the spread of
    1e308 and -1e308 overflows.)"""
    x = np.asarray(x, dtype=np.float64)
    return bool(len(x)) and bool(x.max() == x.min())


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r = (x . y) / sqrt((x . x)(y . y)) of the two lists centred (`_centred`), so that scores at
    any scale give the r of the same scores scaled down: 1e308, -1e308, 5e307 give what 1, -1, 0.5 give, where
    squaring them overflows. A list with itself gives 1.0 exactly (the square root of a square is the number
    back), so identical rankings have a spearman of 1.0. None when undefined: a value that is not finite, or
    a list holding one value repeated."""
    a, b = _centred(x), _centred(y)
    if a is None or b is None:
        return None
    # |r| <= 1 in exact numbers; rounding alone takes it past
    return float(np.clip((a @ b) / math.sqrt((a @ a) * (b @ b)), -1.0, 1.0))


def _centred(x: np.ndarray) -> np.ndarray | None:
    """x less its mean, in float64 and scaled, or None when it has no direction (r is undefined then).

    Scaled first by the power of two at or above its largest magnitude: exact, and after it no square or sum
    can overflow, nor can the centred values all round to zero when the values differ (their least
    difference is far above float64's smallest normal number then, and so is the product of two sums of
    squares), so a list that is not one value repeated always has a direction."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2 or not np.isfinite(x).all() or constant(x):
        return None
    _, exponent = np.frexp(np.abs(x).max())
    x = np.ldexp(x, -int(exponent))  # within (-1, 1)
    x -= x.mean()
    return x if x @ x > 0 else None


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their average rank."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    edges = np.flatnonzero(np.r_[True, x[order][1:] != x[order][:-1], True])
    ranked = np.repeat((edges[:-1] + edges[1:] + 1) / 2, np.diff(edges))
    ranks = np.empty(len(x))
    ranks[order] = ranked
    return ranks
