"""candidates.py: restricted candidates (--among, --restrict, --whole-words).

The ranking is checked against scoring only the allowed rows, and neighbors and analogy run through the CLI
against the tiny GPT-2's planted rows. --restrict 1 is the smallest restriction there is. The note that
names the words of an --among file that are not one token is checked for how many it names and for its
singular and plural, each against what the tiny GPT-2's vocabulary says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpt2emb import ops
from gpt2emb.word_lists import listed_words

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


def blurred(scores: np.ndarray, slack: np.ndarray) -> ops.Ranking:
    """A ranking whose fast bounds are the exact scores blurred by +-slack (inf: a row without a bound)."""
    return ops.Ranking(scores - slack, scores + slack, lambda ids: scores[ids])


def by_hand(scores: np.ndarray, k: int, exclude: set[int], allowed: np.ndarray) -> list[tuple[int, float]]:
    """Only the allowed rows scored, best first, ties by the smaller id."""
    rows = [i for i in np.flatnonzero(allowed).tolist() if i not in exclude]
    return [(i, float(scores[i])) for i in sorted(rows, key=lambda i: (-scores[i], i))[:k]]


@pytest.mark.parametrize("seed", range(6))
def test_top_and_rank_among_allowed_rows_are_those_of_the_allowed_rows_alone(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    scores = np.round(rng.normal(size=n), 1)  # many ties
    slack = rng.choice([0.0, 0.05, 0.5, np.inf], size=n, p=[0.3, 0.3, 0.3, 0.1])
    ranking = blurred(scores, slack)
    allowed = rng.random(n) < 0.3
    exclude = {int(i) for i in rng.choice(n, 5, replace=False)}
    for k in (1, 5, 20, int(allowed.sum()), n):
        assert ranking.top(k, tuple(exclude), allowed) == by_hand(scores, k, exclude, allowed)
    for i in rng.choice(n, 20).tolist():
        place = 1 + int((scores[allowed] > scores[i]).sum())
        assert ranking.ranks([i], allowed) == [(place, scores[i])]
    assert ranking.top(n, (), None) == by_hand(scores, n, set(), np.ones(n, dtype=bool))


def test_fewer_rows_than_k_give_fewer_answers_never_padding() -> None:
    scores = np.array([0.1, 0.9, 0.5, 0.7, 0.3])
    ranking = blurred(scores, np.full(5, np.inf))  # no row bounded: the mask alone keeps outsiders out
    allowed = np.array([True, False, True, False, True])
    assert ranking.top(10, (2,), allowed) == [(4, 0.3), (0, 0.1)]
    assert ranking.top(10, (0, 2, 4), allowed) == []
    assert ranking.ranks([1], allowed) == [(1, 0.9)]  # an outsider: where it would stand among the allowed


def test_restrict_sinks_the_columns_outside_the_mask_of_a_block() -> None:
    lo, hi = np.zeros((2, 4)), np.ones((2, 4))
    ops.sink_outside(lo, hi, np.array([True, False, True, False]))
    assert (lo[:, [1, 3]] == -np.inf).all() and (hi[:, [1, 3]] == -np.inf).all()
    assert (lo[:, [0, 2]] == 0).all() and (hi[:, [0, 2]] == 1).all()


def test_a_word_list_skips_blank_lines_and_comments() -> None:
    lines = ["# animals", "cat", "", "  dog  ", "\t# indented comment", "id:5", "c#"]
    assert list(listed_words(lines)) == [(2, "cat"), (4, "dog"), (6, "id:5"), (7, "c#")]


# ---------------------------------------------------------------- through the CLI, on the tiny GPT-2


def exact_cosines(wte: np.ndarray, v: np.ndarray) -> np.ndarray:
    x = wte.astype(np.float64)
    v = v.astype(np.float64)
    return np.asarray(x @ v / (np.linalg.norm(x, axis=1) * np.linalg.norm(v)))


def expected(wte: np.ndarray, v: np.ndarray, rows: list[int], k: int) -> list[int]:
    s = exact_cosines(wte, v)
    return sorted(rows, key=lambda i: (-s[i], i))[:k]


def ids_of(doc: dict) -> list[int]:  # type: ignore[type-arg]
    return [n["id"] for n in doc["items"][0]["neighbors"]]


@pytest.fixture
def animals(tmp_path: Path) -> Path:
    path = tmp_path / "animals.txt"
    path.write_text("# animals of the tiny model\ncat\ncats\n\nkitten\ndog\ngato\nid:5\n", encoding="utf-8")
    return path


def test_neighbors_among_the_words_of_a_file(hub: FakeHub, tiny: Tiny, animals: Path) -> None:
    doc = run_json("neighbors", "cat", "--among", str(animals))
    cat, cats, kitten, dog = (tiny.id(w) for w in ("cat", "cats", "kitten", "dog"))
    assert ids_of(doc) == [cats, kitten, dog, 5]  # the query itself left out; fewer than k, never padded
    assert [n["score"] for n in doc["items"][0]["neighbors"][:3]] == pytest.approx(
        [2 / np.sqrt(4.09), 2 / np.sqrt(4.64), 1 / np.sqrt(3.25)], abs=1e-6
    )
    c = doc["candidates"]
    assert c == {"count": 5, "among": str(animals), "restrict": None, "whole_words": False, "split": ["gato"]}
    assert any("gato" in n and "left out" in n for n in doc["notes"])
    assert any("only 4 tokens" in n for n in doc["notes"])
    kept = run_json("neighbors", "cat", "--among", str(animals), "--keep-query", "-k", "2")
    assert ids_of(kept) == [cat, cats]
    table = run_cli("neighbors", "cat", "--among", str(animals))
    assert table.exit_code == 0 and "candidates: 5 tokens (--among" in table.stdout
    assert '"gato"' in table.stdout and "fewer than the 10" in table.stdout


def test_neighbors_restricted_to_the_first_ids_and_to_whole_words(hub: FakeHub, tiny: Tiny) -> None:
    v = tiny.wte[tiny.id("cat")]
    for n in (300, 343):
        doc = run_json("neighbors", "cat", "--restrict", str(n), "-k", "5")
        rows = [i for i in range(n) if i != tiny.id("cat")]
        assert ids_of(doc) == expected(tiny.wte, v, rows, 5)
        assert doc["candidates"]["count"] == n
    assert tiny.id("kitten") == 300  # so --restrict 300 leaves kitten out, 301 keeps it
    whole = [
        i
        for i in range(len(tiny.wte))
        if (t := tiny.tokenizer.decode([i])).startswith(" ") and t[1:].strip() and "\ufffd" not in t
    ]
    doc = run_json("neighbors", "cat", "--whole-words", "-k", "8")
    assert ids_of(doc) == expected(tiny.wte, v, [i for i in whole if i != tiny.id("cat")], 8)
    assert doc["candidates"]["count"] == len(whole)
    both = run_json("neighbors", "cat", "--whole-words", "--restrict", "300", "-k", "8")
    assert ids_of(both) == expected(tiny.wte, v, [i for i in whole if i < 300 and i != tiny.id("cat")], 8)


def test_analogy_among_candidates_ranks_the_inputs_among_them(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    royals = tmp_path / "royals.txt"
    royals.write_text("queen\nprince\nking\ncat\n")
    doc = run_json("analogy", "king", "man", "woman", "--among", str(royals))
    queen, prince, king, cat = (tiny.id(w) for w in ("queen", "prince", "king", "cat"))
    target = tiny.wte[king] - tiny.wte[tiny.id("man")] + tiny.wte[tiny.id("woman")]
    assert [r["id"] for r in doc["results"]] == expected(tiny.wte, target, [queen, prince, cat], 10)
    assert doc["results"][0]["id"] == queen and doc["results"][0]["score"] == pytest.approx(1.0)
    s = exact_cosines(tiny.wte, target)
    for i in doc["inputs"]:
        assert i["rank"] == 1 + sum(s[j] > s[i["id"]] for j in (queen, prince, king, cat))
    assert doc["candidates"]["count"] == 4 and any("only 3 tokens" in n for n in doc["notes"])
    table = run_cli("analogy", "king", "man", "woman", "--among", str(royals))
    assert "where the inputs rank (among the candidates)" in table.stdout
    whole = run_json("analogy", "king", "man", "woman", "--whole-words", "--restrict", "300", "-k", "3")
    assert all(r["token"].startswith(" ") and r["id"] < 300 for r in whole["results"])


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (b"cat\n<|endoftext|>\n", [], "line 2: <|endoftext|> is a special token"),
        (b"cat\n\nid:9999\n", [], "line 3: id:9999 does not exist: token ids go from 0 to 342"),
        (b"cat\n\xff\n", [], "line 2: not UTF-8 text"),
        (b"# only a comment\n\n", [], "lists no words"),
        (b"gato\n", [], "leaves no token to rank"),
        (b"gato\n", ["--pool", "strict"], 'line 1: " gato" is not one token'),
        (b"cat\ncats\n", ["--restrict", "200"], "with --restrict 200 leave no token"),
        (b"cat\n", ["--restrict", "0"], "--restrict must be 1 or more"),
        (b"cat\n", ["--restrict", "344"], "--restrict 344 is more than the 343 tokens"),
    ],
)
def test_bad_candidates_are_refused_with_the_line(
    hub: FakeHub, tmp_path: Path, content: bytes, args: list[str], message: str
) -> None:
    words = tmp_path / "words.txt"
    words.write_bytes(content)
    result = run_cli("neighbors", "dog", "--among", str(words), *args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_bad_input_is_refused_before_anything_is_fetched(hub: FakeHub, tmp_path: Path) -> None:
    missing = run_cli("neighbors", "cat", "--among", str(tmp_path / "nope.txt"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr
    assert (
        run_cli("neighbors", "cat", "--restrict", "60000").exit_code == 2
    )  # gpt2's 50257, from the registry
    special = tmp_path / "special.txt"
    special.write_text("<|endoftext|>\n")
    assert run_cli("analogy", "king", "man", "woman", "--among", str(special)).exit_code == 2
    assert hub.requests == []
    evaluated = run_cli("analogy", "--eval", "q.txt", "--among", str(special))
    assert evaluated.exit_code == 2 and "--eval takes --restrict N" in evaluated.stderr


SPLIT = (
    "gato",
    "perro",
    "zorro",
    "xyzzy",
    "plugh",
    "qwerty",
    "frobnitz",
)  # none is one token of the tiny model


def test_split_words_are_words_the_tiny_model_splits(tiny: Tiny) -> None:
    vocab = tiny.vocab
    assert all("Ġ" + w not in vocab and w not in vocab for w in SPLIT)


def test_restrict_1_keeps_token_id_0_alone(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("neighbors", "cat", "--restrict", "1")
    assert [n["id"] for n in doc["items"][0]["neighbors"]] == [0]  # the one candidate, id 0, never cat (300s)
    assert doc["candidates"]["count"] == 1 and doc["candidates"]["restrict"] == 1
    table = run_cli("neighbors", "cat", "--restrict", "1")
    assert table.exit_code == 0, table.stderr
    assert "candidates: 1 token (--restrict 1)" in table.stdout


def words_file(tmp_path: Path, words: tuple[str, ...]) -> Path:
    path = tmp_path / "words.txt"
    path.write_text("cat\ndog\n" + "".join(w + "\n" for w in words), encoding="utf-8")
    return path


def split_note(doc: dict) -> str:  # type: ignore[type-arg]
    (note,) = [n for n in doc["notes"] if "not one token" in n]
    return str(note)


@pytest.mark.parametrize(
    ("count", "said"),
    [
        (1, '1 word of {path} is not one token and cannot be ranked as one, so it is left out: "gato"'),
        (
            2,
            "2 words of {path} are not one token and cannot be ranked as one, so they are left out: "
            '"gato", "perro"',
        ),
        (
            5,
            "5 words of {path} are not one token and cannot be ranked as one, so they are left out: "
            '"gato", "perro", "zorro", "xyzzy", "plugh"',
        ),
        (
            6,
            "6 words of {path} are not one token and cannot be ranked as one, so they are left out: "
            '"gato", "perro", "zorro", "xyzzy", "plugh", ...',
        ),
    ],
)
def test_the_note_names_at_most_five_split_words_in_the_right_number(
    hub: FakeHub, tmp_path: Path, count: int, said: str
) -> None:
    path = words_file(tmp_path, SPLIT[:count])
    doc = run_json("neighbors", "bird", "--among", str(path))
    assert split_note(doc) == said.format(path=path)
    assert doc["candidates"]["split"] == list(SPLIT[:count])  # the JSON lists them all
    assert doc["candidates"]["count"] == 2  # cat and dog
