"""core/evaluate.py: analogy --eval and similarity --eval through the command line, equal to gensim.

The answers, counts, notes and refusals of both evaluations, on small files and on gensim's own benchmark."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors

from gpt2emb.choices import Method, Rule
from gpt2emb.core import evaluate_files, evaluate_scoring
from gpt2emb.tokens import display
from oracles import unit

from benchmarks import spelled, vocabulary
from conftest import GPT2_VOCAB, run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, save_local

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


def correct_per_section(
    wte: np.ndarray, words: evaluate_files.RuleWords, questions: Path, ignore_case: bool
) -> list[int]:
    """3CosAdd's right answers in each section, counted as api.analogy_eval counts them."""
    ours = []
    for section in evaluate_files.read_analogies(questions):
        found = [[words.find(w, ignore_case) for w in q] for q in section.questions]
        abcd = np.array([f for f in found if None not in f], dtype=np.int64).reshape(-1, 4)
        predicted = evaluate_scoring.analogy_answers(wte, words, abcd[:, :3], Method.cosadd, ignore_case)
        same = words.group if ignore_case else np.arange(len(words.words))
        ours.append(int(((predicted >= 0) & (same[np.maximum(predicted, 0)] == same[abcd[:, 3]])).sum()))
    return ours


def test_real_vocabulary_and_gensims_own_benchmark(tmp_path: Path) -> None:
    """GPT-2's real vocabulary with random vectors, on (a tenth of) gensim's questions-words.txt."""
    from gensim.test.utils import datapath

    pieces = json.loads((GPT2_VOCAB / "vocab.json").read_text(encoding="utf-8"))
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
        words = evaluate_files.RuleWords.build(by_id, texts, Rule.space, ignore_case)
        keys, ids = rule_keys(pieces, len(pieces), "space")
        assert words.words == keys
        _, sections = gensim_on(wte, keys, ids).evaluate_word_analogies(
            str(subset), case_insensitive=ignore_case
        )
        ours = correct_per_section(wte, words, subset, ignore_case)
        assert ours == [len(s["correct"]) for s in sections[:-1]]
        assert sum(ours) > 0


SPELLINGS = """\
: five spellings above the answer
man king woman queen
MAN KING WOMAN QUEEN
: three spellings above the answer
boy prince girl princess
Boy Prince Girl Princess
: reversed, where the inputs score above any answer
king man queen woman
queen woman king man
girl boy princess prince
"""


@pytest.mark.parametrize("ignore_case", [False, True])
@pytest.mark.parametrize("blocks", ["whole", "one candidate a block"])
def test_other_spellings_and_inputs_as_gensim_counts_them(
    tmp_path: Path, ignore_case: bool, blocks: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if blocks != "whole":
        monkeypatch.setattr(evaluate_scoring, "_BUDGET", 1)
        monkeypatch.setattr(evaluate_scoring, "_CHUNK", 2)
    wte, names = spelled()
    questions = tmp_path / "questions.txt"
    questions.write_text(SPELLINGS)
    words = vocabulary(names, ignore_case)
    _, sections = gensim_on(wte, names, list(range(len(names)))).evaluate_word_analogies(
        str(questions), case_insensitive=ignore_case
    )
    ours = correct_per_section(wte, words, questions, ignore_case)
    assert ours == [len(s["correct"]) for s in sections[:-1]]
    # case folded, five spellings of woman hide queen from gensim's best five, princess is found past three;
    # as typed, each spelling is a word of its own, and the best answer
    assert ours == ([0, 2, 2] if ignore_case else [0, 0, 2])


@pytest.mark.parametrize("ignore_case", [False, True])
@pytest.mark.parametrize("restrict", [264, 301, 302, 343])
def test_analogy_eval_restricted_equals_gensims_restrict_vocab(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, ignore_case: bool, restrict: int
) -> None:
    """--restrict N keeps token ids 0 to N - 1; gensim's restrict_vocab counts its keys, here the words of the
    rule in id order: the same words when gensim is given as many keys as there are words below N."""
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTIONS)
    case = ["--ignore-case"] if ignore_case else []
    doc = run_json(
        "analogy", "--eval", str(questions), "--method", "3cosadd", "--restrict", str(restrict), *case
    )
    keys, ids = rule_keys(tiny.vocab, len(tiny.wte), "space")
    first = sum(i < restrict for i in ids)
    _, sections = gensim_on(tiny.wte, keys, ids).evaluate_word_analogies(
        str(questions), restrict_vocab=first, case_insensitive=ignore_case
    )
    assert sections_of(doc) == [(s["section"], len(s["correct"]), len(s["incorrect"])) for s in sections]
    assert doc["restrict"] == restrict
    total = sum(len(s.questions) for s in evaluate_files.read_analogies(questions))
    assert doc["total"]["skipped"] + doc["total"]["correct"] + doc["total"]["incorrect"] == total
    if restrict == 301:  # king is id 301: every question with king is skipped
        assert doc["sections"][0]["correct"] + doc["sections"][0]["incorrect"] == 0


def test_analogy_eval_restricted_ranks_only_the_first_words(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """A row planted past --restrict where man : king :: woman : ? points (3cosadd) wins without the
    restriction and is no candidate with it, as with gensim's restrict_vocab."""
    unit = {w: tiny.wte[tiny.id(w)] / np.linalg.norm(tiny.wte[tiny.id(w)]) for w in ("man", "king", "woman")}
    wte = tiny.wte.copy()
    wte[tiny.id("have")] = unit["king"] - unit["man"] + unit["woman"]
    assert tiny.id("have") == 342
    hub.repos["someone/planted"] = Repo("1" * 40, hub_files(dataclasses.replace(tiny, wte=wte)))
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTIONS)
    keys, ids = rule_keys(tiny.vocab, len(wte), "space")
    kv = gensim_on(wte, keys, ids)
    for restrict in (None, 302):
        option = [] if restrict is None else ["--restrict", str(restrict)]
        args = ["analogy", "--eval", str(questions), "--method", "3cosadd", "-m", "someone/planted", *option]
        doc = run_json(*args, "--errors")
        first = len(keys) if restrict is None else sum(i < restrict for i in ids)
        _, sections = kv.evaluate_word_analogies(str(questions), restrict_vocab=first, case_insensitive=False)
        assert sections_of(doc) == [(s["section"], len(s["correct"]), len(s["incorrect"])) for s in sections]
        wrong = [(e["question"], e["predicted"]) for e in doc["errors"] if e["section"] == "royalty"]
        assert (wrong == [(["man", "king", "woman"], "have")]) == (restrict is None)
    table = run_cli("analogy", "--eval", str(questions), "--restrict", "302")
    assert table.exit_code == 0 and "ids below 302" in table.stdout
    too_many = run_cli("analogy", "--eval", str(questions), "--restrict", "400")
    assert too_many.exit_code == 2 and "more than the 343 tokens" in too_many.stderr


@pytest.mark.parametrize(
    ("pairs", "said"),
    [
        ([("cat", "dog"), ("king", "queen"), ("man", "woman")], "'cat' and 'dog'"),
        (
            [("cat", "dog"), ("dog", "kitten"), ("king", "queen"), ("man", "woman")],
            "'cat' and 'dog' and 1 other pair",
        ),
        (
            [("cat", "dog"), ("dog", "kitten"), ("dog", "man"), ("king", "queen"), ("man", "woman")],
            "'cat' and 'dog' and 2 other pairs",
        ),
    ],
)
def test_the_note_names_the_first_pair_without_a_cosine_and_counts_the_others(
    tiny: Tiny, tmp_path: Path, pairs: list[tuple[str, str]], said: str
) -> None:
    wte = tiny.wte.copy()
    wte[tiny.id("dog")] = np.nan  # every pair with dog has no cosine
    folder = save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "nan-dog")
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"{a}\t{b}\t{n}\n" for n, (a, b) in enumerate(pairs)), encoding="utf-8")
    result = run_cli("similarity", "--eval", str(path), "-m", str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["notes"] == [
        f"pearson and spearman are undefined: the cosine of {said} is not a number (the model's rows hold "
        "NaN or infinite values there)"
    ]


def first_spaced_word(tiny: Tiny) -> str:
    """The first word of the space rule: the first token id whose text is a space and then one word."""
    for i in range(tiny.tokenizer.get_vocab_size()):
        text = tiny.tokenizer.decode([i])
        if text.startswith(" ") and text[1:] and not any(ch.isspace() for ch in text[1:]):
            return text[1:]
    raise AssertionError("no spaced word")


def test_an_answer_that_is_the_first_word_counts_and_is_named(tiny: Tiny, tmp_path: Path) -> None:
    """The row of the first word (cat) made the sum 3cosadd (gensim's most_similar) answers man : king ::
    woman : ? with, unit(king) - unit(man) + unit(woman): cat is then the answer, the first word of all (index
    0 of the words)."""
    first = first_spaced_word(tiny)
    assert first == "cat"
    wte = tiny.wte.copy()
    king, man, woman = unit(wte[[tiny.id(w) for w in ("king", "man", "woman")]])
    wte[tiny.id("cat")] = (king - man + woman).astype(np.float32)
    folder = save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "cat-answers")
    path = tmp_path / "questions.txt"
    questions = [
        "man king woman cat",
        "man king woman queen",
        "man king woman zzqx",
    ]  # man : king :: woman : ?
    path.write_text(": royal\n" + "".join(q + "\n" for q in questions), encoding="utf-8")
    result = run_cli(
        "analogy", "--eval", str(path), "-m", str(folder), "--method", "3cosadd", "--errors", "--json"
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    (royal,) = doc["sections"]
    assert (royal["correct"], royal["incorrect"], royal["skipped"]) == (1, 1, 1)  # zzqx is no word: skipped
    assert doc["coverage"] == pytest.approx(2 / 3)  # answered of all the questions
    assert doc["errors"] == [
        {"section": "royal", "question": ["man", "king", "woman"], "expected": "queen", "predicted": "cat"}
    ]


def test_a_restriction_past_the_vocabulary_is_refused_before_anything_is_fetched(
    hub: FakeHub, tmp_path: Path
) -> None:
    path = tmp_path / "questions.txt"
    path.write_text(": royal\nking man woman queen\n", encoding="utf-8")
    result = run_cli("analogy", "--eval", str(path), "--restrict", "60000")
    assert result.exit_code == 2
    assert "--restrict 60000 is more than the 50,257 tokens there are: give at most 50,257" in result.stderr
    assert hub.requests == []  # gpt2's vocabulary size is the registry's: nothing fetched
