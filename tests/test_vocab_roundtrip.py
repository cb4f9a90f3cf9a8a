"""Vocabularies through the cache (issue 37, items 1-3 and 10a): every entry comes back from pieces.txt byte
for byte, whatever it holds; words that hold an added token's text go the tokenizer's way; a tokenizer with
BPE dropout gives one answer; a UTF-8 word under the C locale is read as UTF-8. The `tokenizers` library
is the oracle throughout, on the tiny models' tokenizers changed as the issue's reproducers change them,
and on random vocabularies (a property, under conftest's FUZZ profiles)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from gpt2emb import piece_lines
from gpt2emb.choices import Pool
from gpt2emb.core.open import open_ref
from gpt2emb.errors import BadModel, UsageError
from gpt2emb.registry import resolve
from gpt2emb.store import entries
from gpt2emb.tokenizer_library import LibraryFault, library_faults
from gpt2emb.tokens import Vocab, display

from conftest import FUZZ, run_cli, run_json, run_process
from tinymodel import Tiny, safetensors_bytes, save_local

ODD = ["q\rz", "a\nb", "\r", "\n", "\r\n", "x\x85y", "\u2028", "\x00", "nul\x00", "é\r", "\\n", "\udcff"]


def odd_folder(tiny: Tiny, folder: Path, edit: Callable[[dict[str, Any]], None], grow: int = 0) -> Path:
    """The tiny GPT-2 saved in folder, its tokenizer.json (parsed) changed by edit, and wte grown by `grow`
    rows (config vocab_size with it): the issue's "F (grown)"."""
    save_local(tiny, folder)
    doc = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    edit(doc)
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    if grow:
        state = tiny.state(prefix="transformer.")
        extra = np.random.default_rng(7).normal(0.0, 0.1, (grow, tiny.wte.shape[1])).astype(np.float32)
        state["transformer.wte.weight"] = np.concatenate([state["transformer.wte.weight"], extra])
        (folder / "model.safetensors").write_bytes(safetensors_bytes(state))
        config = {**tiny.config, "vocab_size": tiny.wte.shape[0] + grow}
        (folder / "config.json").write_text(json.dumps(config))
    return folder


def grow_bert(folder: Path) -> None:
    """One row more in a tiny BERT's token table (and its config's vocab_size), for an added token."""
    from safetensors.numpy import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    key = next(k for k in tensors if k.endswith("word_embeddings.weight"))
    tensors[key] = np.concatenate([tensors[key], np.full((1, tensors[key].shape[1]), 0.5, np.float32)])
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "vocab_size": len(tensors[key])}))


def library(folder: Path) -> Tokenizer:
    return Tokenizer.from_file(str(folder / "tokenizer.json"))


def ids_of(result: dict[str, Any]) -> list[int]:
    return [t["id"] for t in result["items"][0]["tokens"]]


# ---------------------------------------------------------------- 1. entries that hold line ends


@pytest.mark.parametrize("odd", ODD)
def test_every_entry_comes_back_from_the_pieces_file(tmp_path: Path, odd: str) -> None:
    vocab = {"a": 0, odd: 1, "Ġcat": 2, "\\": 4, "b" + odd: 5, "Ġdog": 6}
    (tmp_path / piece_lines.FILE).write_bytes(piece_lines.written(vocab))
    lazy = Vocab(tmp_path, 7)
    expected = {i: p for p, i in vocab.items()}
    assert [lazy._piece(i) for i in range(8)] == [expected.get(i, "") for i in range(8)]
    assert "_pieces" not in lazy.__dict__  # answered from the bytes alone
    assert all(Vocab(tmp_path, 7).id_of(p) == i for p, i in vocab.items())
    assert Vocab(tmp_path, 7).id_of(odd[:-1] + "#") is None
    split = Vocab(tmp_path, 7)
    assert split._pieces[:7] == [expected.get(i, "") for i in range(7)]
    assert all(split._ids[p] == i for p, i in vocab.items())


def test_no_entry_is_looked_up_as_an_empty_line(tmp_path: Path) -> None:
    """An empty line is no entry (an added token's id, or a gap): the bytes' search says so, as the dict
    of entries does."""
    (tmp_path / piece_lines.FILE).write_bytes(piece_lines.written({"a": 0, "b": 2}))
    assert Vocab(tmp_path, 3).id_of("") is None
    split = Vocab(tmp_path, 3)
    assert "" not in split._ids and split._pieces == ["a", "", "b"]


def test_a_format_4_pieces_file_is_read_as_it_was_written(tmp_path: Path) -> None:
    """Format 4 wrote each entry's UTF-8 as it is and left out an entry holding \\n: a \\r in an entry is
    no line end (reading it as one moved every later id)."""
    (tmp_path / piece_lines.FILE).write_bytes("a\nq\rz\n\nĠcat".encode())
    old = Vocab(tmp_path, 4)
    assert [old._piece(i) for i in range(4)] == ["a", "q\rz", "", "Ġcat"]
    assert old.id_of("Ġcat") == 3 and old._pieces == ["a", "q\rz", "", "Ġcat"]


def test_a_carriage_return_in_an_entry_moves_no_id(tiny: Tiny, tmp_path: Path) -> None:
    """The issue's reproducer: id 100's entry moved to id 343, "q\\rz" put at id 100."""

    def edit(doc: dict[str, Any]) -> None:
        vocab = doc["model"]["vocab"]
        moved = next(p for p, i in vocab.items() if i == 100)
        vocab[moved], vocab["q\rz"] = 343, 100

    folder = odd_folder(tiny, tmp_path / "F", edit, grow=1)
    want = library(folder).encode(" cat").ids
    assert ids_of(run_json("vector", "cat", "-m", str(folder))) == want == [tiny.id("cat")]
    shown = run_json("neighbors", "cat", "-m", str(folder), "-k", "3")
    assert [n["token"] for n in shown["items"][0]["neighbors"]][:2] == [" cats", " kitten"]
    same = run_json("similarity", "cat", "kitten", "-m", str(folder))
    plain = run_json("similarity", "cat", "kitten", "-m", str(save_local(tiny, tmp_path / "plain")))
    assert same["matrix"][0][1] == pytest.approx(plain["matrix"][0][1], abs=1e-6)
    assert plain["matrix"][0][1] > 0.9
    moved = run_json("vector", "id:343", "-m", str(folder))["items"][0]["tokens"][0]["token"]
    piece = library(folder).id_to_token(343)
    assert piece is not None and moved == display(piece)  # the entry moved there, as tables show it


def test_a_wordpiece_entry_with_a_carriage_return(tmp_path: Path) -> None:
    """BERT's: an [unusedN] row renamed to hold \\r; "cat" keeps the library's id."""
    from tiny_bert import build as build_bert

    bert = build_bert(tmp_path / "bert")
    doc = json.loads((bert.folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = doc["model"]["vocab"]
    vocab["line\rend"] = vocab.pop("[unused0]")
    (bert.folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    want = library(bert.folder).encode("cat", add_special_tokens=False).ids
    assert ids_of(run_json("vector", "cat", "-m", str(bert.folder))) == want


def test_a_lone_surrogate_in_a_vocabulary_is_refused_as_the_library_refuses_it(
    tiny: Tiny, tmp_path: Path
) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["model"]["vocab"]["\ud800x"] = 343  # written as the escape \ud800

    folder = odd_folder(tiny, tmp_path / "F", edit, grow=1)
    assert "\\ud800x" in (folder / "tokenizer.json").read_text(encoding="utf-8")
    with pytest.raises(Exception, match="hex escape"):
        library(folder)
    result = run_cli("vector", "cat", "-m", str(folder))
    assert result.exit_code == 6 and "the tokenizers library cannot read it" in result.stderr


def test_an_entry_of_format_4_is_read_without_a_rebuild(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "model")
    m = open_ref(resolve(str(folder))).model
    manifest = json.loads((m.path / "manifest.json").read_text())
    manifest["format"] = 4  # as format 4 wrote it: a sampled checksum of every file
    manifest["files"] = {f: entries.file_fingerprint(m.path / f) for f in manifest["files"]}
    manifest[entries.SELF_CHECK] = entries.manifest_digest(manifest)
    (m.path / "manifest.json").write_text(json.dumps(manifest))
    result = run_cli("vector", "cat", "-m", str(folder), "--json")
    assert result.exit_code == 0 and "rebuilding" not in result.stderr
    assert json.loads((m.path / "manifest.json").read_text())["format"] == 4


# ---------------------------------------------------------------- 2. added tokens


def _added(content: str, special: bool = False, normalized: bool = False) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        doc["added_tokens"].append(
            {
                "id": 343,
                "content": content,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": normalized,
                "special": special,
            }
        )

    return edit


def test_an_added_token_that_is_a_whole_word(tiny: Tiny, tmp_path: Path) -> None:
    folder = odd_folder(tiny, tmp_path / "F", _added(" cat"), grow=1)
    assert library(folder).encode(" cat").ids == [343]
    shown = run_json("input", " cat", "-m", str(folder))
    assert [t["id"] for t in shown["tokens"]] == [343]
    assert ids_of(run_json("vector", "cat", "-m", str(folder))) == [343]


def test_a_word_that_holds_an_added_token(tiny: Tiny, tmp_path: Path) -> None:
    folder = odd_folder(tiny, tmp_path / "F", _added("kitten"), grow=1)
    want = library(folder).encode(" kitten").ids
    assert want == [library(folder).token_to_id("Ġ"), 343]
    result = run_json("vector", "kitten", "-m", str(folder))
    assert ids_of(result) == want and "splits into 2 tokens" in result["items"][0]["note"]
    assert [t["token"] for t in result["items"][0]["tokens"]] == [" ", "kitten"]


def test_an_added_token_found_in_the_normalized_text(tmp_path: Path) -> None:
    """BERT lowercases a text before it looks for a normalized added token: "Cat" is found in "cat", a word
    the vocabulary holds too."""
    from tiny_bert import build as build_bert

    bert = build_bert(tmp_path / "bert")
    doc = json.loads((bert.folder / "tokenizer.json").read_text(encoding="utf-8"))
    added = len(doc["model"]["vocab"])
    assert "cat" in doc["model"]["vocab"] and "Cat" not in doc["model"]["vocab"]
    doc["added_tokens"].append(
        {
            "id": added,
            "content": "Cat",
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": True,
            "special": False,
        }
    )
    (bert.folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    grow_bert(bert.folder)
    assert library(bert.folder).encode("cat", add_special_tokens=False).ids == [added]
    for word in ("cat", "cats", "kitten"):
        want = library(bert.folder).encode(word, add_special_tokens=False).ids
        assert ids_of(run_json("vector", word, "-m", str(bert.folder))) == want, word


def test_a_one_word_entry_that_no_merge_makes(tiny: Tiny, tmp_path: Path) -> None:
    """An entry added by hand that no merge makes ("Ġzzqq") is not what the tokenizer makes of " zzqq": the
    shortcut that answers a word with the entry spelling it holds for a trained vocabulary only."""

    def edit(doc: dict[str, Any]) -> None:
        doc["model"]["vocab"]["Ġzzqq"] = 343

    folder = odd_folder(tiny, tmp_path / "F", edit, grow=1)
    want = library(folder).encode(" zzqq").ids
    assert 343 not in want and len(want) > 1
    result = run_json("vector", "zzqq", "-m", str(folder))
    assert ids_of(result) == want
    assert ids_of(run_json("vector", "king", "-m", str(folder))) == [tiny.id("king")]


# ---------------------------------------------------------------- 3. BPE dropout


def test_bpe_dropout_is_turned_off(tiny: Tiny, tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["model"]["dropout"] = 0.5

    folder = odd_folder(tiny, tmp_path / "F", edit)
    plain = Tokenizer.from_str(tiny.tokenizer.to_str())
    for word in ("king", "kingdom", "gato", "cats"):
        want = plain.encode(" " + word).ids
        answers = {tuple(ids_of(run_json("vector", word, "-m", str(folder)))) for _ in range(6)}
        assert answers == {tuple(want)}, word
        texts = {
            tuple(t["id"] for t in run_json("input", word * 3, "-m", str(folder))["tokens"]) for _ in range(6)
        }
        assert texts == {tuple(plain.encode(word * 3).ids)}, word


# ---------------------------------------------------------------- 10a. the C locale


def test_a_utf8_word_under_the_c_locale(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "model")
    env = {"LC_ALL": "C", "PYTHONUTF8": "0", "LANG": "C"}
    done = run_process("vector", "café", "-m", str(folder), "--json", env=env, encoding="ascii")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["items"][0]["word"] == "café"
    assert ids_of(result) == tiny.tokenizer.encode(" café").ids
    bad = run_process("vector", "caf\udcff", "-m", str(folder), env=env, encoding="ascii")
    assert bad.returncode == 2 and "is not UTF-8 text (byte 4)" in bad.stderr
    named = shutil.copytree(folder, tmp_path / "modèle")
    there = run_process("vector", "cat", "-m", str(named), env=env, encoding="ascii")
    assert there.returncode == 2 and "this locale's encoding (ascii) lacks" in there.stderr
    assert "LC_ALL=C.UTF-8" in there.stderr


# ---------------------------------------------------------------- the property


_WORD_CHARS = "abcdefgiklmnorstzKÉ \u00e9\u00f1\u0436\u4e2d\U0001f642'.,1\r\n\t\x85\u2028"
_WORDS = ["cat", "cats", "kitten", "king", "queen", "dog", "man", "woman"]


@st.composite
def vocabularies(draw: st.DrawFn, base: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The tiny tokenizer with random entries put at random ids (each displaced entry moved past the end),
    random added tokens after them, and random words and texts to tokenize."""
    doc = json.loads(json.dumps(base))
    vocab: dict[str, int] = doc["model"]["vocab"]
    by_id = {i: p for p, i in vocab.items()}
    end = len(vocab)
    movable = sorted(set(range(end)) - {t["id"] for t in doc["added_tokens"]})  # an added token keeps its id
    odd = st.text(
        st.characters(exclude_categories=["Cs"]) | st.sampled_from(["\r", "\n", "\x85", "\u2028", "\x00"]),
        min_size=1,
        max_size=6,
    )
    # an entry spelling a whole word that no merge makes: the tokenizer splits the word
    one_word = st.tuples(st.sampled_from(["", "Ġ"]), st.text("acgiknot", min_size=2, max_size=5)).map("".join)
    # an entry holding a line end or a NUL somewhere in it: what shifted every later id
    line_end = st.sampled_from(["\r", "\n", "\r\n", "\x85", "\u2028", "\x00"])
    broken = st.tuples(st.text(max_size=2), line_end, st.text(max_size=2)).map("".join)
    odd = odd | one_word | broken
    for text in draw(st.lists(odd, max_size=6, unique=True)):
        if text in vocab:
            continue
        at = draw(st.sampled_from(movable))
        moved = by_id[at]
        vocab[moved], vocab[text] = end, at
        by_id[end], by_id[at] = moved, text
        end += 1
    # texts the words hold, as they are or before a normalizer lowercases them ("Cat", "KI")
    known = [v for w in _WORDS for v in (w, " " + w, w.title(), w[:2].upper(), w[1:3])]
    piece = st.text(_WORD_CHARS, min_size=1, max_size=4) | st.sampled_from(known)
    for content in draw(st.lists(piece, max_size=3, unique=True)):
        if content in vocab:
            continue
        doc["added_tokens"].append(
            {
                "id": end,
                "content": content,
                "single_word": draw(st.booleans()),
                "lstrip": draw(st.booleans()),
                "rstrip": draw(st.booleans()),
                "normalized": draw(st.booleans()),
                "special": draw(st.booleans()),
            }
        )
        end += 1
    word = st.sampled_from(_WORDS) | st.text(_WORD_CHARS, min_size=1, max_size=10)
    words = draw(st.lists(word | st.tuples(word, word).map("".join), min_size=1, max_size=8))
    return doc, words


def _with_added(base: dict[str, Any], content: str, words: list[str]) -> tuple[dict[str, Any], list[str]]:
    """base with one added token after its entries, and words that hold it: the drawn examples may hold no
    such word (how many do varies from one run to another, though they are derandomized), this one does."""
    doc = json.loads(json.dumps(base))
    end = max([*doc["model"]["vocab"].values(), *(t["id"] for t in doc["added_tokens"])]) + 1
    flags = dict.fromkeys(("single_word", "lstrip", "rstrip", "special"), False)
    doc["added_tokens"].append({"id": end, "content": content, **flags, "normalized": True})
    return doc, words


def _variant(source: Path, folder: Path, doc: dict[str, Any], ids: int) -> None:
    """source's model copied into folder with the tokenizer.json doc, its token table grown to hold ids."""
    from safetensors.numpy import load_file, save_file

    shutil.copytree(source, folder, dirs_exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    tensors = load_file(folder / "model.safetensors")
    key = next(k for k in tensors if k.endswith(("wte.weight", "word_embeddings.weight")))
    n, d = tensors[key].shape
    more = np.random.default_rng(ids).normal(0.0, 0.1, (max(0, ids - n), d)).astype(np.float32)
    tensors[key] = np.concatenate([tensors[key], more])
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "vocab_size": len(tensors[key])}))


def _wordpiece() -> str:
    """A WordPiece tokenizer as the tiny BERT's (uncased, "##" continuations) over a fixed vocabulary: the
    tiny BERT's own is trained anew in each process, and its ties fall differently, so its examples would."""
    from tiny_bert import LAYOUT, _tokenizer

    chars = [*"abcdefghijklmnopqrstuvwxyz0123456789", "\u00e9", "\u0436"]
    pieces = [*LAYOUT, *chars, *("##" + c for c in chars), *_WORDS, "##s", "##ing", "'", ".", ","]
    return str(_tokenizer({p: i for i, p in enumerate(dict.fromkeys(pieces))}).to_str())


@pytest.fixture(scope="module")
def bases(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any]]]:
    """The tiny GPT-2 (byte-level BPE) and the tiny BERT (WordPiece under a lowercasing normalizer) as
    folders, each with the tokenizer the property changes."""
    from tiny_bert import build as build_bert

    bert = build_bert(tmp_path_factory.mktemp("bert") / "model").folder
    gpt2 = save_local(tiny, tmp_path_factory.mktemp("gpt2") / "model")
    return {"gpt2": (gpt2, json.loads(tiny.tokenizer.to_str())), "bert": (bert, json.loads(_wordpiece()))}


def _library_ids(oracle: Tokenizer, text: str) -> tuple[int, ...] | None:
    """The library's ids for text, or None where it fails (a random tokenizer can make it fail: an added
    token that its normalizer empties ends in "AddedVocabulary bad split")."""
    try:
        with library_faults():
            return tuple(oracle.encode(text, add_special_tokens=False).ids)
    except LibraryFault:
        return None


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_fuzz_random_vocabularies_give_the_library_s_ids(
    bases: dict[str, tuple[Path, dict[str, Any]]], family: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Any vocabulary of random Unicode entries, added tokens among them, gives the tokenizers library's
    ids for random words and texts (or, where the library fails, is refused as damaged, exit 6), and each
    entry back as the library has it, through a cache entry built from a folder and opened again."""
    source, base = bases[family]
    seen: Counter[str] = Counter()

    @FUZZ
    @given(vocabularies(base))
    @example(_with_added(base, "kitz", ["kitz", "a kitz"]))  # the words holding an added token, always
    def check(case: tuple[dict[str, Any], list[str]]) -> None:
        doc, words = case
        folder = tmp_path_factory.mktemp("vocab")
        _variant(source, folder, doc, len(base["model"]["vocab"]) + 10)
        oracle = library(folder)
        vocab = open_ref(resolve(str(folder))).vocab
        seen["vocabularies"] += 1
        seen["odd entries"] += sum(any(c in p for c in "\r\n\x85\u2028\x00") for p in doc["model"]["vocab"])
        seen["added tokens"] += len(doc["added_tokens"]) - len(base["added_tokens"])
        for word in words:
            want = _library_ids(oracle, word)
            if want is None:
                with pytest.raises(BadModel, match="the tokenizer is damaged"):
                    vocab.tokenize(word)
                seen["texts the library fails on"] += 1
            else:
                assert vocab.tokenize(word) == want, word
                seen["texts"] += 1
            try:
                q = vocab.query(word, exact=False, pool=Pool.mean)
            except UsageError:  # a refusal: a word gpt2emb does not take (control characters, ...)
                seen["words refused"] += 1
                continue
            except BadModel:
                assert _library_ids(oracle, vocab.words.running(word.strip())) is None, word
                seen["words the library fails on"] += 1
                continue
            assert q.ids == _library_ids(oracle, vocab.words.running(q.word)), word
            seen["words holding an added token" if set(q.ids) & added_ids(doc) else "words"] += 1
        again = open_ref(resolve(str(folder))).vocab
        for piece, i in doc["model"]["vocab"].items():
            assert again._piece(i) == piece and oracle.id_to_token(i) == piece
        assert all(again.id_of(p) == i for p, i in doc["model"]["vocab"].items())  # past 16: the dict's

    check()
    # pytest -s shows the counts of a deep run
    print(f"random vocabularies ({family}): {dict(sorted(seen.items()))}")
    assert min(seen[k] for k in ("odd entries", "texts", "words", "words holding an added token")) > 0, seen


def added_ids(doc: dict[str, Any]) -> set[int]:
    return {t["id"] for t in doc["added_tokens"]}
