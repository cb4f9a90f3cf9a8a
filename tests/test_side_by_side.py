"""Several models side by side (issue 56), on the tiny GPT-2 and the tiny RoBERTa: similarity's cosines in
each, --eval of two models on the questions both answer, the overlap by word without the leading space, a
word one model lacks, `static` of each model, and --figure's panels a model.

Oracles: numpy's cosines of each model's own rows; each model's one-model --eval of a file holding only the
questions both can answer (found from each tokenizer's vocabulary)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oracles import cos
from tiny_roberta import TinyRoberta, build

from conftest import run_cli, run_json, serve
from fakehub import FakeHub
from tinymodel import Tiny

REPO = "FacebookAI/roberta-base"


@pytest.fixture(scope="module")
def roberta(tmp_path_factory: pytest.TempPathFactory) -> TinyRoberta:
    return build(tmp_path_factory.mktemp("roberta"))


@pytest.fixture
def served(hub: FakeHub, roberta: TinyRoberta) -> FakeHub:
    return serve(hub, {REPO: roberta.files()})


def lacked_id(tiny: Tiny, roberta: TinyRoberta) -> tuple[int, str]:
    """A token id that one model has and the other lacks, and the model that lacks it."""
    n_gpt2, n_roberta = len(tiny.wte), len(roberta.wte)
    assert n_gpt2 != n_roberta
    return (max(n_gpt2, n_roberta) - 1, "gpt2" if n_gpt2 < n_roberta else "roberta-base")


RESTRICT = 302  # --restrict: the first 302 ids, where the two tiny vocabularies hold different words


def answers(vocab: dict[str, int], question: tuple[str, ...], restrict: int | None = None) -> bool:
    """Whether a model answers a question: each word one token under the space rule ("Ġword"), among the
    first `restrict` ids when given."""
    ids = [vocab.get("Ġ" + w) for w in question]
    return all(i is not None and (restrict is None or i < restrict) for i in ids)


def test_similarity_takes_several_models_each_its_own_cosines(
    served: FakeHub, tiny: Tiny, roberta: TinyRoberta
) -> None:
    doc = run_json("similarity", "cat", "cats", "dog", "-m", "gpt2", "-m", "roberta")
    assert doc["models"] == ["gpt2", "roberta-base"] and doc["words"] == ["cat", "cats", "dog"]
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("cat", "cats"), ("cat", "dog"), ("cats", "dog")]
    for pair in doc["pairs"]:
        mine = [cos(t.wte[t.id(pair["a"])], t.wte[t.id(pair["b"])]) for t in (tiny, roberta)]
        np.testing.assert_allclose(pair["cosines"], mine, atol=1e-6)
    assert [s["static"] for s in doc["sides"]] == [False, False]
    assert [r["model"] for r in doc["results"]] == ["gpt2", "roberta-base"]
    table = run_cli("similarity", "cat", "cats", "dog", "-m", "gpt2", "-m", "roberta")
    assert table.exit_code == 0 and "side by side" in table.stdout and "roberta" in table.stdout
    one = run_json("similarity", "cat", "cats", "dog")  # one model: the plain document, unchanged
    assert one["model"] == "gpt2" and "pairs" not in one
    refused = run_cli("similarity", "cat", "dog", "-m", "gpt2", "-m", "roberta", "--figure", "x.png")
    assert refused.exit_code == 2 and "neighbors draws several" in refused.stderr


def test_a_word_one_model_lacks_leaves_its_column_empty(
    served: FakeHub, tiny: Tiny, roberta: TinyRoberta
) -> None:
    at, lacking = lacked_id(tiny, roberta)
    word = f"id:{at}"
    other = "roberta-base" if lacking == "gpt2" else "gpt2"
    models = ("-m", "gpt2", "-m", "roberta")
    sim = run_json("similarity", "cat", "dog", word, *models)
    where = sim["models"].index(lacking)
    (side,) = [s for s in sim["sides"] if s["model"] == lacking]
    last = min(len(tiny.wte), len(roberta.wte)) - 1
    assert side["lacks"] == [
        {"query": word, "reason": f"{word} does not exist: token ids go from 0 to {last}"}
    ]
    assert [s["lacks"] for s in sim["sides"] if s["model"] == other] == [[]]
    for pair in sim["pairs"]:
        assert (pair["cosines"][where] is None) == (word in (pair["a"], pair["b"]))
        assert pair["cosines"][1 - where] is not None  # the other still answers
    table = run_cli("similarity", "cat", "dog", word, *models)
    assert table.exit_code == 0 and f"{lacking} lacks" in table.stdout
    near = run_json("neighbors", "cat", word, "-k", "3", *models)
    lacked = near["results"][where]["items"][1]
    assert lacked["tokens"] == [] and lacked["neighbors"] == [] and "does not exist" in lacked["note"]
    answered = near["results"][1 - where]["items"][1]
    assert answered == run_json("neighbors", word, "-k", "3", "-m", other)["items"][0]
    assert [o["query"] for o in near["overlap"]] == ["cat"]  # no overlap where one list is missing
    ana = run_json("analogy", "king", "man", word, "-k", "3", *models)
    assert ana["results"][where] is None and ana["results"][1 - where]["expression"] == f"king - man + {word}"
    assert "does not exist" in ana["sides"][where]["lacks"][0]["reason"] and ana["overlap"] == []
    # a word no model has is refused as one model refuses it
    nobody = run_cli("neighbors", "cat", "id:100000", *models)
    assert nobody.exit_code == 2 and "id:100000 does not exist" in nobody.stderr


def test_two_model_eval_scores_both_on_the_questions_both_answer(
    served: FakeHub, tiny: Tiny, roberta: TinyRoberta, tmp_path: Path
) -> None:
    vocabs = (tiny.vocab, roberta.tokenizer.get_vocab())
    questions = [
        ("man", "woman", "king", "queen"),
        ("cat", "cats", "dog", "kitten"),
        ("cat", "cats", "man", "woman"),
        ("he", "man", "cat", "cats"),
        ("cat", "dog", "zzzz", "cats"),  # neither has zzzz
    ]
    alone = [sum(answers(v, q, RESTRICT) for q in questions) for v in vocabs]
    common = [q for q in questions if all(answers(v, q, RESTRICT) for v in vocabs)]
    assert alone[0] != alone[1] and 0 < len(common) < max(alone)  # what the test is about: sets differ
    file, oracle_file = tmp_path / "q.txt", tmp_path / "common.txt"
    file.write_text(": s\n" + "".join(" ".join(q) + "\n" for q in questions))
    oracle_file.write_text(": s\n" + "".join(" ".join(q) + "\n" for q in common))
    models = ("-m", "gpt2", "-m", "roberta")
    options = ("--method", "3cosadd", "--restrict", str(RESTRICT))
    doc = run_json("analogy", "--eval", str(file), *options, *models)
    assert doc["asked"] == 5 and doc["common"] == len(common) and doc["answerable"] == alone
    for model, result in zip(("gpt2", "roberta"), doc["results"], strict=True):
        oracle = run_json("analogy", "--eval", str(oracle_file), *options, "-m", model)
        assert result["total"]["correct"] == oracle["total"]["correct"]
        assert result["total"]["incorrect"] == oracle["total"]["incorrect"]
        assert result["total"]["skipped"] == 5 - len(common) and result["method"] == "3cosadd"
        assert result["restrict"] == RESTRICT
    assert [s["static"] for s in doc["sides"]] == [False, False]
    table = run_cli("analogy", "--eval", str(file), *options, *models)
    said = f"on the {len(common)} of 5 questions that every model answers"
    assert table.exit_code == 0 and said in " ".join(table.stdout.split())

    pairs = [("king", "queen", 8.5), ("cat", "cats", 9.2), ("cat", "dog", 7.4), ("cat", "zzzz", 3.0)]
    pairs += [("dog", "kitten", 2.0), ("man", "woman", 6.0)]
    shared = [p for p in pairs if all(answers(v, p[:2]) for v in vocabs)]
    pair_file, pair_oracle = tmp_path / "p.tsv", tmp_path / "common.tsv"
    pair_file.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in pairs))
    pair_oracle.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in shared))
    sim = run_json("similarity", "--eval", str(pair_file), *models)
    assert sim["asked"] == 6 and sim["common"] == len(shared) == 5 and sim["answerable"] == [5, 5]
    for model, result in zip(("gpt2", "roberta"), sim["results"], strict=True):
        oracle = run_json("similarity", "--eval", str(pair_oracle), "-m", model)
        assert result["spearman"] == pytest.approx(oracle["spearman"], abs=1e-12)
        assert result["pearson"] == pytest.approx(oracle["pearson"], abs=1e-9)
        assert result["used"] == 5 and result["skipped"] == 1
    table = run_cli("similarity", "--eval", str(pair_file), *models)
    assert table.exit_code == 0 and "Spearman" in table.stdout


def test_a_model_that_answers_no_question_is_left_out(served: FakeHub, tmp_path: Path) -> None:
    file = tmp_path / "q.txt"
    file.write_text(": s\nman woman king queen\n")  # roberta's queen is id 302: past --restrict 302
    options = ("--restrict", str(RESTRICT), "-m", "gpt2", "-m", "roberta")
    doc = run_json("analogy", "--eval", str(file), *options)
    assert doc["results"][1] is None and doc["results"][0]["total"]["skipped"] == 0
    assert doc["common"] == 1 and doc["answerable"] == [1, 0]
    assert "no question of" in doc["sides"][1]["lacks"][0]["reason"]
    assert "left out" in run_cli("analogy", "--eval", str(file), *options).stdout
    nothing = tmp_path / "none.txt"
    nothing.write_text(": s\nzzzz yyyy xxxx wwww\n")
    refused = run_cli("analogy", "--eval", str(nothing), "-m", "gpt2", "-m", "roberta")
    assert refused.exit_code == 2 and "no question of" in refused.stderr


def test_overlap_counts_a_word_without_its_leading_space_case_sensitive() -> None:
    """Was: tokens compared as spelt, so GPT-2's " king" and a static file's king shared nothing."""
    from gpt2emb.core.compare import side_by_side
    from gpt2emb.results.common import Token
    from gpt2emb.results.neighbors import Neighbor, NeighborsItem, NeighborsResult

    def listed(model: str, tokens: list[str]) -> NeighborsResult:
        found = tuple(Neighbor(r, r, t, 1.0 - r / 10) for r, t in enumerate(tokens, 1))
        return NeighborsResult(model, 4, (NeighborsItem("king", (Token(0, " king"),), "mean", "", found),))

    ours = listed("gpt2", [" queen", " King", " prince", "throne"])
    theirs = listed("glove", ["queen", "king", " throne", "monarch"])
    (overlap,) = side_by_side([ours, theirs]).overlap
    assert overlap.words == ("queen", "throne") and overlap.shared == 2  # King is not king
    assert overlap.tokens == (" queen", "throne")


@pytest.mark.parametrize("fmt", ["png"])
def test_figure_of_models_side_by_side_draws_a_panel_a_model(
    served: FakeHub, tiny: Tiny, roberta: TinyRoberta, tmp_path: Path, fmt: str
) -> None:
    pytest.importorskip("matplotlib")
    from overlaps import clashes

    from drawn import captured

    at, lacking = lacked_id(tiny, roberta)
    target = tmp_path / f"side.{fmt}"
    with captured() as figures:
        result = run_cli(
            "neighbors", "cat", f"id:{at}", "-k", "5", "-m", "gpt2", "-m", "roberta", "--figure", str(target)
        )
    assert result.exit_code == 0, result.stderr
    (fig,) = figures
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 4 and titles[0].startswith("gpt2: ") and titles[1].startswith("roberta-base: ")
    assert titles[2 + ("gpt2", "roberta-base").index(lacking)].startswith(f"{lacking}: no ")
    drawn = [ax for ax in fig.axes if ax.collections]
    assert [len(np.asarray(ax.collections[0].get_offsets())) for ax in drawn] == [
        6,
        6,
        6,
    ]  # the word and its 5
    assert clashes(fig) == [] and target.exists()
    doc = run_json("neighbors", "cat", "-k", "5", "-m", "gpt2", "-m", "roberta", "--figure", str(target))
    assert doc["figure"] == str(target)
