"""sums.py: an analogy's sum as numbers, each figure against an independent computation: gensim in float64
(so that parity is tight enough to see 3cosmul's epsilon), float64 loops written out from the definitions,
and numpy in log space for sums of up to 2,000 terms; and whether a sum cancels, for each method apart."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models import KeyedVectors
from hypothesis import given, settings
from hypothesis import strategies as st

from gpt2emb import ops, sums
from gpt2emb.choices import Method

from conftest import FUZZ, FUZZ_PROFILE

REL = 1e-9  # float64 against float64, summed in other orders: far below any changed constant


def abc(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> list[sums.Signed]:
    """A - B + C as the signed terms of sums' functions."""
    return [(1, a), (-1, b), (1, c)]


def unit64(rows: np.ndarray) -> np.ndarray:
    w = rows.astype(np.float64)
    return np.array([r / np.linalg.norm(r) for r in w])


def cos64(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x.astype(np.float64), y.astype(np.float64)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def gensim64(wte: np.ndarray) -> KeyedVectors:
    """gensim over the same numbers widened to float64: it computes in its vectors' dtype."""
    kv = KeyedVectors(vector_size=wte.shape[1], dtype=np.float64)
    kv.add_vectors([f"t{i}" for i in range(len(wte))], wte.astype(np.float64))
    return kv


def brute_top(exact: np.ndarray, k: int, exclude: tuple[int, ...]) -> list[int]:
    return sorted((i for i in range(len(exact)) if i not in exclude), key=lambda i: (-exact[i], i))[:k]


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


def log_oracle(wte: np.ndarray, signs: list[int], ids: list[int], method: Method) -> np.ndarray:
    """Each row's score for the signed sum of rows ids, by numpy in float64: add and 3cosadd as cosines with
    the sum, 3cosmul as the log of gensim's product (sum of log cos' over the positive terms, less the log
    of the negative terms' product plus 1e-6)."""
    unit = unit64(wte)
    s = np.array(signs, dtype=np.float64)
    if method is Method.add:
        total = s @ wte[ids].astype(np.float64)
        return np.asarray(unit @ total / np.linalg.norm(total))
    if method is Method.cosadd:
        total = s @ unit[ids]
        return np.asarray(unit @ total / np.linalg.norm(total))
    with np.errstate(divide="ignore"):
        logs = np.log((1 + np.clip(unit @ unit[ids].T, -1, 1)) / 2)
    return np.asarray(logs[:, s > 0].sum(axis=1) - np.logaddexp(logs[:, s < 0].sum(axis=1), np.log(1e-6)))


def ranking_of(wte: np.ndarray, signed: list[sums.Signed], method: Method) -> ops.Ranking:
    if method is Method.cosmul:
        (ranking,) = sums.cosmul_rankings(wte, [signed])
        return ranking
    norms = np.linalg.norm(wte.astype(np.float64), axis=1).astype(np.float32)
    (ranking,) = ops.cosine_rankings(wte, norms, [sums.analogy_vector(signed, method)])
    return ranking


def within_ties(rank: int, scores: np.ndarray, s: float, tol: float) -> bool:
    """A rank is right when it counts the rows surely above s, and at most those within tol of it too."""
    return int((scores > s + tol).sum()) + 1 <= rank <= int((scores > s - tol).sum()) + 1


# ---------------------------------------------------------------- 3cosmul, against gensim and the definition


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`")  # inside gensim's most_similar_cosmul
def test_3cosmul_equals_gensim_where_its_epsilon_counts() -> None:
    wte, a, b, c = near_opposite(np.random.default_rng(5), 64, 16)
    (ranking,) = sums.cosmul_rankings(wte, [abc(wte[a], wte[b], wte[c])])
    got = ranking.top(20, exclude=(a, b, c))
    expected = gensim64(wte).most_similar_cosmul(positive=[f"t{a}", f"t{c}"], negative=[f"t{b}"], topn=20)
    assert [i for i, _ in got] == [int(key[1:]) for key, _ in expected]
    assert np.exp([s for _, s in got]) == pytest.approx([s for _, s in expected], rel=REL)
    loop = cosmul_loop(wte, a, b, c)
    assert np.exp(ranking.scores(np.arange(len(wte)))) == pytest.approx(loop, rel=REL)
    # the table is one where the epsilon shows: twice as large, and the top scores move by far more than REL
    top = [i for i, _ in got]
    assert cosmul_loop(wte, a, b, c, eps=2e-6)[top] != pytest.approx(loop[top], rel=1e-4)


@pytest.fixture(params=["float32", "float64"])
def product(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fast pass of a few terms is float32's product, of many float64's: both, on the same table."""
    if request.param == "float64":
        monkeypatch.setattr(sums, "_FEW", 0)
    return str(request.param)


@pytest.mark.parametrize("seed", [31, 37])
def test_3cosmul_bounds_hold_every_exact_score(seed: int, product: str) -> None:
    wte, a, b, c = near_opposite(np.random.default_rng(seed), 80, 12)
    (ranking,) = sums.cosmul_rankings(wte, [abc(wte[a], wte[b], wte[c])])
    loop = np.log(cosmul_loop(wte, a, b, c))
    exact = ranking.scores(np.arange(len(wte)))
    assert exact == pytest.approx(loop, rel=REL, abs=REL)
    assert (ranking.lo <= exact).all() and (exact <= ranking.hi).all()
    assert np.isfinite(ranking.lo).all()
    # float64's bounds are tight; float32's, summed over many terms, would leave most rows in doubt
    assert (ranking.hi - ranking.lo).max() < (1e-8 if product == "float64" else 0.2)
    assert [i for i, _ in ranking.top(6, (a, b, c))] == brute_top(loop, 6, (a, b, c))


@pytest.mark.parametrize("negative", [1, 5, 40])
def test_3cosmul_bounds_hold_with_more_negative_terms_than_positive(negative: int, product: str) -> None:
    """The negative terms' product bounds the score the other way round: its upper bound widens the
    score's lower one, and its lower bound its upper one."""
    rng = np.random.default_rng(59 + negative)
    wte = rng.standard_normal((300, 16)).astype(np.float32)
    signed = [(1, wte[0]), *((-1, wte[i]) for i in range(1, negative + 1))]
    (ranking,) = sums.cosmul_rankings(wte, [signed])
    exact = ranking.scores(np.arange(300))
    assert (ranking.lo <= exact).all() and (exact <= ranking.hi).all()


def test_3cosmul_bounds_hold_for_hard_rows(product: str) -> None:
    """Zero rows score as cos 0; rows of NaN or inf, and a row exactly opposite a positive term (its log is
    -inf), get no bound and never hide the others; rows of extreme scale are bounded by float64's product,
    and not by float32's, whose products under- and overflow."""
    rng = np.random.default_rng(41)
    wte = rng.standard_normal((40, 24)).astype(np.float32)
    wte[10] = 0.0
    wte[11] = np.nan
    wte[12, 3] = np.inf
    wte[13] = -wte[0]  # cos(x, A) = -1: a product of 0
    wte[14] *= np.float32(1e-40)  # subnormal float32 numbers
    wte[15] *= np.float32(3e37)
    (ranking,) = sums.cosmul_rankings(wte, [abc(wte[0], wte[1], wte[2])])
    exact = ranking.scores(np.arange(40))
    assert exact[13] == -np.inf and np.isnan(exact[11]) and np.isnan(exact[12])
    finite = np.isfinite(exact)
    assert ((ranking.lo[finite] <= exact[finite]) & (exact[finite] <= ranking.hi[finite])).all()
    assert np.isfinite(ranking.lo[[14, 15]]).all() == (product == "float64")
    assert exact[10] == pytest.approx(np.log(0.5 * 0.5 / (0.5 + 1e-6)), rel=REL)  # a zero row: cos' 0.5
    best = [i for i, _ in ranking.top(40, (0, 1, 2))]
    assert best[-2:] in ([11, 12], [12, 11]) and best[-3] == 13  # NaN last, then the product of 0


# ---------------------------------------------------------------- add and 3cosadd's vector


def analogy_exact(wte: np.ndarray, a: int, b: int, c: int, method: Method) -> np.ndarray:
    w = wte.astype(np.float64)
    unit = unit64(wte)
    target = w[a] - w[b] + w[c] if method is Method.add else unit[a] - unit[b] + unit[c]
    scores: np.ndarray = unit @ (target / np.linalg.norm(target))
    return scores


@pytest.mark.parametrize("method", [Method.add, Method.cosadd])
@pytest.mark.parametrize("scale", [3.0, 3e38], ids=["ordinary", "near float32's largest"])
def test_analogy_vectors_rank_as_the_definitions(method: Method, scale: float) -> None:
    rng = np.random.default_rng(23)
    wte = rng.standard_normal((50, 8))
    wte[:3] *= [[1.0], [0.2], [3.0]]  # raw lengths that make add and 3cosadd differ
    wte = (wte / np.abs(wte).max() * scale).astype(np.float32)
    wte[0, 0], wte[1, 0], wte[2, 0] = scale, -scale / 3, scale  # at 3e38, a - b + c is past float32
    vector = sums.analogy_vector(abc(wte[0], wte[1], wte[2]), method)
    assert vector.dtype == np.float32 and np.isfinite(vector).all()
    with np.errstate(over="ignore"):  # a row near 3e38 has a norm past float32, as a cache stores it: inf
        norms = np.array([np.linalg.norm(r.astype(np.float64)) for r in wte]).astype(np.float32)
    (ranking,) = ops.cosine_rankings(wte, norms, [vector])
    exact = analogy_exact(wte, 0, 1, 2, method)
    assert ranking.scores(np.arange(50)) == pytest.approx(exact, rel=1e-6, abs=1e-7)  # a float32 vector
    assert [i for i, _ in ranking.top(5, (0, 1, 2))] == brute_top(exact, 5, (0, 1, 2))
    assert (ranking.lo <= exact + 1e-6).all() and (exact - 1e-6 <= ranking.hi).all()
    if scale == 3.0:  # rows and vector of safe norms: every row has a bound
        assert np.isfinite(ranking.lo).all()


def test_3cosadd_with_a_zero_input_leaves_it_out_and_a_huge_vector_gets_a_bound() -> None:
    rng = np.random.default_rng(29)
    wte = rng.standard_normal((30, 6)).astype(np.float32)
    zero = np.zeros(6, dtype=np.float32)
    v = sums.analogy_vector(abc(wte[0], zero, wte[2]), Method.cosadd)
    expected = unit64(wte[[0]])[0] + unit64(wte[[2]])[0]
    assert cos64(v, expected) == pytest.approx(1.0, abs=1e-7)
    far = sums.analogy_vector(abc(wte[0] * np.float32(2.0**60), wte[1], wte[2]), Method.add)
    assert np.isfinite(far).all() and 2.0**-40 <= np.linalg.norm(far.astype(np.float64)) <= 2.0**40
    assert cos64(far, wte[0].astype(np.float64) * 2.0**60 - wte[1] + wte[2]) == pytest.approx(1.0, abs=1e-7)


# ---------------------------------------------------------------- a sum that cancels, for each method apart


def planted() -> np.ndarray:
    """Rows where q - k + m - w cancels as raw rows but not as unit vectors (their lengths differ), and
    a - b, b = 2a, cancels as unit vectors but not as raw rows."""
    rng = np.random.default_rng(43)
    wte = rng.standard_normal((20, 8)).astype(np.float32)
    x, y, z = wte[10], wte[11] * np.float32(3), wte[12] * np.float32(0.5)
    wte[0], wte[1], wte[2], wte[3] = x + y, x, z, y + z  # (x + y) - x + z - (y + z) = 0
    wte[5] = 2 * wte[4]
    return wte


def test_a_sum_cancels_only_as_the_method_ranks_it() -> None:
    wte = planted()
    raw_zero = [(1, wte[0]), (-1, wte[1]), (1, wte[2]), (-1, wte[3])]
    unit_zero = [(1, wte[4]), (-1, wte[5])]
    assert sums.cancels(raw_zero, Method.add) and not sums.cancels(raw_zero, Method.cosadd)
    assert sums.cancels(unit_zero, Method.cosadd) and not sums.cancels(unit_zero, Method.add)
    assert not sums.cancels(raw_zero, Method.cosmul) and not sums.cancels(unit_zero, Method.cosmul)
    # nor is a sum refused that is far from cancelling: the threshold is relative to the terms' sizes
    assert not sums.cancels([(1, wte[6]), (-1, wte[6] * np.float32(1.001))], Method.add)
    assert sums.cancels([(1, wte[6]), (-1, wte[6] * np.float32(1 + 2e-7))], Method.add)


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`")
def test_what_cancels_in_one_form_is_ranked_in_the_other_as_gensim_does() -> None:
    """q - k + m - w (raw rows cancel): 3cosadd and 3cosmul rank it as gensim's most_similar and
    most_similar_cosmul; a - 2a (unit vectors cancel): add ranks it as the cosine with -a."""
    wte = planted()
    kv = gensim64(wte)
    signed = [(1, wte[0]), (-1, wte[1]), (1, wte[2]), (-1, wte[3])]
    inputs = (0, 1, 2, 3)
    for method, peer in ((Method.cosadd, kv.most_similar), (Method.cosmul, kv.most_similar_cosmul)):
        ranking = ranking_of(wte, signed, method)
        got = ranking.top(5, inputs)
        expected = peer(positive=["t0", "t2"], negative=["t1", "t3"], topn=5)
        assert [i for i, _ in got] == [int(key[1:]) for key, _ in expected], method
        shown = np.exp([s for _, s in got]) if method is Method.cosmul else [s for _, s in got]
        assert shown == pytest.approx([s for _, s in expected], rel=1e-6), method
    add = ranking_of(wte, [(1, wte[4]), (-1, wte[5])], Method.add)
    expected_add = unit64(wte) @ (-wte[4].astype(np.float64) / np.linalg.norm(wte[4]))
    assert [i for i, _ in add.top(5, (4, 5))] == brute_top(expected_add, 5, (4, 5))


# ---------------------------------------------------------------- long sums: each input's rank


def ranks_against_oracle(wte: np.ndarray, signs: list[int], ids: list[int], method: Method) -> None:
    signed = [(s, wte[i]) for s, i in zip(signs, ids, strict=True)]
    ranking = ranking_of(wte, signed, method)
    oracle = log_oracle(wte, signs, ids, method)
    asked = sorted(set(ids))
    for i, (rank, score) in zip(asked, ranking.ranks(asked), strict=True):
        tol = 1e-9 * (1 + abs(oracle[i]))  # two computations in float64, in other orders
        if method is not Method.cosmul:  # a float32 vector against a float64 one
            tol = 1e-6
        assert score == pytest.approx(oracle[i], abs=tol), (i, method)
        assert within_ties(rank, oracle, oracle[i], tol), (i, rank, method)


@settings(FUZZ, max_examples=25 if FUZZ_PROFILE == "ci" else 500)
@given(
    count=st.one_of(st.integers(2, 20), st.integers(2, 2000)),
    method=st.sampled_from(list(Method)),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_input_ranks_as_numpy_in_log_space(count: int, method: Method, seed: int) -> None:
    """Sums of 2 to 2,000 random signed rows (repeats among them) of a table of 343 x 32, as the docs' tiny
    model: every input's rank and score are numpy's, for every method."""
    rng = np.random.default_rng(seed)
    wte = (rng.standard_normal((343, 32)) * rng.uniform(0.05, 2.0, (343, 1))).astype(np.float32)
    ids = rng.integers(0, 343, count).tolist()
    signs = [1, *rng.choice([1, -1], count - 1).tolist()]
    if method is not Method.cosmul:
        signed = [(s, wte[i]) for s, i in zip(signs, ids, strict=True)]
        if sums.cancels(signed, method):
            return
    ranks_against_oracle(wte, signs, ids, method)


@pytest.mark.parametrize("count", [300, 1000, 2000])
def test_the_inputs_of_a_long_3cosmul_sum_rank_where_numpy_puts_them(count: int) -> None:
    """The issue's sums: float32 bounds multiplied in a Python float underflowed below 1e-38, an upper bound
    fell below the exact score, and 294 of 300 inputs ranked wrong; with 1000 terms, every one at 1."""
    rng = np.random.default_rng(count)
    wte = rng.standard_normal((343, 32)).astype(np.float32)
    ids = rng.integers(1, 343, count).tolist()
    signs = [1, *rng.choice([1, -1], count - 1).tolist()]
    ranks_against_oracle(wte, signs, ids, Method.cosmul)
    ranking = ranking_of(wte, [(s, wte[i]) for s, i in zip(signs, ids, strict=True)], Method.cosmul)
    assert len({rank for rank, _ in ranking.ranks(sorted(set(ids)))}) > 10


@pytest.mark.parametrize("scale", [2.0**-70, 1e-3, 3.0, 2.0**50])
def test_add_s_vector_is_the_sum_itself_where_float32_holds_it_and_scaled_by_two_elsewhere(
    scale: float,
) -> None:
    """A sum whose norm float32's fast pass bounds is handed on as it is (the figure draws it); a sum of a
    norm outside SAFE is scaled by a power of two into it, its direction to the bit."""
    rng = np.random.default_rng(47)
    a, b, c = (rng.standard_normal(8) * scale for _ in range(3))
    a32, b32, c32 = (x.astype(np.float32) for x in (a, b, c))
    v = sums.analogy_vector([(1, a32), (-1, b32), (1, c32)], Method.add)
    total = a32.astype(np.float64) - b32 + c32
    size = np.linalg.norm(total)
    if ops.SAFE[0] <= size <= ops.SAFE[1]:
        assert np.array_equal(v, total.astype(np.float32))
    else:
        assert ops.SAFE[0] <= np.linalg.norm(v.astype(np.float64)) <= ops.SAFE[1]
        power = v.astype(np.float64) / total
        assert np.allclose(power, power[0], rtol=1e-6) and np.log2(power[0]) == round(np.log2(power[0]))


def test_3cosmul_rankings_do_not_depend_on_the_blocks_of_rows_or_of_questions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A table of 45 rows in blocks of 7 (the last block short), two questions in one pass: each question's
    bounds and exact scores are those it has alone, in one block."""
    rng = np.random.default_rng(53)
    wte = rng.standard_normal((45, 10)).astype(np.float32)
    questions = [abc(wte[0], wte[1], wte[2]), [(1, wte[3]), (-1, wte[4])]]
    alone = [sums.cosmul_rankings(wte, [q])[0] for q in questions]
    monkeypatch.setattr(sums, "_ROWS", 7)
    together = sums.cosmul_rankings(wte, questions)
    for a, b in zip(alone, together, strict=True):
        assert np.array_equal(a.lo, b.lo) and np.array_equal(a.hi, b.hi)
        assert np.array_equal(a.scores(np.arange(45)), b.scores(np.arange(45)))


def test_the_rounding_allowance_is_the_documented_one_and_holds_what_rounding_moves() -> None:
    """(count + 2)^2 roundoffs of the largest log, 8 times over: at 1,000 terms with every cosine near -0.5
    it is 1.8e-9, and the log score summed in another order moves by far less."""
    least = np.array([0.5, 1.0, 2.0])
    expected = 8 * 1002**2 * 2.0**-53 * (1 - np.log(np.array([0.25, 0.5, 0.5])))
    assert sums.allowance(1000, least) == pytest.approx(expected, rel=1e-12)
    rng = np.random.default_rng(61)
    cosines = rng.uniform(-0.5, 1.0, (200, 1000))
    exact = sums.log_cosmul(cosines, 600)
    tops, bottoms = cosines[:, rng.permutation(600)], cosines[:, 600 + rng.permutation(400)]
    other = sums.log_cosmul(np.concatenate([tops, bottoms], axis=1), 600)  # the same terms, another order
    assert np.abs(exact - other).max() < sums.allowance(1000, np.array([0.5]))[0] / 100
