"""Benchmark evaluation against gensim's evaluate_word_analogies and evaluate_word_pairs, same vectors."""

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors

from gpt2emb import evaluate
from gpt2emb.tokens import display

from conftest import SHARED_VOCAB, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny

logging.getLogger("gensim").setLevel(logging.WARNING)

QUESTIONS = """\
: royalty
man king woman queen
woman queen man king
MAN KING WOMAN QUEEN
prince king hello queen
man king unknownword queen
: animals
cat cats dog kitten
cat kitten dog cats
Cat cats dog kitten
dog cat kitten cats
this line is not a question at all
: capitals
Paris France hello king
France Paris king hello
"""

# no two pairs here are equally similar in the planted vectors (cos(man, woman) and cos(king, cat) are both
# exactly 0 there): float noise would decide the Spearman ranks of such ties
PAIRS = """\
# word1\tword2\thuman score
king\tqueen\t8.5
man\tking\t8.3
cat\tcats\t9.2
cat\tdog\t7.4
dog\tkitten\t5.0
king\tcat\t1.2
Paris\tFrance\t7.9
hello\tking\t0.5
queen\tunknownword\t3.0
KING\tMAN\t5.5
bad line
"""


def rule_keys(tiny_vocab: dict[str, int], rows: int, rule: str) -> tuple[list[str], list[int]]:
    """The words of a rule and their token ids, in id order: what gensim is given."""
    by_id = {i: p for p, i in tiny_vocab.items()}
    keys, ids, seen = [], [], set()
    for i in range(rows):
        text = display(by_id[i]) if i in by_id else ""
        word = text if rule == "bare" else (text[1:] if text.startswith(" ") else "")
        if word and not any(ch.isspace() for ch in word) and word not in seen:
            seen.add(word)
            keys.append(word)
            ids.append(i)
    return keys, ids


def gensim_on(wte: np.ndarray, keys: list[str], ids: list[int]) -> KeyedVectors:
    kv = KeyedVectors(vector_size=wte.shape[1])
    kv.add_vectors(keys, np.asarray(wte[ids], dtype=np.float32))
    return kv


def sections_of(doc: dict) -> list[tuple[str, int, int]]:  # type: ignore[type-arg]
    return [(s["section"], s["correct"], s["incorrect"]) for s in (*doc["sections"], doc["total"])]


@pytest.mark.parametrize("rule", ["space", "bare"])
@pytest.mark.parametrize("ignore_case", [False, True])
def test_analogy_eval_equals_gensim(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, rule: str, ignore_case: bool
) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTIONS if rule == "space" else QUESTIONS.replace(" ", "  "))
    args = ["analogy", "--eval", str(questions), "--method", "3cosadd", "--rule", rule]
    doc = run_json(*args, *(["--ignore-case"] if ignore_case else []))
    keys, ids = rule_keys(tiny.vocab, len(tiny.wte), rule)
    score, sections = gensim_on(tiny.wte, keys, ids).evaluate_word_analogies(
        str(questions), case_insensitive=ignore_case
    )
    assert sections_of(doc) == [(s["section"], len(s["correct"]), len(s["incorrect"])) for s in sections]
    answered = doc["total"]["correct"] + doc["total"]["incorrect"]
    assert doc["total"]["accuracy"] == (pytest.approx(score) if answered else None)  # gensim: 0.0 for none
    if rule == "space":
        assert doc["total"]["correct"] >= 4  # the planted analogies are answered
        assert doc["sections"][0]["skipped"] == (1 if ignore_case else 2)


def test_analogy_eval_errors_and_table(hub: FakeHub, tmp_path: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTIONS)
    doc = run_json("analogy", "--eval", str(questions), "--method", "3cosadd", "--errors")
    wrong = sum(s["incorrect"] for s in doc["sections"])
    assert len(doc["errors"]) == wrong > 0
    assert {"section", "question", "expected", "predicted"} <= set(doc["errors"][0])
    table = run_cli("analogy", "--eval", str(questions), "--errors")
    assert table.exit_code == 0 and "Total accuracy" in table.stdout and "answered wrong" in table.stdout
    assert run_cli("analogy", "king", "man", "woman", "--eval", str(questions)).exit_code == 2
    assert run_cli("analogy", "king").exit_code == 2
    empty = tmp_path / "empty.txt"
    empty.write_text(": a section without questions\n")
    assert "no analogy questions" in run_cli("analogy", "--eval", str(empty)).stderr


def test_cosmul_eval_matches_a_question_by_question_reference(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    """gensim evaluates with 3cosadd only: 3cosmul is checked with its most_similar_cosmul, one by one."""
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTIONS)
    doc = run_json("analogy", "--eval", str(questions), "--method", "3cosmul")
    keys, ids = rule_keys(tiny.vocab, len(tiny.wte), "space")
    kv = gensim_on(tiny.wte, keys, ids)
    correct = 0
    for line in QUESTIONS.splitlines():
        words = line.split()
        if len(words) != 4 or not all(w in kv.key_to_index for w in words):
            continue
        a, b, c, d = words
        with pytest.warns(DeprecationWarning):  # gensim's cosmul calls its own deprecated init_sims
            best = kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=5)
        predicted = next((k for k, _ in best if k not in {a, b, c}), None)
        correct += predicted == d
    assert doc["total"]["correct"] == correct


def test_similarity_eval_equals_gensim(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(PAIRS)
    for ignore_case in (False, True):
        doc = run_json("similarity", "--eval", str(pairs), *(["--ignore-case"] if ignore_case else []))
        keys, ids = rule_keys(tiny.vocab, len(tiny.wte), "space")
        pearson, spearman, oov = gensim_on(tiny.wte, keys, ids).evaluate_word_pairs(
            str(pairs), case_insensitive=ignore_case
        )
        assert doc["pearson"] == pytest.approx(pearson[0], abs=1e-6)
        assert doc["spearman"] == pytest.approx(spearman[0], abs=1e-6)
        assert doc["oov_ratio"] == pytest.approx(oov)
    table = run_cli("similarity", "--eval", str(pairs))
    assert table.exit_code == 0 and "Spearman" in table.stdout


def test_ranks_and_correlations() -> None:
    x = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
    np.testing.assert_array_equal(evaluate._ranks(x), [4, 1, 2.5, 2.5, 5])
    assert evaluate.pearson(x, 2 * x + 1) == pytest.approx(1.0)
    assert evaluate.spearman(x, -(x**3)) == pytest.approx(-1.0)


@pytest.mark.skipif(not SHARED_VOCAB.is_dir(), reason="needs ../shared/gpt2-vocab")
def test_real_vocabulary_and_gensims_own_benchmark(tmp_path: Path) -> None:
    """GPT-2's real vocabulary with random vectors, on (a tenth of) gensim's questions-words.txt."""
    from gensim.test.utils import datapath

    from gpt2emb.choices import Method, Rule

    pieces = json.loads((SHARED_VOCAB / "vocab.json").read_text(encoding="utf-8"))
    rng = np.random.default_rng(7)
    wte = rng.normal(size=(len(pieces), 24)).astype(np.float32)
    subset = tmp_path / "questions.txt"
    lines = Path(datapath("questions-words.txt")).read_text().splitlines()
    subset.write_text("\n".join(line for i, line in enumerate(lines) if line.startswith(":") or i % 10 == 0))
    word_id = {display(p)[1:]: i for p, i in pieces.items() if display(p).startswith(" ")}
    planted = 0
    for line in subset.read_text().splitlines():  # make some questions answerable: d = b - a + c exactly
        q = line.split()
        if len(q) == 4 and all(w in word_id for w in q) and len(set(q)) == 4 and planted < 300:
            a, b, c, d = (word_id[w] for w in q)
            wte[d] = wte[b] - wte[a] + wte[c]
            planted += 1
    by_id = ["" for _ in pieces]
    for p, i in pieces.items():
        by_id[i] = p
    texts = [display(p) for p in by_id]
    for ignore_case in (False, True):
        words = evaluate.Words.build(by_id, texts, Rule.space, ignore_case)
        keys, ids = rule_keys(pieces, len(pieces), "space")
        assert words.words == keys
        _, sections = gensim_on(wte, keys, ids).evaluate_word_analogies(
            str(subset), case_insensitive=ignore_case
        )
        ours = []
        for section in evaluate.read_analogies(subset):
            found = [[words.find(w, ignore_case) for w in q] for q in section.questions]
            abcd = np.array([f for f in found if None not in f], dtype=np.int64).reshape(-1, 4)
            predicted = evaluate.analogy_answers(
                wte[words.ids], words, abcd[:, :3], Method.cosadd, ignore_case
            )
            same = words.group if ignore_case else np.arange(len(words.words))
            ours.append(int(((predicted >= 0) & (same[np.maximum(predicted, 0)] == same[abcd[:, 3]])).sum()))
        assert ours == [len(s["correct"]) for s in sections[:-1]]
        assert sum(ours) > 0
