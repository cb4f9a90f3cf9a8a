"""core/evaluate_scoring.py: the evaluations' arithmetic, against independent computations.

Every analogy question is answered as gensim's evaluate_word_analogies ranks it, close calls included, and the
Pearson and Spearman correlations are scipy's."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2emb.choices import Method, Rule
from gpt2emb.core import evaluate_files, evaluate_scoring

from benchmarks import spelled, vocabulary


def test_ranks_and_correlations() -> None:
    x = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
    np.testing.assert_array_equal(evaluate_scoring._ranks(x), [4, 1, 2.5, 2.5, 5])
    assert evaluate_scoring.pearson(x, 2 * x + 1) == pytest.approx(1.0)
    assert evaluate_scoring.spearman(x, -(x**3)) == pytest.approx(-1.0)


def reference(
    wte: np.ndarray, words: evaluate_files.RuleWords, abc: np.ndarray, method: Method, ignore_case: bool
) -> list[int]:
    """Every candidate scored exactly, row by row in float64, then gensim's rule: no fast pass to trust."""
    x = wte[words.ids].astype(np.float64)
    n = np.sqrt((x * x).sum(axis=1))
    u = x / n[:, None]
    answers = []
    for a, b, c in abc.tolist():
        ca, cb, cc = ((u * u[w]).sum(axis=1) for w in (a, b, c))
        if method is Method.cosadd:
            s = cb - ca + cc
        elif method is Method.add:
            s = n[b] * cb - n[a] * ca + n[c] * cc
        else:
            s = ((1 + cb) / 2) * ((1 + cc) / 2) / ((1 + ca) / 2 + 1e-6)
        s[[a, b, c]] = -np.inf
        others = words.spellings(np.array([a, b, c])) if ignore_case else []
        spelt = s[others].copy()
        s[others] = -np.inf
        best = int(np.argmax(s))  # ties: the smaller index
        answers.append(-1 if (spelt > s[best]).sum() >= 5 else best)
    return answers


def near_ties(seed: int = 6) -> tuple[np.ndarray, list[str], np.ndarray, list[list[int]]]:
    """Random rows and questions; after them, for each question a family of six rows pointing where its
    answer lies (b - a + c of the unit rows), scaled apart, some a little spread: their exact scores differ by
    1e-8 (below what float32 resolves) to 1e-4 (about the rounding of the fast pass). For every other question
    five of the six are other spellings of its c; in family 2 the best row (3cosadd) is copied, to the bit,
    onto the family's first row."""
    rng = np.random.default_rng(seed)
    d, n_base, n_q = 24, 120, 30
    names: list[str] = []
    while len(names) < n_base + n_q:
        w = "".join(rng.choice(list("bcdfghjklmnpqrstvwxz"), 3))
        if w not in names:
            names.append(w)
    fresh = names[n_base:]
    del names[n_base:]
    rows = [rng.standard_normal(d) for _ in names]
    abc = np.array([rng.choice(n_base, 3, replace=False) for _ in range(n_q)])
    abc[:, 2] = rng.permutation(n_base)[:n_q]  # each c once: its spellings are added once
    abc[:, :2] = np.where(abc[:, :2] == abc[:, 2:], (abc[:, 2:] + 1) % n_base, abc[:, :2])
    families = []
    for i, (a, b, c) in enumerate(abc.tolist()):
        unit = [rows[w] / np.linalg.norm(rows[w]) for w in (a, b, c)]
        target = unit[1] - unit[0] + unit[2]
        w = names[c]
        spelt = [w[:k] + w[k].upper() + w[k + 1 :] for k in range(3)] + [w.upper(), w[:2].upper() + w[2]]
        family = [*spelt, fresh[i]] if i % 2 else [*(fresh[i] + s for s in "aeiou"), fresh[i]]
        families.append(list(range(len(names), len(names) + len(family))))
        names += family
        spread = (0.0, 1e-3, 3e-3)[i % 3] * np.linalg.norm(target)  # nothing but rounding; 1e-6 to 1e-4
        rows += [target * s + spread * rng.standard_normal(d) for s in rng.uniform(0.5, 2.0, len(family))]
    wte = np.array(rows, dtype=np.float32)
    u = wte.astype(np.float64) / np.linalg.norm(wte.astype(np.float64), axis=1)[:, None]
    a, b, c = abc[2]
    best = max(families[2], key=lambda x: float(u[x] @ (u[b] - u[a] + u[c])))
    wte[families[2][0]] = wte[best]
    return wte, names, abc, families


@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("ignore_case", [False, True])
def test_close_calls_are_settled_exactly_whatever_else_is_asked(
    method: Method, ignore_case: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    wte, names, abc, families = near_ties()
    words = vocabulary(names, ignore_case)
    assert words.words == names
    expected = reference(wte, words, abc, method, ignore_case)
    together = evaluate_scoring.analogy_answers(wte, words, abc, method, ignore_case)
    assert together.tolist() == expected
    alone = [
        int(evaluate_scoring.analogy_answers(wte, words, abc[i : i + 1], method, ignore_case)[0])
        for i in range(len(abc))
    ]
    assert alone == expected
    # close calls: float32 picks another row of the family than the exact scores for some questions
    unit = (wte / np.linalg.norm(wte, axis=1)[:, None]).astype(np.float32)
    fast = [
        f[int(np.argmax(unit[f] @ (unit[b] - unit[a] + unit[c])))]
        for (a, b, c), f in zip(abc, families, strict=True)
    ]
    assert sum(e in f and e != g for e, f, g in zip(expected, families, fast, strict=True)) >= 3
    if method is Method.cosadd:
        assert expected[2] == families[2][0]  # a tie to the bit: the smaller index
    if ignore_case:  # some questions have five other spellings of c above the answer, some fewer
        assert -1 in expected and any(e >= 0 for e in expected[1::2])
    # one candidate per block, two questions per chunk, and near-ties settled as soon as there are more than 3
    monkeypatch.setattr(evaluate_scoring, "_BUDGET", 1)
    monkeypatch.setattr(evaluate_scoring, "_CHUNK", 2)
    monkeypatch.setattr(evaluate_scoring, "_HELD", 3)
    assert evaluate_scoring.analogy_answers(wte, words, abc, method, ignore_case).tolist() == expected


def test_a_row_without_direction_is_no_answer_and_answers_nothing() -> None:
    wte, names = spelled()
    words = vocabulary(names, False)
    at = {w: i for i, w in enumerate(names)}
    abc = np.array([[at["man"], at["king"], at["woman"]], [at["boy"], at["prince"], at["girl"]]])
    before = evaluate_scoring.analogy_answers(wte, words, abc, Method.cosadd, False)
    wte[before[0]] = np.nan  # the first question's answer
    wte[at["boy"], 3] = np.inf  # an input of the second
    after = evaluate_scoring.analogy_answers(wte, words, abc, Method.cosadd, False)
    assert after[0] not in (before[0], -1) and after[1] == -1
    assert evaluate_scoring.analogy_answers(wte, words, abc[:0], Method.cosadd, False).shape == (0,)


def cosmul_scores(wte: np.ndarray, a: int, b: int, c: int, eps: float) -> np.ndarray:
    """gensim's 3cosmul of every row for b - a + c, one row at a time in float64; the inputs excluded."""
    x = wte.astype(np.float64)
    unit = [row / np.sqrt(sum(v * v for v in row)) for row in x]
    shifted = [[(1 + float(u @ unit[w])) / 2 for u in unit] for w in (a, b, c)]
    scores = np.array([shifted[1][i] * shifted[2][i] / (shifted[0][i] + eps) for i in range(len(x))])
    scores[[a, b, c]] = -np.inf
    return scores


def epsilon_table() -> np.ndarray:
    """Rows all but opposite to a ((1 + cos) / 2 about 1e-7, below 3cosmul's epsilon of 1e-6), b and c
    near them: the two best answers trade places when the epsilon doubles."""
    rng = np.random.default_rng(178)
    d = 4
    a = rng.standard_normal(d)
    b, c = (-a + 0.7 * np.linalg.norm(a) * rng.standard_normal(d) / np.sqrt(d) for _ in range(2))
    rows = -a + 3e-3 * np.linalg.norm(a) * rng.standard_normal((200, d)) * rng.uniform(0.3, 1.5, (200, 1))
    return np.vstack([a, b, c, rows]).astype(np.float32)


def test_3cosmul_answer_where_the_epsilon_decides() -> None:
    wte = epsilon_table()
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    got = evaluate_scoring.analogy_answers(wte, words, np.array([[0, 1, 2]]), Method.cosmul, False)
    expected = int(np.argmax(cosmul_scores(wte, 0, 1, 2, 1e-6)))
    assert got.tolist() == [expected]
    assert int(np.argmax(cosmul_scores(wte, 0, 1, 2, 2e-6))) != expected  # the table is one where it counts


@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("ignore_case", [False, True])
def test_no_answer_where_every_candidate_is_an_input_a_spelling_or_broken(
    method: Method, ignore_case: bool
) -> None:
    """Words a, b, c, another spelling of c and a row of NaN: no candidate is left, so no answer (-1)."""
    rng = np.random.default_rng(41)
    names = ["man", "king", "woman", "WOMAN" if ignore_case else "broken", "nan"]
    wte = rng.standard_normal((5, 6)).astype(np.float32)
    wte[4] = np.nan
    if not ignore_case:
        wte[3, 2] = np.inf
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case)
    got = evaluate_scoring.analogy_answers(wte, words, np.array([[0, 1, 2], [0, 1, 2]]), method, ignore_case)
    assert got.tolist() == [-1, -1]
    wte[4] = rng.standard_normal(6)  # one candidate left: it is the answer
    assert evaluate_scoring.analogy_answers(
        wte, words, np.array([[0, 1, 2]]), method, ignore_case
    ).tolist() == [4]


@pytest.mark.parametrize("method", list(Method))
def test_a_zero_row_scores_its_cosines_of_zero(method: Method) -> None:
    """A zero row has no direction: its cosine with anything is 0 (as `cosines` gives it), so it is the
    answer when every other candidate scores below what three cosines of 0 make."""
    rng = np.random.default_rng(43)
    a, b, c = rng.standard_normal((3, 6))
    target = b / np.linalg.norm(b) - a / np.linalg.norm(a) + c / np.linalg.norm(c)
    others = -target + 0.05 * rng.standard_normal((5, 6))  # pointing away from the answer
    wte = np.vstack([a, b, c, others[:2], np.zeros(6), others[2:]]).astype(np.float32)
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    unit = [r / n if (n := np.linalg.norm(r)) > 0 else r for r in wte.astype(np.float64)]
    if method is Method.cosmul:
        scores = [
            ((1 + u @ unit[1]) / 2) * ((1 + u @ unit[2]) / 2) / ((1 + u @ unit[0]) / 2 + 1e-6) for u in unit
        ]
    else:
        w = [float(np.linalg.norm(r)) if method is Method.add else 1.0 for r in wte.astype(np.float64)]
        scores = [w[1] * (u @ unit[1]) - w[0] * (u @ unit[0]) + w[2] * (u @ unit[2]) for u in unit]
    expected = max(range(3, len(wte)), key=lambda i: (scores[i], -i))
    assert expected == 5
    got = evaluate_scoring.analogy_answers(wte, words, np.array([[0, 1, 2]]), method, False)
    assert got.tolist() == [expected]


def step_ties(seed: int = 53) -> tuple[np.ndarray, np.ndarray]:
    """Questions whose best candidates differ by a few of 3cosadd's fast steps (1/8192 of a cosine each):
    rounding each of three cosines to a step can put the exact best up to three steps below another."""
    rng = np.random.default_rng(seed)
    d, n_q, family = 12, 100, 40
    base = rng.standard_normal((3 * n_q, d))
    abc = np.arange(3 * n_q).reshape(n_q, 3)
    rows = [base]
    for a, b, c in abc:
        u = base[[a, b, c]] / np.linalg.norm(base[[a, b, c]], axis=1)[:, None]
        target = u[1] - u[0] + u[2]
        target /= np.linalg.norm(target)
        rows.append(target + 0.006 * rng.standard_normal((family, d)))  # cosines within 1e-4 or so
    return np.vstack(rows).astype(np.float32), abc


def cosadd_answers(wte: np.ndarray, abc: np.ndarray) -> list[int]:
    """Each question's 3cosadd answer, every row scored in float64, the inputs left out."""
    x = wte.astype(np.float64)
    unit = x / np.sqrt((x * x).sum(axis=1))[:, None]
    expected = []
    for a, b, c in abc.tolist():
        scores = unit @ unit[b] - unit @ unit[a] + unit @ unit[c]
        scores[[a, b, c]] = -np.inf
        expected.append(int(np.argmax(scores)))
    return expected


def test_3cosadd_answers_where_the_fast_steps_round_apart() -> None:
    wte, abc = step_ties()
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    expected = cosadd_answers(wte, abc)
    got = evaluate_scoring.analogy_answers(wte, words, abc, Method.cosadd, False)
    assert got.tolist() == expected


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_exact_line_correlates_at_most_one(sign: float) -> None:
    """Scores on an exact line: |r| is 1, as scipy's pearsonr gives it, though rounding takes the quotient
    to 1.0000000000000002 for these numbers."""
    from scipy import stats

    x = np.array([-1.3204309700132935, -0.6615280218152191, 0.9350499881140221, 0.049054613825311656])
    y = sign * (x * 5.024484685327428 + 0.18851919251246557)
    r = evaluate_scoring.pearson(x, y)
    assert r is not None and -1.0 <= r <= 1.0
    assert r == pytest.approx(float(stats.pearsonr(x, y)[0]), abs=1e-15)
    assert abs(r) == 1.0


def test_more_pairs_than_words_in_ten_dimensions() -> None:
    """Five words in eight (a, b) pairs, rows of 10 numbers: a block's budget divides by 12 * 10 + 40 * 13
    table entries, and every answer is still the best of every candidate scored."""
    rng = np.random.default_rng(59)
    wte = rng.standard_normal((25, 10)).astype(np.float32)
    names = [f"w{i}" for i in range(len(wte))]
    words = evaluate_files.RuleWords.build(names, names, Rule.bare, ignore_case=False)
    pairs = [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (3, 4), (4, 3)]
    abc = np.array([(a, b, next(c for c in range(5) if c not in (a, b))) for a, b in pairs])
    expected = cosadd_answers(wte, abc)
    assert evaluate_scoring.analogy_answers(wte, words, abc, Method.cosadd, False).tolist() == expected


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_score_that_is_not_finite_leaves_r_undefined_without_a_warning(bad: float) -> None:
    """No r for a list holding inf or NaN (scipy's would be NaN), and no numpy warning on the way (warnings
    are errors here, as none may reach a user)."""
    x = np.array([1.0, bad, 2.0, 4.0])
    y = np.array([1.0, 2.0, 3.0, 5.0])
    assert evaluate_scoring.pearson(x, y) is None and evaluate_scoring.pearson(y, x) is None
    assert evaluate_scoring.pearson(np.array([3.0]), np.array([2.0])) is None  # one pair: no direction
