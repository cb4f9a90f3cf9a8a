"""`neighbors WORD...`: the ranking against cosines computed here on the fixture's rows, --keep-query, a split
word, two models side by side; and word forms (--fold): the rule on known words, the folding of a ranking,
and the CLI on a tiny GPT-2 with the bare token "cat" planted next to " cat"."""

import dataclasses

import numpy as np
import pytest

from gpt2emb import ops
from gpt2emb.forms import Folded, Forms, fold, singular, word
from oracles import cosines

from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files

TEXTS = [
    " king", "King", " kings", " KINGS", "king",         # 0-4: one word
    " bus", " buses", "Bus",                             # 5-7
    " class", " classes", " clas",                       # 8-10: "clas" + "s" is no plural of "clas"
    " horse", " horses", " hors",                        # 11-13: "horses" is "horse" + "s", not "hors" + "es"
    " box", " boxes", " a", " as", " it", " its",        # 14-19: too short to be a singular: a/as, it/its
    " man", " woman", " men", " ",  "  ", "",            # 20-25: spelling, not meaning; spaces stand alone
    " glass", " glasses", " glas",                       # 26-28
]  # fmt: skip


def groups(texts: list[str]) -> list[list[str]]:
    forms = Forms(texts)
    by: dict[int, list[str]] = {}
    for text, label in zip(texts, forms.labels, strict=True):
        by.setdefault(label, []).append(text)
    return sorted(by.values(), key=lambda g: texts.index(g[0]))


def test_the_rule_on_known_words() -> None:
    assert groups(TEXTS) == [
        [" king", "King", " kings", " KINGS", "king"],
        [" bus", " buses", "Bus"],
        [" class", " classes"],
        [" clas"],
        [" horse", " horses"],
        [" hors"],
        [" box", " boxes"],
        [" a"], [" as"], [" it"], [" its"],
        [" man"], [" woman"], [" men"],
        [" "], ["  "], [""],
        [" glass", " glasses"],
        [" glas"],
    ]  # fmt: skip
    assert word("  King") == "king" and word(" STRASSE") == "strasse"
    known = {"king", "bus", "box", "church", "horse", "hors", "as"}
    assert [singular(w, known) for w in ("kings", "buses", "boxes", "churches", "horses", "ass", "as")] == [
        "king", "bus", "box", "church", "horse", None, None,
    ]  # fmt: skip


def test_a_query_word_finds_its_forms_whether_it_is_a_token_or_not() -> None:
    forms = Forms(TEXTS)
    label = forms.labels
    assert forms.of_text(" kings") == {label[0]}
    assert forms.of_text("KING") == {label[0]}
    assert forms.of_text(" clas") == {label[10]}  # a token: its own row
    assert forms.of_text(" buse") == {label[5]}  # as if it were a token: then "buses" would be its plural
    assert forms.of_text(" kingdom") == set()
    assert Forms([" cats", " cat"]).of_text(" cat") == Forms([" cats"]).of_text("cat") == {0}
    assert forms.of_text(" dogs") == set()
    assert sorted(forms.members(label[5])) == [5, 6, 7]


def ranking_of(scores: list[float]) -> ops.Ranking:
    s = np.array(scores)
    return ops.Ranking(s - 0.01, s + 0.01, lambda ids: s[ids])


def folded(
    texts: list[str], scores: list[float], query: str, k: int, keep: bool, exclude: tuple[int, ...] = ()
) -> Folded:
    ranking = ranking_of(scores)
    forms = Forms(texts)
    return fold(
        lambda n: ranking.top(n, exclude),
        lambda ids: [float(x) for x in ranking.scores(np.array(ids, dtype=np.int64))],
        lambda ids: [i not in exclude for i in ids],
        forms,
        forms.of_text(query),
        k,
        keep,
    )


def test_folding_a_ranking_on_a_known_answer() -> None:
    texts = [
        " queen",
        " king",
        "King",
        " kings",
        " Queen",
        " prince",
        " queens",
        " royal",
        "royal",
        " throne",
    ]
    scores = [0.95, 1.00, 0.90, 0.85, 0.80, 0.70, 0.75, 0.60, 0.65, 0.30]
    # the query is " king" (id 1): left out of the raw ranking, its other forms counted and dropped
    result = folded(texts, scores, " king", 3, False, exclude=(1,))
    assert result.rows == (
        ((0, 0.95), (4, 0.80), (6, 0.75)),  # queen: its best form first, every form listed
        ((5, 0.70),),
        ((8, 0.65), (7, 0.60)),
    )
    assert result.form_share == 2  # the raw top 3: " queen", "King", " kings": two are forms of king
    kept = folded(texts, scores, " king", 2, True)
    assert kept.rows == (((1, 1.0), (2, 0.9), (3, 0.85)), ((0, 0.95), (4, 0.80), (6, 0.75)))
    assert kept.form_share == 1  # " king" itself, in the raw top 2
    everything = folded(texts, scores, " king", 10, False, exclude=(1,))
    assert len(everything.rows) == 4  # queen, prince, royal, throne: fewer than k, never padded


def test_forms_outside_the_candidates_are_not_listed() -> None:
    texts = [" cat", " cats", "cat", " dog"]
    ranking = ranking_of([1.0, 0.9, 0.8, 0.5])
    allowed = np.array([True, True, False, True])
    forms = Forms(texts)
    result = fold(
        lambda n: ranking.top(n, (), allowed),
        lambda ids: [float(x) for x in ranking.scores(np.array(ids, dtype=np.int64))],
        lambda ids: [bool(allowed[i]) for i in ids],
        forms,
        forms.of_text(" dog"),
        5,
        False,
    )
    assert result.rows == (((0, 1.0), (1, 0.9)),)


@pytest.fixture
def forms_hub(hub: FakeHub, tiny: Tiny) -> Tiny:
    """The tiny GPT-2 with the bare "cat" (id 261) planted between " cat" and " cats"."""
    wte = tiny.wte.copy()
    cat = wte[tiny.id("cat")]
    wte[261] = cat + 0.1 * np.roll(cat, 1)
    planted = dataclasses.replace(tiny, wte=wte)
    hub.repos["someone/forms"] = Repo(COMMIT, hub_files(planted))
    return planted


def test_neighbors_fold_through_the_cli(forms_hub: Tiny) -> None:
    tiny = forms_hub
    assert tiny.tokenizer.decode([261]) == "cat"
    cat, cats, kitten, dog = (tiny.id(w) for w in ("cat", "cats", "kitten", "dog"))
    raw = run_json("neighbors", "cat", "-m", "someone/forms", "-k", "3")
    assert [n["id"] for n in raw["items"][0]["neighbors"]] == [261, cats, kitten]
    doc = run_json("neighbors", "cat", "-m", "someone/forms", "-k", "3", "--fold")
    item = doc["items"][0]
    assert [n["id"] for n in item["neighbors"]][:2] == [kitten, dog]
    assert item["form_share"] == 2 and doc["fold"] is True
    assert [f["id"] for f in item["neighbors"][0]["forms"]] == [kitten]
    assert all(n["id"] not in (cat, cats, 261) for n in item["neighbors"])
    # from kitten, the three forms of cat are one row, best first, its score the best form's
    other = run_json("neighbors", "kitten", "-m", "someone/forms", "-k", "2", "--fold")["items"][0]
    first = other["neighbors"][0]
    scores = [f["score"] for f in first["forms"]]
    assert {f["id"] for f in first["forms"]} == {cat, cats, 261} and scores == sorted(scores, reverse=True)
    assert first["score"] == scores[0] and first["id"] == first["forms"][0]["id"]
    assert other["neighbors"][1]["id"] == dog and other["form_share"] == 0
    table = run_cli("neighbors", "cat", "-m", "someone/forms", "-k", "3", "--fold")
    assert table.exit_code == 0 and "2 of the 3 nearest tokens are forms of cat" in table.stdout
    assert "one row per word" in table.stdout


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_folded_table_never_breaks_a_token_at_its_own_space(width: int) -> None:
    from io import StringIO

    from rich.console import Console

    from gpt2emb.output.views import view
    from gpt2emb.results.common import Token
    from gpt2emb.results.neighbors import Form, Neighbor, NeighborsItem, NeighborsResult

    words = [" queen", " Queen", "queen", " queens", "Queen", " QUEEN", "QUEEN", "Queens", " Queens"]
    forms = tuple(Form(i, t, 0.5) for i, t in enumerate(words))
    item = NeighborsItem(
        "king", (Token(5822, " king"),), "mean", "", (Neighbor(1, 0, " queen", 0.7, forms),), 6
    )
    console = Console(file=StringIO(), width=width, color_system=None)
    console.print(view(NeighborsResult("gpt2", 10, (item,), None, True, ()), None))
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert all(f'"{w}"' in shown for w in words[1:])  # each on one line, its space inside the quotes
    assert "6 of the 10 nearest tokens are forms of king" in shown
    assert max(len(line) for line in shown.splitlines()) <= width


# ---------------------------------------------------------------- the ranking, a split word, two models


def test_neighbors(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("neighbors", "cat", "-k", "3")
    item = doc["items"][0]
    assert item["tokens"] == [{"id": tiny.id("cat"), "token": " cat"}]
    assert [n["token"] for n in item["neighbors"]] == [" cats", " kitten", " dog"]
    scores = cosines(tiny.wte, tiny.wte[tiny.id("cat")])
    for n in item["neighbors"]:
        assert n["score"] == pytest.approx(scores[n["id"]], abs=1e-5)
    kept = run_json("neighbors", "cat", "dog", "-k", "2", "--keep-query")
    assert [n["token"] for n in kept["items"][0]["neighbors"]] == [" cat", " cats"]
    assert kept["items"][1]["word"] == "dog" and kept["items"][1]["neighbors"][0]["token"] == " dog"


def test_neighbors_of_a_split_word_say_so(hub: FakeHub, tiny: Tiny) -> None:
    result = run_cli("neighbors", "gato", "-k", "2")
    assert result.exit_code == 0
    assert "splits into" in result.stderr or "splits into" in result.stdout
    doc = run_json("neighbors", "gato", "-k", "2")
    assert len(doc["items"][0]["tokens"]) > 1 and "mean" in doc["items"][0]["note"]
    strict = run_cli("neighbors", "gato", "--pool", "strict")
    assert strict.exit_code == 2 and "is not one token" in strict.stderr


def test_models_side_by_side(hub: FakeHub, tiny: Tiny) -> None:
    other = Tiny(tiny.tokenizer, tiny.config, tiny.wte.copy(), tiny.wpe, tiny.blocks)
    rng = np.random.default_rng(5)
    other.wte[tiny.id("kitten")] = rng.normal(0, 1, tiny.wte.shape[1])  # kitten is no longer like cat
    hub.repos["someone/other"] = Repo("b" * 40, hub_files(other))
    doc = run_json("neighbors", "cat", "dog", "-k", "5", "-m", "gpt2", "-m", "someone/other")
    assert doc["models"] == ["gpt2", "someone/other"]
    first, second = ([n["token"] for n in r["items"][0]["neighbors"]] for r in doc["results"])
    assert " kitten" in first and " kitten" not in second
    (cat, dog) = doc["overlap"]
    assert cat["query"] == "cat" and cat["models"] == ["gpt2", "someone/other"] and dog["query"] == "dog"
    assert cat["shared"] == len(set(first) & set(second)) == len(cat["tokens"]) < 5
    single = run_json("neighbors", "cat", "-k", "5")
    assert single["items"] == doc["results"][0]["items"][:1]  # one model: the plain shape, unchanged
    table = run_cli("analogy", "king", "man", "woman", "-m", "gpt2", "-m", "someone/other", "-k", "3")
    assert table.exit_code == 0 and "side by side" in table.stdout and "share" in table.stdout
    assert run_cli("analogy", "--eval", "x.txt", "-m", "gpt2", "-m", "xl").exit_code == 2


def test_a_word_of_single_characters_and_bytes_is_told_its_neighbours_say_little(
    hub: FakeHub, tiny: Tiny
) -> None:
    """Was: `neighbors café` averaged 6 pieces of one character or less, and said only that it split
    (issue 54)."""
    (cafe,) = run_json("neighbors", "café", "-k", "2")["items"]
    pieces = [t["token"] for t in cafe["tokens"]]
    assert len(pieces) > 2 and all(len(p) <= 1 or p.startswith("\\x") for p in pieces), pieces
    assert cafe["note"].endswith(
        "; no piece is longer than one character, so their rows say little about the word, and what is "
        "nearest to them is mostly noise"
    )
    said = run_cli("neighbors", "café", "-k", "2")
    assert "is mostly noise" in " ".join((said.stderr + said.stdout).split())  # wrapped at 80 columns
    (split,) = run_json("neighbors", "gato", "-k", "2")["items"]  # a piece of two characters or more
    assert any(len(t["token"]) > 1 and not t["token"].startswith("\\x") for t in split["tokens"])
    assert "mean" in split["note"] and "noise" not in split["note"]
    assert "noise" not in run_json("vector", "cat")["items"][0]["note"]
    assert "mostly noise" in run_json("similarity", "café", "cat")["items"][0]["note"]
