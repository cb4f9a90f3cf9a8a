"""The Python handle's contract (issue 24.4): every public entry refuses a bad value with a Gpt2embError and a
value of the wrong type with a TypeError naming the parameter, never an error from deep inside; and sentences
are the tokenizer's own ids, special tokens with the spaces around them (issue 24.5)."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpt2emb
from gpt2emb import commands, handle
from gpt2emb.batch import Answers
from gpt2emb.core.whole import encode
from gpt2emb.errors import Gpt2embError
from gpt2emb.report import QuietReporter
from gpt2emb.tokens import Vocab

from conftest import FUZZ, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local


@pytest.fixture
def m(hub: FakeHub) -> handle.Embeddings:
    return gpt2emb.open("gpt2", reporter=QuietReporter())


# ---------------------------------------------------------------- the reproducers


WRONG_TYPES: list[tuple[str, Callable[[handle.Embeddings, Path], Any]]] = [
    ("text", lambda m, _: m.input(5)),  # type: ignore[arg-type]
    ("text", lambda m, _: m.input(b"x")),  # type: ignore[arg-type]
    ("revision", lambda m, _: gpt2emb.open("gpt2", revision=5)),  # type: ignore[arg-type]
    ("out", lambda m, _: m.export("word2vec", out=None)),  # type: ignore[arg-type]
    ("out", lambda m, _: m.export("word2vec", out=5)),  # type: ignore[arg-type]
    ("exact", lambda m, _: m.vector("cat", exact=np.array([True, False]))),  # type: ignore[arg-type]
    ("full", lambda m, _: m.input("the cat", full=np.array([1, 2]))),  # type: ignore[arg-type]
    ("fold", lambda m, _: m.neighbors("cat", fold=b"x")),  # type: ignore[arg-type]
    ("reporter", lambda m, tmp: m.export("word2vec", tmp / "v.txt", reporter=5)),  # type: ignore[arg-type]
    ("reporter", lambda m, _: gpt2emb.open("gpt2", reporter=5)),  # type: ignore[arg-type]
    ("words", lambda m, _: list(m.each_vector(np.array(5)))),
    ("words", lambda m, _: list(m.each_neighbors(["cat", b"dog"]))),  # type: ignore[list-item]
    ("pool", lambda m, _: m.vector("cat", pool=5)),  # type: ignore[arg-type]
    ("k", lambda m, _: m.neighbors("cat", k="3")),  # type: ignore[arg-type]
    ("model", lambda m, _: gpt2emb.open(5)),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("name", "call"), WRONG_TYPES)
def test_a_wrong_type_is_a_type_error_naming_the_parameter(
    m: handle.Embeddings, tmp_path: Path, name: str, call: Callable[[handle.Embeddings, Path], Any]
) -> None:
    with pytest.raises(TypeError) as refused:
        call(m, tmp_path)
    assert name in str(refused.value)
    assert isinstance(refused.value, Gpt2embError) and refused.value.code == 2  # caught with the rest


BAD_VALUES: list[tuple[str, Callable[[handle.Embeddings, Path], Any]]] = [
    ("is not Unicode text", lambda m, _: m.input("\udcff")),
    ("is not Unicode text", lambda m, _: m.vector(["cat", "\udcff"])),
    ("is not Unicode text", lambda m, _: m.analogy("king", "man", "wo\udcffman")),
    ("NUL", lambda m, tmp: m.export("word2vec", out=str(tmp / "a\0b.txt"))),
    ("NUL", lambda m, _: m.neighbors("cat", among="words\0.txt")),
    ("NUL", lambda m, _: gpt2emb.open("/tmp/a\0b")),
    ("File name too long", lambda m, tmp: m.export("word2vec", out=tmp / ("x" * 5000))),
    ("File name too long", lambda m, _: m.position_map(png="x" * 5000 + ".png")),
    ("is not a model I know", lambda m, _: gpt2emb.open("x" * 5000, reporter=QuietReporter())),
    ("not UTF-8 text", lambda m, tmp: m.neighbors("cat", among=str(tmp / "caf\udce9.txt"))),
]


@pytest.mark.parametrize(("said", "call"), BAD_VALUES)
def test_a_bad_value_is_a_project_error(
    m: handle.Embeddings, tmp_path: Path, said: str, call: Callable[[handle.Embeddings, Path], Any]
) -> None:
    with pytest.raises(Gpt2embError, match=said) as refused:
        call(m, tmp_path)
    assert not isinstance(refused.value, TypeError)


def test_a_missing_or_unknown_argument_names_the_method(m: handle.Embeddings) -> None:
    """Python's own TypeError, as an unchecked method gives it: the method named, then what is wrong."""
    with pytest.raises(TypeError, match=r"^Embeddings\.vector\(\): missing a required argument: 'words'$"):
        m.vector()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^Embeddings\.neighbors\(\): got an unexpected keyword argument"):
        m.neighbors("cat", top=3)  # type: ignore[call-arg]


def test_a_folder_is_a_str_or_a_path(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    save_local(tiny, tmp_path / "folder")
    by_path = gpt2emb.open(tmp_path / "folder", reporter=QuietReporter())
    by_str = gpt2emb.open(str(tmp_path / "folder"), reporter=QuietReporter())
    assert by_path.name == by_str.name
    assert by_path.vector("cat").to_dict() == by_str.vector("cat").to_dict()


def test_a_flag_is_never_copied_into_a_result(m: handle.Embeddings) -> None:
    with pytest.raises(TypeError, match="fold must be a bool"):
        m.neighbors("cat", fold=b"x")  # type: ignore[arg-type]
    folded = m.neighbors("cat", k=2, fold=np.bool_(True))  # type: ignore[arg-type]
    assert folded.fold is True and json.dumps(folded.to_dict())


def test_numpy_numbers_stay_welcome(m: handle.Embeddings) -> None:
    assert m.positions(np.int64(3)).positions == (3,)  # type: ignore[arg-type]
    assert m.positions(np.arange(3)).positions == (0, 1, 2)  # type: ignore[arg-type]
    heatmap = m.position_map(cells=np.int32(4))  # type: ignore[arg-type]
    assert heatmap.to_dict() == run_json("positions", "--heatmap", "--cells", "4")
    with pytest.raises(TypeError, match="positions"):
        m.positions([0.5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="positions"):
        m.positions(True)


def test_a_stream_item_that_is_not_unicode_fails_as_its_line(m: handle.Embeddings) -> None:
    from gpt2emb.batch import FailedLine

    answers = list(m.each_vector(["cat", "ca\udcfft", "dog"]))
    failed = answers[1]
    assert isinstance(failed, FailedLine) and failed.message.startswith("line 2: it is not Unicode text")
    assert [a.word for a in answers if not isinstance(a, FailedLine)] == ["cat", "dog"]


def test_the_contract_is_documented() -> None:
    for doc in (gpt2emb.open.__doc__, handle.Embeddings.__doc__):
        assert doc is not None and "TypeError" in doc and "Gpt2embError" in doc
    assert list(inspect.signature(handle.Embeddings.neighbors).parameters) == [  # as a notebook shows it
        "self", "words", "k", "exact", "pool", "keep_query", "among", "restrict", "whole_words", "fold",
    ]  # fmt: skip


# what differs between two runs of one question: how long it took
TIMINGS = {"seconds", "elapsed", "took"}


def _answer(doc: Any) -> Any:
    """A document without its timings."""
    if isinstance(doc, dict):
        return {k: _answer(v) for k, v in doc.items() if k not in TIMINGS}
    return [_answer(v) for v in doc] if isinstance(doc, list) else doc


COMPARED = [m for m in commands.methods() if m.same_as]


@pytest.mark.parametrize("method", COMPARED, ids=[m.name for m in COMPARED])
def test_every_declared_example_answers_as_its_command(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: commands.Method
) -> None:
    """Each entry's example (its stem's declaration) called, and its result's document compared, key by key,
    with the --json of the command line the declaration says it answers as."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "questions.txt").write_text(": capitals\nking man woman queen\ncat cats dog dogs\n")
    (tmp_path / "pairs.txt").write_text("cat\tdog\t5.0\nking\tqueen\t8.0\ncat\tking\t1.0\n")
    opened = gpt2emb.open("gpt2", reporter=QuietReporter())  # cached: what cache list and verify see
    expected = run_json(*method.same_as)
    result = getattr(gpt2emb if method.module_level else opened, method.name)(**method.example)
    assert _answer(result.to_dict()) == _answer(expected)


def test_the_docstrings_example_answers_as_its_command(hub: FakeHub) -> None:
    """The example of Embeddings' docstring, run as written (its `>>>` lines in one session): its last value
    is the tokens `neighbors cat -k 5 --json` ranks."""
    assert handle.Embeddings.__doc__ is not None
    said = handle.Embeddings.__doc__.splitlines()
    lines = [line.strip()[4:] for line in said if line.strip().startswith(">>> ")]
    assert len(lines) == 2
    namespace: dict[str, Any] = {"gpt2emb": gpt2emb}
    exec(lines[0], namespace)
    shown = eval(lines[1], namespace)
    ranked = run_json("neighbors", "cat", "-k", "5")["items"][0]["neighbors"]
    assert shown == [n["token"] for n in ranked] and len(shown) == 5


# ---------------------------------------------------------------- any value of any parameter


def _path_like(v: Any) -> bool:
    return isinstance(v, str | Path)


# values of every type a caller might pass by mistake, and strings that are bad values of most parameters
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=8),
    st.text(max_size=12),
    st.sampled_from(
        ["", " ", "\udcff", "a\0b", "x" * 5000, "id:99999", "5-2", "-", "cat", "mean", "3cosmul"]
    ),
    st.lists(
        st.one_of(st.integers(-5, 5), st.text(max_size=4), st.none(), st.binary(max_size=2)), max_size=3
    ),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.sampled_from(
        [np.array(5), np.array([1, 2]), np.array([]), np.float64(1.5), np.int64(3), np.bool_(True)]
    ),
    st.builds(object),
    st.builds(Path, st.sampled_from(["", "x" * 5000, "caf\udce9"])),
)


def _confined(value: Any) -> Any:
    """A path drawn for a path parameter, kept inside the test's folder: relative, with no way up or home
    (tests may run as root, and export and png write where they are told, replacing what is there)."""
    if isinstance(value, Path):
        return Path(_confined(str(value)))
    if not isinstance(value, str) or value.strip() in ("", "."):
        return value
    return "drawn-" + value.replace("/", "_").replace("\\", "_")


def _drawing(value: Any) -> bool:
    """A png that would draw a figure (slow, and not what this property is about): refused as a value here."""
    shown = str(value) if _path_like(value) else ""
    return bool(shown) and "\0" not in shown and shown.isprintable() and len(shown) < 300


# every public entry, with a good value for each parameter (its stem's declared example, gpt2emb/commands/;
# open is no command's): one of them is replaced by any value
CALLS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    **{
        m.name: (getattr(gpt2emb if m.module_level else handle.Embeddings, m.name), dict(m.example))
        for m in commands.methods()
    },
    "open": (gpt2emb.open, {"model": "gpt2", "revision": None, "reporter": QuietReporter()}),
}
MODULE_LEVEL = {"open", *(name for name in gpt2emb.__all__ if name[0].islower())}
PARAMETERS = [(call, name) for call, (_, good) in CALLS.items() for name in good]


def test_every_public_entry_and_parameter_is_fuzzed() -> None:
    public = {
        n for n in vars(handle.Embeddings) if not n.startswith("_") and callable(vars(handle.Embeddings)[n])
    }
    assert public | MODULE_LEVEL == set(CALLS)
    for call, (function, good) in CALLS.items():
        names = list(inspect.signature(function).parameters)
        taken = names if call in MODULE_LEVEL else names[1:]  # a method's first is the handle (self, or o)
        assert taken == list(good), function


def _consumed(result: Any) -> Any:
    """A stream's answers, all of them: a refusal of a stream's item comes as the stream reaches it."""
    return list(result) if isinstance(result, Answers) else result


@FUZZ
@given(target=st.sampled_from(PARAMETERS), value=ANY)
def test_any_value_of_any_parameter_is_an_answer_or_a_clear_refusal(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: tuple[str, str], value: Any
) -> None:
    monkeypatch.chdir(tmp_path)  # what export writes, under a name drawn here, stays in the test's folder
    monkeypatch.setenv("HOME", str(tmp_path))  # and so does ~
    call, name = target
    function, good = CALLS[call]
    (tmp_path / "questions.txt").write_text(": capitals\nking man woman queen\n")  # the evaluations' files
    (tmp_path / "pairs.txt").write_text("cat\tdog\t5.0\nking\tqueen\t8.0\ncat\tking\t1.0\n")
    if name in ("among", "out", "png", "file"):
        value = _confined(value)
    if name == "png" and _drawing(value):
        value = None
    arguments = {**good, name: value}
    try:
        result = (
            function(**arguments) if call in MODULE_LEVEL else _consumed(function(_opened(), **arguments))
        )
    except TypeError as e:
        assert name in str(e), f"{call}({name}={value!r:.80}): {e}"
        return
    except Gpt2embError:
        return
    if hasattr(result, "to_dict"):
        json.dumps(result.to_dict(), allow_nan=False)  # what was given and taken is plain JSON


_HANDLES: dict[str, handle.Embeddings] = {}


def _opened() -> handle.Embeddings:
    """The tiny model, opened once for all the examples of a test (they share its cache folder)."""
    folder = os.environ["GPT2EMB_CACHE_DIR"]
    if folder not in _HANDLES:
        _HANDLES[folder] = gpt2emb.open("gpt2", reporter=QuietReporter())
    return _HANDLES[folder]


# ---------------------------------------------------------------- sentences: the tokenizer's own ids

SENTENCES = [
    " <|endoftext|>",
    "<|endoftext|> ",
    "  <|endoftext|>  ",
    "the cat <|endoftext|> king",
    "the cat<|endoftext|>king",
    "<|endoftext|>the cat",
    "the cat  <|endoftext|>\n<|endoftext|> dog",
]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_a_sentence_is_the_tokenizers_own_ids(m: handle.Embeddings, tiny: Tiny, sentence: str) -> None:
    theirs = tuple(tiny.tokenizer.encode(sentence, add_special_tokens=False).ids)
    assert m.vocab.tokenize(sentence) == theirs
    assert m.vocab.encode(sentence) == theirs  # the word path's too: a special token is refused before it
    assert tuple(t.id for t in encode(m.vocab, sentence, m.model, "the sentence")) == theirs


def test_special_tokens_keep_their_spaces(m: handle.Embeddings, tiny: Tiny) -> None:
    space, end = tiny.vocab["Ġ"], tiny.vocab["<|endoftext|>"]
    vocab: Vocab = m.vocab
    assert vocab.encode(" <|endoftext|>") == (space, end)
    assert vocab.encode("<|endoftext|> ") == (end, space)


@pytest.mark.parametrize("text", [" <|endoftext|>", "<|endoftext|> "])
def test_grad_runs_the_tokenizers_ids(hub: FakeHub, tiny: Tiny, text: str) -> None:
    """`tying --grad` on a text that is a special token and a space: two tokens, as the tokenizer makes it
    (it was one, the special token alone, and refused as too short)."""
    doc = run_json("tying", "--grad", text)
    theirs = tiny.tokenizer.encode(text, add_special_tokens=False).ids
    assert [t["id"] for t in doc["gradient"]["tokens"]] == theirs and len(theirs) == 2


def test_context_runs_the_tokenizers_ids(hub: FakeHub, tiny: Tiny) -> None:
    sentences = ["the cat <|endoftext|> king", "<|endoftext|> the cat  <|endoftext|>"]
    doc = run_json("context", "cat", *sentences)
    for sentence, text in zip(doc["sentences"], sentences, strict=True):
        theirs = tiny.tokenizer.encode(text, add_special_tokens=False).ids
        assert [t["id"] for t in sentence["tokens"]] == theirs
