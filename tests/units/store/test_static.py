"""A static word table as -m FILE (issue 55), on files nobody here wrote (gensim's test data): what is read
equals gensim's load_word2vec_format (words, order, float32 values), and neighbors and analogy (3cosadd and
3cosmul, the notation too) equal its most_similar and most_similar_cosmul; words are keys."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from gpt2emb.store import static

from conftest import run_cli, run_json

gensim = pytest.importorskip("gensim")
# gensim's reader of a file without a header leaves it open; most_similar_cosmul calls init_sims
pytestmark = [
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`:DeprecationWarning"),
]
from gensim.models import KeyedVectors  # noqa: E402

DATA = Path(os.path.dirname(gensim.__file__)) / "test" / "test_data"
GLOVE = DATA / "test_glove.txt"
LEE = DATA / "lee_fasttext.vec"
EUCLID = DATA / "euclidean_vectors.bin"
EN = DATA / "EN.1-10.cbow1_wind5_hs0_neg10_size300_smpl1e-05.txt"
CRIME = DATA / "crime-and-punishment.vec"
PANG = DATA / "pang_lee_polarity_fasttext.vec"
POINCARE = DATA / "poincare_vectors.bin"

# each file, how gensim reads it, and the kind gpt2emb tells from its content
FILES = [
    (GLOVE, {"no_header": True}, "GloVe text"),
    (LEE, {}, "word2vec text"),
    (EN, {}, "word2vec text"),
    (CRIME, {}, "word2vec text"),
    (EUCLID, {"binary": True}, "word2vec binary"),
    (POINCARE, {"binary": True}, "word2vec binary"),
]
TOL = 1e-6


def gensim_of(path: Path, **how: object) -> KeyedVectors:
    return KeyedVectors.load_word2vec_format(str(path), **how)


@pytest.mark.parametrize(("path", "how", "kind"), FILES, ids=[f[0].name for f in FILES])
def test_what_is_read_equals_gensim_load_word2vec_format(
    path: Path, how: dict[str, object], kind: str
) -> None:
    kv = gensim_of(path, **how)
    table = static.read_table(path, "utf-8", path.name)
    assert table.kind == kind
    assert table.keys == list(kv.index_to_key)
    assert table.rows.dtype == np.float32 and np.array_equal(table.rows, kv.vectors)  # the same parse


def test_a_cp1252_file_needs_its_encoding_and_then_equals_gensim() -> None:
    """pang_lee_polarity_fasttext.vec holds 5 lines in cp1252: UTF-8 is refused naming the first (exit 6)."""
    done = run_cli("vector", "id:0", "-m", str(PANG))
    assert done.exit_code == 6
    assert "line 150, holds the byte 0x97, which is not utf-8: give the file's encoding with --encoding" in (
        done.stderr
    )
    kv = gensim_of(PANG, encoding="cp1252")
    table = static.read_table(PANG, "cp1252", PANG.name)
    assert table.keys == list(kv.index_to_key) and np.array_equal(table.rows, kv.vectors)
    shown = run_json("vector", "id:149", "-m", str(PANG), "--encoding", "cp1252")["items"][0]
    assert shown["tokens"][0]["token"] == kv.index_to_key[149]
    np.testing.assert_allclose(shown["vector"], kv.vectors[149], rtol=0, atol=TOL)


def same_ranking(ours: list[tuple[str, float]], theirs: list[tuple[str, float]]) -> None:
    """Scores to 1e-6; the order exact wherever two neighbouring scores differ by more than that."""
    assert len(ours) == len(theirs)
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], rtol=0, atol=TOL)
    i = 0
    while i < len(ours):  # a run of scores within TOL of each other may come in any order
        j = i + 1
        while j < len(ours) and abs(theirs[j][1] - theirs[j - 1][1]) <= TOL:
            j += 1
        assert {w for w, _ in ours[i:j]} == {w for w, _ in theirs[i:j]}, (ours[i:j], theirs[i:j])
        i = j


def neighbours(path: Path, word: str, k: int) -> list[tuple[str, float]]:
    item = run_json("neighbors", word, "-m", str(path), "-k", str(k))["items"][0]
    return [(n["token"], n["score"]) for n in item["neighbors"]]


@pytest.mark.parametrize(
    ("path", "how", "words"),
    [
        (GLOVE, {"no_header": True}, ["the", "he", "percent"]),
        (LEE, {}, ["night", "government", "Australia"]),
        (EUCLID, {"binary": True}, ["king", "woman"]),
        (CRIME, {}, ["и", "он"]),
    ],
    ids=["glove", "lee", "euclidean", "crime"],
)
def test_neighbors_equal_gensim_most_similar(path: Path, how: dict[str, object], words: list[str]) -> None:
    kv = gensim_of(path, **how)
    for word in words:
        same_ranking(neighbours(path, word, 10), kv.most_similar(word, topn=10))


@pytest.mark.parametrize("method", ["3cosadd", "3cosmul"])
@pytest.mark.parametrize(
    ("path", "how", "abc"),
    [
        (GLOVE, {"no_header": True}, ("he", "his", "her")),
        (LEE, {}, ("night", "day", "week")),
        (EUCLID, {"binary": True}, ("king", "man", "woman")),
    ],
    ids=["glove", "lee", "euclidean"],
)
def test_analogy_equals_gensim_in_both_notations(
    path: Path, how: dict[str, object], abc: tuple[str, str, str], method: str
) -> None:
    kv = gensim_of(path, **how)
    a, b, c = abc
    ask = kv.most_similar if method == "3cosadd" else kv.most_similar_cosmul
    theirs = ask(positive=[a, c], negative=[b], topn=8)
    for words in ([a, b, c], [a, "-", b, "+", c], [f"{a} - {b} + {c}"]):
        doc = run_json("analogy", *words, "-m", str(path), "--method", method, "-k", "8")
        same_ranking([(r["token"], r["score"]) for r in doc["results"]], theirs)


def test_restrict_keeps_the_first_keys_as_gensim_restrict_vocab() -> None:
    kv = gensim_of(LEE)
    got = run_json("neighbors", "night", "-m", str(LEE), "-k", "5", "--restrict", "300")["items"][0]
    same_ranking(
        [(n["token"], n["score"]) for n in got["neighbors"]],
        kv.most_similar("night", topn=5, restrict_vocab=300),
    )


def test_a_word_is_a_key_as_typed() -> None:
    """No leading space, case as typed, id:N in file order; a missing word names the nearest keys, and its
    lowercase where that is a key; a phrase is refused unless it is a key."""
    doc = run_json("vector", "the", "id:3", "-m", str(GLOVE))
    assert [i["tokens"] for i in doc["items"]] == [[{"id": 0, "token": "the"}], [{"id": 3, "token": "हु"}]]
    done = run_cli("neighbors", "The", "-m", str(GLOVE))
    assert done.exit_code == 2
    assert '"The" is not a key of' in done.stderr and "its lowercase, the, is one" in done.stderr
    done = run_cli("neighbors", "thee", "-m", str(GLOVE))
    assert done.exit_code == 2 and "the nearest keys: there, the, they" in done.stderr
    done = run_cli("neighbors", "new york", "-m", str(LEE))
    assert done.exit_code == 2 and "a phrase is a key only where the file holds it as one" in done.stderr
    done = run_cli("vector", "id:76", "-m", str(GLOVE))
    assert done.exit_code == 2 and "id:76 does not exist" in done.stderr and "id:0 to id:75" in done.stderr


@pytest.mark.parametrize("command", [["neighbors"], ["vector"], ["analogy", "king", "man"]])
def test_an_empty_word_and_a_large_k_speak_of_keys(command: list[str]) -> None:
    """A static table has keys, not tokens, and no --exact: the messages offer neither."""
    done = run_cli(*command, "", "-m", str(GLOVE))
    assert done.exit_code == 2
    assert "an empty word is not a key; type a word" in done.stderr and "--exact" not in done.stderr
    if command == ["neighbors"]:
        done = run_cli("neighbors", "the", "-m", str(GLOVE), "-k", "77")
        assert done.exit_code == 2 and "must be at most 76 (the number of keys), not 77" in done.stderr
    done = run_cli("neighbors", "", "-m", "gpt2")  # a model keeps its own words
    assert done.exit_code == 2 and "has no token; type a word, or use --exact" in done.stderr


def test_the_handle_s_k_speaks_of_keys() -> None:
    import gpt2emb
    from gpt2emb.errors import UsageError

    with pytest.raises(UsageError, match=r"at most 76 \(the number of keys\), not 80"):
        gpt2emb.open(str(GLOVE)).neighbors("the", k=80)
