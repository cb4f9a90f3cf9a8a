"""`analogy`: king - man + woman against cosines computed here, --keep-inputs; the chapter's own notation
(issue 39): sums of any length, equal to gensim's most_similar and most_similar_cosmul on the same vectors."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from gensim.models import KeyedVectors
from hypothesis import assume, given
from hypothesis import strategies as st

import gpt2emb
from gpt2emb import handle
from gpt2emb.errors import UsageError
from gpt2emb.report import QuietReporter
from oracles import cosines

from conftest import FUZZ, run_cli, run_json
from fakehub import FakeHub
from tinymodel import WORDS, Tiny

METHODS = ["add", "3cosadd", "3cosmul"]

# sums of 3, 5 and 7 terms in the tiny model's words (each one token) and its ids, signs in every pattern
SUMS = [
    "king - man + woman",
    "king - man + woman - cat + kitten",
    "id:7 - id:40 + id:123 - id:5 + id:9 - id:2 + id:300",
    "cat + dog + kitten - man - king + id:200 - id:50",
    "Paris - France + queen + prince + hello",
]


def id_of(tiny: Tiny, word: str) -> int:
    return int(word[3:]) if word.startswith("id:") else tiny.id(word)


def signed(expression: str) -> tuple[list[str], list[str]]:
    """The positive and the negative words of a sum written with spaced signs."""
    items = expression.split()
    terms = list(zip(["+", *items[1::2]], items[0::2], strict=True))
    return [w for s, w in terms if s == "+"], [w for s, w in terms if s == "-"]


def gensim_peer(wte: np.ndarray) -> KeyedVectors:
    kv = KeyedVectors(vector_size=wte.shape[1])
    kv.add_vectors([f"t{i}" for i in range(len(wte))], wte.astype(np.float32))
    return kv


@pytest.fixture
def m(hub: FakeHub) -> handle.Embeddings:
    return gpt2emb.open("gpt2", reporter=QuietReporter())


@pytest.fixture
def served(hub: FakeHub) -> None:
    """The tiny model served, for a property whose failure must not print the fake Hub's files."""


# ---------------------------------------------------------------- the issue's reproducers


@pytest.mark.parametrize("method", METHODS)
def test_the_chapters_notation_is_analogy_a_b_c(hub: FakeHub, method: str) -> None:
    """Was: Got unexpected extra argument(s) (+ woman), and give three words A B C for the quoted sum."""
    three = run_json("analogy", "king", "man", "woman", "--method", method)
    apart = run_json("analogy", "king", "-", "man", "+", "woman", "--method", method)
    quoted = run_json("analogy", "king - man + woman", "--method", method)
    mixed = run_json("analogy", "king -", "man + woman", "--method", method)
    assert apart == three and quoted == three and mixed == three  # every key, every number
    assert three["expression"] == "king - man + woman" and three["results"][0]["token"] == " queen"
    assert three["terms"] == [
        {"sign": "+", "word": "king"},
        {"sign": "-", "word": "man"},
        {"sign": "+", "word": "woman"},
    ]


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`")  # inside gensim's most_similar_cosmul
@pytest.mark.parametrize("method", ["3cosadd", "3cosmul"])
@pytest.mark.parametrize("expression", SUMS)
def test_a_sum_equals_gensims_most_similar(hub: FakeHub, tiny: Tiny, method: str, expression: str) -> None:
    """3cosadd is most_similar(positive, negative), 3cosmul most_similar_cosmul, for 3, 5 and 7 terms."""
    doc = run_json("analogy", *expression.split(), "--method", method, "-k", "15")
    positive, negative = signed(expression)
    kv = gensim_peer(tiny.wte)
    keys = ([f"t{id_of(tiny, w)}" for w in ws] for ws in (positive, negative))
    ask = kv.most_similar if method == "3cosadd" else kv.most_similar_cosmul
    expected = ask(positive=next(keys), negative=next(keys), topn=15)
    assert [r["id"] for r in doc["results"]] == [int(key[1:]) for key, _ in expected]  # exactly in order
    assert [r["score"] for r in doc["results"]] == pytest.approx([s for _, s in expected], abs=1e-6)
    assert doc["expression"] == expression and doc["method"] == method
    assert [t["sign"] for t in doc["terms"]] == ["+", *expression.split()[1::2]]
    assert [t["word"] for t in doc["terms"]] == expression.split()[0::2]


@pytest.mark.parametrize("expression", SUMS)
def test_add_is_the_plain_sum_of_the_signed_rows(hub: FakeHub, tiny: Tiny, expression: str) -> None:
    """The sum in float64 (exact for these rows) rounded once to float32, its cosine with every row."""
    doc = run_json("analogy", expression, "-k", "8")
    positive, negative = signed(expression)
    w = tiny.wte.astype(np.float64)
    total = sum(w[id_of(tiny, x)] for x in positive) - sum(w[id_of(tiny, x)] for x in negative)
    v = np.asarray(total).astype(np.float32).astype(np.float64)
    scores = w @ v / (np.linalg.norm(w, axis=1) * np.linalg.norm(v))
    inputs = [id_of(tiny, x) for x in positive + negative]
    scores[inputs] = -np.inf  # left out
    best = np.argsort(-scores, kind="stable")[:8]
    assert [r["id"] for r in doc["results"]] == best.tolist()
    assert [r["score"] for r in doc["results"]] == pytest.approx(scores[best].tolist(), abs=1e-12)


def test_the_inputs_of_a_sum_are_left_out_unless_kept(hub: FakeHub, tiny: Tiny) -> None:
    expression = "king - man + woman - cat + kitten"
    inputs = {id_of(tiny, w) for w in expression.split()[0::2]}
    left_out = run_json("analogy", expression, "-k", "20")
    assert not inputs & {r["id"] for r in left_out["results"]}
    assert [i["word"] for i in left_out["inputs"]] == expression.split()[0::2]
    kept = run_json("analogy", expression, "-k", "20", "--keep-inputs")
    marked = {r["id"] for r in kept["results"] if r["input"]}
    assert marked and marked <= inputs and {r["id"] for r in kept["results"]} - marked <= set(range(343))
    for i in kept["inputs"]:  # an input's rank is its place among the results kept
        if i["rank"] <= 20:
            assert kept["results"][i["rank"] - 1]["id"] == i["id"]


@pytest.mark.parametrize(
    ("args", "place"),
    [
        (["king", "-", "man", "+"], 'at its item 4, "+": a sign with no word after it'),
        (["king - - man"], 'at its item 3, "-": a second sign in a row'),
        (["king", "+", "-", "man"], 'at its item 3, "-": a second sign in a row'),
        (["king", "man", "+", "woman"], 'at its item 2, "man": a word after the word "king"'),
        (
            ["king -man + woman"],
            'at its item 2, "-man": a word after the word "king", with no sign between (a',
        ),
        (["+ king - man"], 'at its item 1, "+": a sign before the first term'),
        (["king", "-", "", "+", "woman"], "argument 3 of"),
        (["king", "-", " ", "+", "woman"], "an empty term"),
    ],
)
def test_a_sum_that_cannot_be_read_is_refused_naming_the_place(
    hub: FakeHub, args: list[str], place: str
) -> None:
    result = run_cli("analogy", *args)
    assert result.exit_code == 2, result.output
    assert place in result.stderr and "as in: king - man + woman" in result.stderr
    assert hub.requests == []  # refused before anything is fetched


def test_the_help_says_a_dash_joined_to_a_word_is_an_option() -> None:
    shown = " ".join(run_cli("analogy", "--help").stdout.replace("│", " ").split())
    assert "king - man + woman - boy + girl" in shown
    assert "an argument that starts with a dash is read as options, -man as -m an" in shown


def test_three_words_and_stdin_and_eval_are_as_they_were(hub: FakeHub, stdin: Any) -> None:
    """A B C on the command line and on stdin's lines, each line's document as the command's; stdin takes a
    sum on a line too."""
    stdin(b"king man woman\nking - man + woman - cat + kitten\n")
    lines = run_json("analogy", "-")["items"]
    assert lines[0] == run_json("analogy", "king", "man", "woman")
    assert lines[1] == run_json("analogy", "king - man + woman - cat + kitten")
    stdin(b"king man\n")
    bad = run_cli("analogy", "-")
    assert bad.exit_code == 7 and '"king man" is not three words A B C' in bad.stderr


@pytest.mark.parametrize("method", ["add", "3cosadd"])
@pytest.mark.parametrize("expression", ["king - king", "king + man - king - man", "cat + dog - cat - dog"])
def test_a_sum_whose_terms_cancel_is_refused_not_ranked(hub: FakeHub, method: str, expression: str) -> None:
    """The zero vector is as near to every token as to any other: ranked, its rounding noise looked like a
    direction (3cosadd answered "\x14" at 0.58 for king + man - king - man), or add said no token was left."""
    result = run_cli("analogy", *expression.split(), "--method", method)
    assert result.exit_code == 2, result.stdout
    summed = "raw rows" if method == "add" else "unit vectors"
    said = f'the terms of "{expression}" cancel: the sum of their {summed}, which {method} ranks by, is the'
    assert said in " ".join(result.stderr.split())
    assert run_json("analogy", "king", "-", "king", "+", "man", "--method", method)["results"]  # man is left


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`")  # inside gensim's most_similar_cosmul
@pytest.mark.parametrize(("method", "refused"), [("add", True), ("3cosadd", False), ("3cosmul", False)])
def test_a_sum_is_refused_only_where_the_vector_its_method_ranks_by_cancels(
    hub: FakeHub, tiny: Tiny, method: str, refused: bool
) -> None:
    """queen - king + man - woman: the raw rows cancel (queen is king - man + woman in the tiny model), the
    unit vectors do not. It was refused for every method; gensim answers 3cosadd and 3cosmul, and so do we."""
    expression = "queen - king + man - woman"
    result = run_cli("analogy", expression, "--method", method, "--json", "-k", "5")
    if refused:
        assert result.exit_code == 2 and "the sum of their raw rows, which add ranks by" in result.stderr
        return
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    kv = gensim_peer(tiny.wte)
    peer = kv.most_similar if method == "3cosadd" else kv.most_similar_cosmul
    expected = peer(positive=[f"t{tiny.id(w)}" for w in ("queen", "man")],
                    negative=[f"t{tiny.id(w)}" for w in ("king", "woman")], topn=5)  # fmt: skip
    assert [r["id"] for r in doc["results"]] == [int(key[1:]) for key, _ in expected]
    assert [r["score"] for r in doc["results"]] == pytest.approx([s for _, s in expected], abs=1e-5)


def test_3cosmul_ranks_a_sum_that_cancels_for_the_others(hub: FakeHub, tiny: Tiny) -> None:
    """king - king: 3cosmul's product c / (c + 1e-6), c = cos'(x, king), is defined for every row and grows
    with the cosine: king's nearest rows first, scored as the definition in float64 gives them."""
    doc = run_json("analogy", "king - king", "--method", "3cosmul", "-k", "4")
    king = tiny.id("king")
    c = (1 + cosines(tiny.wte, tiny.wte[king].astype(np.float64))) / 2
    scores = c / (c + 1e-6)
    scores[king] = -np.inf  # an input, left out
    best = np.sort(scores)[::-1][:4]
    shown = [r["score"] for r in doc["results"]]
    assert shown == pytest.approx(list(best), abs=1e-12)
    assert shown == pytest.approx(list(scores[[r["id"] for r in doc["results"]]]), abs=1e-12)


def test_the_handle_refuses_a_sum_whose_terms_cancel(m: handle.Embeddings) -> None:
    with pytest.raises(UsageError, match="cancel"):
        m.analogy(positive=["cat", "dog"], negative=["dog", "cat"])


def test_an_argument_without_a_sign_is_one_term_however_many_words_it_holds(hub: FakeHub) -> None:
    """As A B C takes "the cat" for A, so does a sum (it was split: 'a word after the word "the"')."""
    three = run_json("analogy", "the cat", "man", "woman")
    assert run_json("analogy", "the cat", "-", "man", "+", "woman")["results"] == three["results"]


@pytest.mark.parametrize("minus", ["\u2212", "\u2013"])
def test_the_chapters_typeset_minus_is_a_sign(hub: FakeHub, minus: str) -> None:
    plain = run_json("analogy", "king", "-", "man", "+", "woman")
    assert run_json("analogy", "king", minus, "man", "+", "woman") == plain
    assert run_json("analogy", f"king {minus} man + woman") == plain


# ---------------------------------------------------------------- the Python handle


def test_the_handle_takes_positive_and_negative(m: handle.Embeddings) -> None:
    three = m.analogy("king", "man", "woman", k=5)
    summed = m.analogy(positive=["king", "woman"], negative=["man"], k=5)
    assert summed.results == three.results  # its inputs: in the order of its terms
    assert summed.expression == "king + woman - man"  # the positive words, then the negative, as given
    long = m.analogy(positive=["king", "woman", "kitten"], negative=["man", "cat"], method="3cosmul")
    assert long.to_dict()["results"] == run_json("analogy", "king - man + woman - cat + kitten", "--method",
                                                 "3cosmul")["results"]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"a": "king", "b": "man", "c": "woman", "positive": ["queen"]}, "not both"),
        ({"a": "king", "b": "man"}, "give three words a, b and c"),
        ({}, "give three words a, b and c"),
        ({"negative": ["man", "king"]}, "at least one positive word"),
        ({"positive": ["king"]}, "two words in all"),
        ({"positive": "king", "negative": []}, "two words in all"),
    ],
)
def test_the_handle_refuses_a_sum_it_cannot_make(
    m: handle.Embeddings, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        m.analogy(**kwargs)


# ---------------------------------------------------------------- any order of the same terms

TERMS = st.lists(
    st.tuples(st.sampled_from(["+", "-"]), st.sampled_from([*WORDS, "id:3", "id:77", "id:250"])),
    min_size=2,
    max_size=6,
).filter(lambda terms: any(sign == "+" for sign, _ in terms))


@FUZZ
@given(terms=TERMS, method=st.sampled_from(METHODS), seed=st.integers(0, 2**32 - 1))
def test_any_order_of_the_same_signed_terms_gives_the_same_answer(
    served: None, terms: list[tuple[str, str]], method: str, seed: int
) -> None:
    def written(ts: list[tuple[str, str]]) -> str:
        first = next(t for t in ts if t[0] == "+")  # a sum starts with a term that takes no sign
        rest = list(ts)
        rest.remove(first)
        return " ".join([first[1], *(f"{s} {w}" for s, w in rest)])

    shuffled = list(terms)
    random.Random(seed).shuffle(shuffled)
    one = run_cli("analogy", written(terms), "--method", method, "--json")
    other = run_cli("analogy", written(shuffled), "--method", method, "--json")
    assert one.exit_code == other.exit_code, (one.output, other.output)
    if one.exit_code == 2:  # terms that cancel (king - king) are refused, in any order
        assert "is the zero vector" in one.stderr and "cancel" in other.stderr
        return
    assert one.exit_code == 0, one.output
    a, b = (json.loads(r.stdout) for r in (one, other))
    # the same vector to the bit: the same ids and the same scores, exactly
    assert a["results"] == b["results"]
    by_word = (sorted((i["word"], i["id"], i["rank"], i["score"]) for i in doc["inputs"]) for doc in (a, b))
    assert next(by_word) == next(by_word)


# ---------------------------------------------------------------- king - man + woman, the three words


def test_analogy_king_man_woman(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("analogy", "king", "man", "woman")
    assert doc["model"] == "gpt2" and doc["expression"] == "king - man + woman"
    first = doc["results"][0]
    assert (first["token"], first["id"], first["rank"]) == (" queen", tiny.id("queen"), 1)
    assert first["score"] == pytest.approx(1.0, abs=1e-6)
    ids = {tiny.id(w) for w in ("king", "man", "woman")}
    assert not ids & {r["id"] for r in doc["results"]}  # inputs left out by default
    scores = cosines(
        tiny.wte, tiny.wte[tiny.id("king")] - tiny.wte[tiny.id("man")] + tiny.wte[tiny.id("woman")]
    )
    for inp in doc["inputs"]:
        assert inp["score"] == pytest.approx(scores[inp["id"]], abs=1e-5)
        s = scores[inp["id"]]  # float32 against float64: rows within 1e-6 of the input may fall either side
        assert int((scores > s + 1e-6).sum()) + 1 <= inp["rank"] <= int((scores > s - 1e-6).sum()) + 1
    expected = [i for i in np.argsort(-scores, kind="stable") if i not in ids][:10]
    assert [r["id"] for r in doc["results"]] == expected


def test_analogy_keep_inputs_marks_them(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("analogy", "king", "man", "woman", "--keep-inputs", "-k", "6")
    scores = cosines(
        tiny.wte, tiny.wte[tiny.id("king")] - tiny.wte[tiny.id("man")] + tiny.wte[tiny.id("woman")]
    )
    assert [r["id"] for r in doc["results"]] == list(np.argsort(-scores, kind="stable")[:6])
    inputs = {tiny.id(w) for w in ("king", "man", "woman")}
    assert [r["input"] for r in doc["results"]] == [r["id"] in inputs for r in doc["results"]]
    assert [r["token"] for r in doc["results"][:2]] == [" queen", " woman"]
    king = next(i for i in doc["inputs"] if i["word"] == "king")
    assert doc["results"][king["rank"] - 1]["token"] == " king"  # an input's rank is its place in this list
    table = run_cli("analogy", "king", "man", "woman", "--keep-inputs", "-k", "3")
    assert '" woman" *' in table.stdout and "where the inputs rank" in table.stdout


# ---------------------------------------------------------------- long sums (issue 49)


def issue_sum(count: int) -> str:
    """The issue's reproducer: count random ids of the tiny model, signs at random."""
    r = random.Random(1)
    first = [f"id:{r.randrange(1, 343)}"]
    rest = [x for _ in range(count - 1) for x in (r.choice("+-"), f"id:{r.randrange(1, 343)}")]
    return " ".join(first + rest)


@pytest.mark.parametrize("count", [300, 1000])
def test_the_inputs_of_a_long_3cosmul_sum_rank_as_numpy_in_log_space(
    hub: FakeHub, tiny: Tiny, count: int
) -> None:
    """294 of 300 inputs had the wrong rank (id:69 shown at 77, at 157 in fact), and with 1000 terms every
    input was at rank 1 while the answers scored higher: float32 bounds multiplied in a Python float fell
    below 1e-38, under the exact float64 scores."""
    expression = issue_sum(count)
    doc = run_json("analogy", expression, "-k", "3", "--method", "3cosmul")
    items = expression.split()
    ids = [int(w[3:]) for w in items[0::2]]
    signs = np.array([1.0] + [1.0 if s == "+" else -1.0 for s in items[1::2]])
    unit = tiny.wte.astype(np.float64) / np.linalg.norm(tiny.wte.astype(np.float64), axis=1, keepdims=True)
    logs = np.log((1 + np.clip(unit @ unit[ids].T, -1, 1)) / 2)
    scores = logs[:, signs > 0].sum(axis=1) - np.logaddexp(logs[:, signs < 0].sum(axis=1), np.log(1e-6))
    assert len(doc["inputs"]) == count
    for put in doc["inputs"]:
        s = scores[put["id"]]
        assert put["log_score"] == pytest.approx(s, abs=1e-9 * (1 + abs(s)))
        assert int((scores > s + 1e-9).sum()) + 1 <= put["rank"] <= int((scores > s - 1e-9).sum()) + 1
    best = [i for i in np.argsort(-scores, kind="stable") if i not in set(ids)][:3]
    assert [r["id"] for r in doc["results"]] == best
    assert len({put["rank"] for put in doc["inputs"]}) > 50


def test_a_product_below_float64s_range_is_shown_as_0_and_ranked_by_its_log(hub: FakeHub) -> None:
    expression = issue_sum(3000)  # its best products are near 1e-450
    doc = run_json("analogy", expression, "-k", "3", "--method", "3cosmul", "--keep-inputs")
    assert all(r["score"] == 0 and r["log_score"] < -709 for r in doc["results"])
    logs = [r["log_score"] for r in doc["results"]]
    assert logs == sorted(logs, reverse=True) and len(set(logs)) == 3
    lost = [x for x in (*doc["results"], *doc["inputs"]) if x["score"] == 0 and x["log_score"] > -np.inf]
    said = f"{len(lost)} 3cosmul scores are below float64's range (1e-308) and shown as 0"
    assert len(lost) > 3 and any(n.startswith(said) for n in doc["notes"])
    assert run_json("analogy", "king - man + woman", "--method", "add")["results"][0]["log_score"] is None


# ---------------------------------------------------------------- what the handle writes reads back


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"positive": ["king - man"], "negative": ["woman"]}, 'the word "king - man" holds a sign'),
        ({"positive": ["-"], "negative": ["man"]}, 'the word "-" is a sign'),
        ({"positive": ["king"], "negative": ["\u2212"]}, "is a sign"),
        ({"a": "king", "b": "man + boy", "c": "woman"}, "holds a sign"),
    ],
)
def test_the_handle_refuses_a_word_that_the_command_line_would_read_as_signs(
    m: handle.Embeddings, kwargs: dict[str, Any], message: str
) -> None:
    """positive=["king - man"], negative=["woman"] was shown as "king - man - woman" (three terms, read back),
    and positive=["-"] as "- - man", which the command line cannot read."""
    with pytest.raises(UsageError, match=message):
        m.analogy(**kwargs)


@FUZZ
@given(terms=TERMS, method=st.sampled_from(METHODS))
def test_the_expression_of_a_handle_call_reads_back_as_the_same_sum(
    served: None, terms: list[tuple[str, str]], method: str
) -> None:
    m = gpt2emb.open("gpt2", reporter=QuietReporter())
    positive, negative = [w for s, w in terms if s == "+"], [w for s, w in terms if s == "-"]
    try:
        result = m.analogy(positive=positive, negative=negative, method=method)
    except UsageError as e:
        assert "cancel" in str(e)
        return
    again = run_json("analogy", result.expression, "--method", method)
    assert again["terms"] == result.to_dict()["terms"] and again["results"] == result.to_dict()["results"]


# ---------------------------------------------------------------- a sign glued to its word (issue 54)


@pytest.mark.parametrize(
    ("args", "told"),
    [
        (["king", "-man", "+woman"], "-man is read as the option -m an"),
        (["king", "-man", "+woman", "-m", "gpt2"], "-man is read as the option -m an"),  # -m repeats
        (["-m", "gpt2", "king", "+woman", "-man"], "-man is read as the option -m an"),
        (["king", "-kitten"], "-kitten is read as the option -k itten"),
        (["king", "-woman", "+man"], "-woman is read as options"),  # -w is no option
    ],
)
def test_a_sign_glued_to_its_word_is_told_where_to_put_the_space(
    hub: FakeHub, args: list[str], told: str
) -> None:
    """Was: `an is not a model I know` (exit 3), or click's `No such option: -w`."""
    result = run_cli("analogy", *args)
    assert result.exit_code == 2 and result.stdout == ""
    terms = [a for a in args if a not in ("-m", "gpt2")]
    spaced = " ".join(f"{t[0]} {t[1:]}" if t[0] in "+-" else t for t in terms)
    assert result.stderr == f"gpt2emb: {told}: put a space after the sign ({spaced})\n"
    assert hub.requests == []  # told before anything was fetched


def test_a_model_glued_to_m_stays_a_model(hub: FakeHub) -> None:
    assert run_json("analogy", "king", "man", "woman", "-mgpt2", "-k", "1") == run_json(
        "analogy", "king", "man", "woman", "-k", "1"
    )
    glued = run_cli("analogy", "king", "man", "woman", "-msmall", "-k", "1")  # an alias of gpt2
    assert glued.exit_code == 0, glued.stderr


@FUZZ
@given(word=st.text(st.characters(categories=["Lu", "Ll"]), min_size=2, max_size=8))
def test_any_word_with_a_dash_glued_is_refused_before_any_fetch(served: None, word: str) -> None:
    from gpt2emb import registry

    from conftest import HUB

    assume(not (word[0] == "m" and registry.find(word[1:])))  # -mxl: the model xl, glued to -m
    HUB.requests.clear()
    result = run_cli("analogy", "king", f"-{word}")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"gpt2emb: -{word} is read as "), result.stderr
    assert result.stderr.endswith(f": put a space after the sign (king - {word})\n"), result.stderr
    assert HUB.requests == []
