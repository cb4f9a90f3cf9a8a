"""analogy --eval and similarity --eval on a static word table (issue 56): the counts and scores equal
gensim's evaluate_word_analogies and evaluate_word_pairs on files nobody here wrote (gensim's test data),
what happens where gensim raises (test_glove.txt's pairs), what --rule means there, and --eval of a static
table beside the tiny GPT-2.

Oracles: gensim itself on the same files; for two models, each model's one-model --eval of a file holding
only the questions both can answer (found from the tokenizer's vocabulary and the table's keys)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpt2emb.errors import UsageError

from conftest import FUZZ, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny

gensim = pytest.importorskip("gensim")
pytestmark = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning"
)  # gensim's open file
from gensim.models import KeyedVectors  # noqa: E402

DATA = Path(os.path.dirname(gensim.__file__)) / "test" / "test_data"
QUESTIONS, PAIRS = DATA / "questions-words.txt", DATA / "wordsim353.tsv"
GLOVE, LEE, EUCLID = DATA / "test_glove.txt", DATA / "lee_fasttext.vec", DATA / "euclidean_vectors.bin"
HOW = {GLOVE: {"no_header": True}, LEE: {}, EUCLID: {"binary": True}}
# gensim scores pairs by float32 cosines, gpt2emb by float64 ones of the same float32 rows: a correlation of
# a hundred such cosines moves by less than this
SCORE_TOL = 1e-5


def gensim_of(path: Path) -> KeyedVectors:
    return KeyedVectors.load_word2vec_format(str(path), **HOW[path])


def case(ignore: bool) -> tuple[str, ...]:
    return ("--ignore-case",) if ignore else ()


@pytest.mark.parametrize("ignore", [True, False], ids=["ignore-case", "case"])
@pytest.mark.parametrize(("path", "restrict"), [(LEE, None), (EUCLID, None), (EUCLID, 900), (GLOVE, None)])
def test_analogy_eval_equals_gensim_evaluate_word_analogies(
    path: Path, restrict: int | None, ignore: bool
) -> None:
    """Was: a static table's keys were read by the space rule (" king"), so no question was answered."""
    kv = gensim_of(path)
    # gensim's restrict_vocab defaults to 300000: the whole of these tables, as no --restrict is
    _, sections = kv.evaluate_word_analogies(
        str(QUESTIONS), restrict_vocab=restrict or 300000, case_insensitive=ignore
    )
    limit = ("--restrict", str(restrict)) if restrict else ()
    ours = run_json(
        "analogy",
        "--eval",
        str(QUESTIONS),
        "-m",
        str(path),
        "--method",
        "3cosadd",
        *case(ignore),
        *limit,
        "--errors",
    )
    theirs = {s["section"]: (len(s["correct"]), len(s["incorrect"])) for s in sections}
    mine = {s["section"]: (s["correct"], s["incorrect"]) for s in (*ours["sections"], ours["total"])}
    answered = {k: v for k, v in mine.items() if sum(v)}
    assert answered == {k: v for k, v in theirs.items() if sum(v)}
    assert sum(theirs["Total accuracy"]) > 0  # what the test is about: questions answered
    assert ours["total"]["accuracy"] == pytest.approx(
        sum(len(s["correct"]) for s in sections[-1:]) / sum(theirs["Total accuracy"]), abs=1e-12
    )
    # gensim's oov ratio: questions skipped for a word it lacks, of all the file's questions, in percent
    quads = sum(
        1
        for line in QUESTIONS.read_text().splitlines()
        if not line.startswith(": ") and len(line.split()) == 4
    )
    oov = quads - sum(theirs["Total accuracy"])
    assert 100 * (1 - ours["coverage"]) == pytest.approx(100 * oov / quads, abs=1e-9)
    # the very questions answered wrong, as gensim lists them (it upper-cases them when ignoring case)
    wrong = {
        tuple(w.upper() if ignore else w for w in (*e["question"], e["expected"])) for e in ours["errors"]
    }
    assert wrong == set(sections[-1]["incorrect"])
    assert ours["rule"] == "keys"


@pytest.mark.parametrize("ignore", [True, False], ids=["ignore-case", "case"])
@pytest.mark.parametrize("path", [LEE, EUCLID])
def test_similarity_eval_equals_gensim_evaluate_word_pairs(path: Path, ignore: bool) -> None:
    pearson, spearman, oov_ratio = gensim_of(path).evaluate_word_pairs(str(PAIRS), case_insensitive=ignore)
    ours = run_json("similarity", "--eval", str(PAIRS), "-m", str(path), *case(ignore))
    assert ours["pearson"] == pytest.approx(pearson[0], abs=SCORE_TOL)
    assert ours["spearman"] == pytest.approx(spearman[0], abs=SCORE_TOL)
    assert ours["oov_ratio"] == pytest.approx(oov_ratio, abs=1e-9) and ours["used"] > 30
    assert ours["rule"] == "keys"
    table = run_cli("similarity", "--eval", str(PAIRS), "-m", str(path), *case(ignore))
    assert "words as keys" in " ".join(table.stdout.split()) and "(not a key)" in table.stdout


def test_pairs_no_key_answers_a_clear_refusal_where_gensim_raises(hub: FakeHub, tmp_path: Path) -> None:
    """test_glove.txt holds neither word of any WordSim-353 pair: gensim's evaluate_word_pairs raises a
    ValueError (no valid similarity judgements); gpt2emb says so in one line, exit 2, and beside a model that
    answers, leaves the table out saying why and scores the other."""
    with pytest.raises(ValueError, match="No valid similarity judgements"):
        gensim_of(GLOVE).evaluate_word_pairs(str(PAIRS))
    alone = run_cli("similarity", "--eval", str(PAIRS), "-m", str(GLOVE), "--ignore-case")
    assert alone.exit_code == 2 and not alone.stdout
    said = alone.stderr.strip()
    assert len(said.splitlines()) == 1 and "no pair of" in said and f"as keys of {GLOVE}" in said
    assert "a correlation needs two" in said
    one = tmp_path / "one.tsv"  # one pair found: scipy's pearsonr raises there, gpt2emb says "only 1 pair"
    one.write_text("year\tpeople\t3.5\nzzzz\tyyyy\t1.0\n")  # two keys of test_glove.txt
    single = run_cli("similarity", "--eval", str(one), "-m", str(GLOVE))
    assert single.exit_code == 2 and "only 1 pair of" in single.stderr
    pairs = tmp_path / "p.tsv"  # the tiny GPT-2 answers these, the table none
    pairs.write_text("cat\tdog\t7.0\ncat\tcats\t9.0\nman\twoman\t6.0\n")
    doc = run_json("similarity", "--eval", str(pairs), "-m", "gpt2", "-m", str(GLOVE))
    assert doc["results"][1] is None and doc["answerable"] == [3, 0] and doc["common"] == 3
    assert "no pair of" in doc["sides"][1]["lacks"][0]["reason"] and doc["sides"][1]["static"]


def test_rule_is_about_tokens_refused_on_a_static_table_alone(hub: FakeHub, tmp_path: Path) -> None:
    """A static table's words are its keys: --rule bare is refused on it alone (exit 2, saying why), and
    beside a tokenizer it is that model's rule."""
    for command, file in (("analogy", QUESTIONS), ("similarity", PAIRS)):
        refused = run_cli(command, "--eval", str(file), "-m", str(LEE), "--rule", "bare")
        assert refused.exit_code == 2 and "--rule bare is about tokens" in refused.stderr
        assert "static word table" in refused.stderr
    questions = tmp_path / "q.txt"
    questions.write_text(": s\nman woman king queen\n")
    glove = tmp_path / "glove.txt"
    glove.write_text("man 1 0\nwoman 0 1\nking 1 1\nqueen 0.5 1\n")
    doc = run_json("analogy", "--eval", str(questions), "-m", "gpt2", "-m", str(glove), "--rule", "bare")
    assert [r["rule"] if r else None for r in doc["results"]][1] == "keys"
    assert doc["answerable"][1] == 1


def test_two_model_eval_a_static_table_beside_the_tiny_gpt2(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """--eval -m gpt2 -m glove.txt: both scored under the same options on the questions both answer, each
    as it scores a file of those questions alone, and how many that is said."""
    words = ["man", "woman", "king", "queen", "cat", "cats", "dog", "he"]
    assert all("Ġ" + w in tiny.vocab for w in words)
    rng = np.random.default_rng(5)
    keys = [*words, "princess", "King"]  # princess: the tiny GPT-2 lacks it as one token; King: case matters
    assert "Ġprincess" not in tiny.vocab
    glove = tmp_path / "glove.txt"
    glove.write_text("".join(f"{k} {' '.join(f'{x:.4f}' for x in rng.normal(size=6))}\n" for k in keys))
    questions = [
        ("man", "woman", "king", "queen"),
        ("cat", "cats", "dog", "princess"),  # the table alone
        ("cat", "cats", "man", "woman"),
        ("he", "man", "cat", "cats"),
        ("man", "woman", "King", "queen"),  # the table alone (gpt2 has no " King" as one token)
        ("cat", "dog", "zzzz", "cats"),  # neither
    ]
    gpt2_alone = [all("Ġ" + w in tiny.vocab for w in q) for q in questions]
    table_alone = [all(w in keys for w in q) for q in questions]
    common = [q for q, a, b in zip(questions, gpt2_alone, table_alone, strict=True) if a and b]
    assert 0 < len(common) < sum(table_alone) and sum(gpt2_alone) != sum(table_alone)
    file, oracle_file = tmp_path / "q.txt", tmp_path / "common.txt"
    file.write_text(": s\n" + "".join(" ".join(q) + "\n" for q in questions))
    oracle_file.write_text(": s\n" + "".join(" ".join(q) + "\n" for q in common))
    models = ("-m", "gpt2", "-m", str(glove))
    doc = run_json("analogy", "--eval", str(file), "--method", "3cosadd", *models)
    assert doc["asked"] == 6 and doc["common"] == len(common)
    assert doc["answerable"] == [sum(gpt2_alone), sum(table_alone)]
    assert [s["static"] for s in doc["sides"]] == [False, True]
    assert [r["rule"] for r in doc["results"]] == ["space", "keys"]
    for model, result in zip(("gpt2", str(glove)), doc["results"], strict=True):
        oracle = run_json("analogy", "--eval", str(oracle_file), "--method", "3cosadd", "-m", model)
        assert (result["total"]["correct"], result["total"]["incorrect"]) == (
            oracle["total"]["correct"],
            oracle["total"]["incorrect"],
        )
        assert result["total"]["skipped"] == 6 - len(common)
    shown = " ".join(run_cli("analogy", "--eval", str(file), "--method", "3cosadd", *models).stdout.split())
    assert f"on the {len(common)} of 6 questions that every model answers" in shown
    assert "words as 'space' tokens, a static table's as keys" in shown


# keys that differ by case alone (gensim's case_insensitive takes the first of them for all), and a word no
# table holds
SPELLINGS = [
    "king",
    "King",
    "KING",
    "queen",
    "Queen",
    "man",
    "Man",
    "woman",
    "cat",
    "Cat",
    "dog",
    "cats",
    "x",
]


@FUZZ
@given(
    seed=st.integers(0, 2**32 - 1),
    n_keys=st.integers(4, len(SPELLINGS) - 1),
    n_questions=st.integers(1, 25),
    ignore=st.booleans(),
    restrict=st.one_of(st.none(), st.integers(4, len(SPELLINGS) - 1)),
)
def test_fuzz_eval_of_random_tables_equals_gensim(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    n_keys: int,
    n_questions: int,
    ignore: bool,
    restrict: int | None,
) -> None:
    """On random word2vec files whose keys differ by case alone, and random questions and pairs (some with
    a word no key is), --eval's counts, wrong answers, skipped share and correlations equal gensim's."""
    import gpt2emb

    rng = np.random.default_rng(seed)
    keys = list(rng.permutation(SPELLINGS[:-1])[:n_keys])
    rows = rng.normal(size=(n_keys, 5))  # continuous: no two scores tie, so both rank alike
    folder = tmp_path_factory.mktemp("fuzz")
    table = folder / "t.vec"
    table.write_text(
        f"{n_keys} 5\n"
        + "".join(f"{k} {' '.join(f'{x:.6f}' for x in r)}\n" for k, r in zip(keys, rows, strict=True))
    )
    words = rng.choice(SPELLINGS, size=(n_questions, 4))

    # no question whose answer is one of its inputs (a spelling of one, ignoring case): gpt2emb never answers
    # with an input; gensim counts it right when all of its best five are inputs and the last is the answer
    def fold(word: str) -> str:
        return word.upper() if ignore else word

    words = words[[fold(q[3]) not in {fold(w) for w in q[:3]} for q in words]]
    n_questions = len(words)
    if n_questions < 2:
        return
    questions = folder / "q.txt"
    questions.write_text(
        ": a\n"
        + "".join(" ".join(q) + "\n" for q in words[: n_questions // 2])
        + ": b\n"
        + "".join(" ".join(q) + "\n" for q in words[n_questions // 2 :])
    )
    # no pair of a word with itself: its cosine is 1 give or take gensim's float32 rounding, which differs
    # from row to row, so two such pairs tie in exact numbers and gensim's Spearman ranks them by that noise
    scores = rng.uniform(0, 10, n_questions)
    kept = [(a, b, s) for (a, b, *_), s in zip(words, scores, strict=True) if a.upper() != b.upper()]
    pairs = folder / "p.tsv"
    pairs.write_text("".join(f"{a}\t{b}\t{s:.2f}\n" for a, b, s in kept) or "x\tx\t1\n")
    kv = KeyedVectors.load_word2vec_format(str(table))
    restrict = None if restrict is None or restrict > n_keys else restrict
    m = gpt2emb.open(str(table))
    _, sections = kv.evaluate_word_analogies(
        str(questions), restrict_vocab=restrict or 300000, case_insensitive=ignore
    )
    ours = m.analogy_eval(questions, method="3cosadd", ignore_case=ignore, errors=True, restrict=restrict)
    theirs = [(s["section"], len(s["correct"]), len(s["incorrect"])) for s in sections]
    assert [(s.section, s.correct, s.incorrect) for s in (*ours.sections, ours.total)] == theirs
    wrong = {tuple(w.upper() if ignore else w for w in (*e.question, e.expected)) for e in ours.errors}
    assert wrong == set(sections[-1]["incorrect"])
    try:
        with warnings.catch_warnings():  # scipy warns of a constant column, and gives NaN
            warnings.simplefilter("ignore")
            pearson, spearman, oov_ratio = kv.evaluate_word_pairs(str(pairs), case_insensitive=ignore)
    except ValueError:  # no pair found (gensim), or one (scipy): gpt2emb refuses, naming the count
        with pytest.raises(UsageError, match="a correlation needs two"):
            m.similarity_eval(pairs, ignore_case=ignore)
        return
    scored = m.similarity_eval(pairs, ignore_case=ignore)
    assert scored.oov_ratio == pytest.approx(oov_ratio, abs=1e-9)
    for mine, gensims in ((scored.pearson, pearson[0]), (scored.spearman, spearman[0])):
        if mine is None:  # undefined: a constant column, where scipy gives NaN
            assert np.isnan(gensims)
        else:
            assert mine == pytest.approx(gensims, abs=SCORE_TOL)
