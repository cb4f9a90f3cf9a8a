"""`input TEXT` (h0 = wte[ids] + wpe[0..n-1], the 1024 wall, words unquoted) and `context` (static against
contextual), on the tiny GPT-2, checked against values computed here: numpy on the fixture's own arrays, and
transformers' own forward pass."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oracles import PAID, RIVER, cos, ids_of, unit

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import N_LAYER, D, Tiny, save_local


def strict_json(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in the JSON")

    return json.loads(text, parse_constant=refuse)


def checkpoint_reads(hub: FakeHub) -> list[str]:
    """The Range of each GET of the checkpoint: none (or bytes=0-) for a whole download."""
    return [r[2] for r in hub.requests if r[0] == "GET" and r[1].split("?")[0].endswith("model.safetensors")]


# ---------------------------------------------------------------- context


def test_context_layer_0_is_the_cosine_of_the_h0_rows(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("context", "king", RIVER, PAID)
    king = tiny.id("king")
    rows = []
    for sentence, text in zip(doc["sentences"], (RIVER, PAID), strict=True):
        ids = ids_of(tiny, text)
        assert [t["id"] for t in sentence["tokens"]] == ids
        assert [t["position"] for t in sentence["tokens"]] == list(range(len(ids)))
        assert sentence["at"] == [ids.index(king)] and sentence["occurrences"] == 1
        rows.append(tiny.wte[king] + tiny.wpe[ids.index(king)])  # h0 = wte[id] + wpe[position], float32
    layer0 = doc["layers"][0]
    assert layer0["layer"] == 0 and layer0["pairs"][0]["a"] == 0 and layer0["pairs"][0]["b"] == 1
    assert layer0["pairs"][0]["cosine"] == pytest.approx(cos(rows[0], rows[1]), abs=1e-6)
    assert layer0["static"] == pytest.approx([cos(r, tiny.wte[king]) for r in rows], abs=1e-6)
    assert (
        doc["model"] == "gpt2"
        and doc["word"] == "king"
        and doc["word_tokens"] == [{"id": king, "token": " king"}]
    )
    assert doc["notes"] == []  # what layer 0 is, the same on every run, is in docs/commands/context.md


def test_context_every_layer_matches_transformers(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    sentences = [RIVER, PAID, "the kingdom and king", "queen and king and king"]
    import torch
    from transformers import GPT2Model

    doc = run_json("context", "king", *sentences)
    model = GPT2Model.from_pretrained(save_local(tiny, tmp_path / "tiny"))
    vectors = []
    with torch.no_grad():
        for text in sentences:
            ids = ids_of(tiny, text)
            out = model(torch.tensor([ids]), output_hidden_states=True)
            states = torch.stack(out.hidden_states)[:, 0].numpy()
            assert np.array_equal(states[-1], out.last_hidden_state[0].numpy())  # the last is after ln_f
            at = (
                len(ids) - 1 if text == sentences[2] else ids.index(tiny.id("king"))
            )  # " king" + "do" + "m" is not it
            vectors.append(states[:, at])
    assert [x["layer"] for x in doc["layers"]] == list(range(N_LAYER + 1))
    for x in doc["layers"]:
        layer = x["layer"]
        expected = [
            cos(vectors[a][layer], vectors[b][layer])
            for a, b in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
        ]
        assert [(p["a"], p["b"]) for p in x["pairs"]] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
        assert [p["cosine"] for p in x["pairs"]] == pytest.approx(expected, abs=1e-6)
        assert x["static"] == pytest.approx(
            [cos(v[layer], tiny.wte[tiny.id("king")]) for v in vectors], abs=1e-6
        )
    # " king" starting " kingdom" is not the word; the first of two occurrences is used, and said
    assert doc["sentences"][2]["at"] == [5] and doc["sentences"][2]["occurrences"] == 1
    assert doc["sentences"][3]["occurrences"] == 2 and doc["sentences"][3]["at"] == [3]
    assert any("occurs 2 times in sentence 4; using the first, at position 3" in n for n in doc["notes"])


@pytest.mark.parametrize("pool", ["mean", "first"])
def test_a_split_word_is_pooled_as_asked(hub: FakeHub, tiny: Tiny, tmp_path: Path, pool: str) -> None:
    sentences = ["the kingdom of man", "hello kingdom"]
    word = ids_of(tiny, " kingdom")
    assert len(word) > 1  # the tiny vocabulary splits it
    import torch
    from transformers import GPT2Model

    doc = run_json("context", "kingdom", *sentences, "--pool", pool)
    model = GPT2Model.from_pretrained(save_local(tiny, tmp_path / "tiny"))
    vectors = []
    with torch.no_grad():
        for text, sentence in zip(sentences, doc["sentences"], strict=True):
            ids = ids_of(tiny, text)
            start = next(p for p in range(len(ids)) if ids[p : p + len(word)] == word)
            assert sentence["at"] == list(range(start, start + len(word)))
            states = torch.stack(model(torch.tensor([ids]), output_hidden_states=True).hidden_states)[:, 0]
            rows = states[:, start : start + len(word)].numpy()
            vectors.append(rows.mean(axis=1) if pool == "mean" else rows[:, 0])
    static = tiny.wte[word].mean(axis=0) if pool == "mean" else tiny.wte[word[0]]
    for x in doc["layers"]:
        assert x["pairs"][0]["cosine"] == pytest.approx(
            cos(vectors[0][x["layer"]], vectors[1][x["layer"]]), abs=1e-6
        )
        assert x["static"] == pytest.approx([cos(v[x["layer"]], static) for v in vectors], abs=1e-6)
    assert doc["pool"] == pool and any("splits into" in n for n in doc["notes"])


def test_a_zero_final_layer_norm_gives_null_not_nan(tiny: Tiny, tmp_path: Path) -> None:
    blocks = {**tiny.blocks, "ln_f.weight": np.zeros(D, dtype=np.float32)}
    folder = save_local(dataclasses.replace(tiny, blocks=blocks), tmp_path / "flat")
    result = run_cli("context", "king", RIVER, PAID, "-m", str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    doc = strict_json(result.stdout)
    last = doc["layers"][-1]
    assert last["layer"] == N_LAYER and last["pairs"][0]["cosine"] is None and last["static"] == [None, None]
    assert all(p["cosine"] is not None for x in doc["layers"][:-1] for p in x["pairs"])
    table = run_cli("context", "king", RIVER, PAID, "-m", str(folder)).stdout
    assert "- is a vector of zeros: it has no direction" in table and "nan" not in table.lower()


def test_context_table(hub: FakeHub) -> None:
    result = run_cli("context", "king", RIVER, PAID)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for shown in ('[" king"]', "0 (h0)", f"{N_LAYER} (last)", "1 vs 2", "1 vs wte", "2 vs wte"):
        assert shown in out
    assert "note:" not in out  # what layer 0 is, the same on every run, is in the docs


def test_context_fetches_the_weights_once_and_says_how_much_first(
    hub: FakeHub, tiny_files: dict[str, bytes]
) -> None:
    first = run_cli("context", "king", RIVER, PAID, "--json")
    assert first.exit_code == 0, first.stderr
    size = len(tiny_files["model.safetensors"])
    assert json.loads(first.stderr.splitlines()[0]) == {
        "note": "this runs the whole of gpt2: fetching all its weights once into the Hugging Face cache, "
        f"{size / 1e6:,.1f} MB (model.safetensors)"
    }
    # the header, read by ranges; then one whole download, from which the embeddings' entry was built (no
    # ranged read fetched wte a second time)
    header = int.from_bytes(tiny_files["model.safetensors"][:8], "little")
    assert checkpoint_reads(hub)[:2] == ["bytes=0-7", f"bytes=8-{8 + header - 1}"]
    assert checkpoint_reads(hub)[2:] in ([""], ["bytes=0-"])
    hub.requests.clear()
    again = run_cli("context", "king", RIVER, PAID, "--json")
    assert again.exit_code == 0 and again.stderr == "" and again.stdout == first.stdout
    assert checkpoint_reads(hub) == []


def test_bad_input_fetches_no_weights_when_the_embeddings_are_cached(hub: FakeHub) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0  # builds the entry by ranged reads
    hub.requests.clear()
    absent = run_cli("context", "king", RIVER, "the kings and queen")
    assert absent.exit_code == 2
    assert absent.stderr.startswith(
        'gpt2emb: " king" is not in sentence 2 ("the kings and queen"), whose tokens'
    )
    assert "not as part of a longer word" in absent.stderr and "note" not in absent.stderr
    assert checkpoint_reads(hub) == []
    one = run_cli("tying", "--grad", "the", "--json")
    assert one.exit_code == 2 and "needs at least two" in json.loads(one.stderr)["error"]["message"]
    assert checkpoint_reads(hub) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["context", "king", RIVER], "at least two sentences"),
        (["context", "king", RIVER, "  "], "sentence 2 is empty"),
        (["context", "king", RIVER, "King and queen"], 'not in sentence 2 ("King and queen")'),  # case counts
        (["context", "cat", "the cat", "x" * 3000], "sentence 2 has"),
        (["context", "kingdom", "the kingdom", "hello kingdom", "--pool", "strict"], "is not one token"),
        (["tying", "--grad", ""], "at least two tokens"),
        (["tying", "--grad", "the"], '--grad "the" is 1 token'),
        (["tying", "--grad", " king" * 1100], f'--grad "{" king" * 8}"... has 1,100 tokens, but position'),
    ],
)
def test_usage_errors(hub: FakeHub, args: list[str], message: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_refused_offline_when_the_weights_are_not_cached(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    assert run_cli("neighbors", "cat").exit_code == 0  # the embeddings are cached, the weights are not
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub.requests.clear()
    for args in (["context", "king", RIVER, PAID], ["tying", "--grad", RIVER], ["tying", "--load"]):
        result = run_cli(*args, "--json")
        assert result.exit_code == 4, (args, result.stderr)
        assert json.loads(result.stderr)["error"]["message"] == (
            "this runs the whole of gpt2, and its weights (model.safetensors) are not in the Hugging Face "
            "cache while HF_HUB_OFFLINE is set: run once with the network to fetch them"
        )
    assert hub.requests == []
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    assert run_cli("context", "king", RIVER, PAID).exit_code == 0
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert run_cli("context", "king", RIVER, PAID).exit_code == 0  # cached now: offline is fine
    assert run_cli("tying", "--grad", RIVER).exit_code == 0


# ---------------------------------------------------------------- help


def test_help_shows_the_chapters_examples() -> None:
    context = run_cli("context", "--help").stdout
    assert 'gpt2emb context bank "I sat on the river bank" "I paid at the bank"' in context
    assert "banco" in context
    assert "gpt2emb tying --grad" in run_cli("tying", "--help").stdout


# ---------------------------------------------------------------- input

TEXT = "O Brasil é gigante"


def test_input_norms_and_cosines_are_numpys(hub: FakeHub, tiny: Tiny) -> None:
    doc = strict_json(run_cli("input", TEXT, "--json").stdout)
    ids = ids_of(tiny, TEXT)
    n = len(ids)
    assert doc["model"] == "gpt2" and doc["text"] == TEXT and doc["d_model"] == 32
    assert doc["n_tokens"] == doc["text_tokens"] == n > 4  # the tiny BPE splits it finely
    assert [t["id"] for t in doc["tokens"]] == ids and [t["position"] for t in doc["tokens"]] == list(
        range(n)
    )
    assert doc["tokens"][0]["token"] == "O"  # as typed: no space added in front
    assert doc["h0"] is None  # only with --full
    wte, wpe = tiny.wte[ids].astype(np.float64), tiny.wpe[:n].astype(np.float64)
    got = {k: np.array([t[k] for t in doc["tokens"]]) for k in doc["tokens"][0] if k not in ("id", "token")}
    # norms and cosines of the stored float32 rows, in float64 both here and there: to 1e-12
    np.testing.assert_allclose(got["wte_norm"], np.linalg.norm(wte, axis=1), rtol=1e-12)
    np.testing.assert_allclose(got["wpe_norm"], np.linalg.norm(wpe, axis=1), rtol=1e-12)
    np.testing.assert_allclose(got["cos_wte_wpe"], (unit(wte) * unit(wpe)).sum(axis=1), atol=1e-12)
    # h0 is added in float32, as the model adds it; here in float64: to float32's rounding, 1e-6
    np.testing.assert_allclose(got["h0_norm"], np.linalg.norm(wte + wpe, axis=1), rtol=1e-6)
    table = run_cli("input", TEXT)
    assert table.exit_code == 0, table.output
    assert f"wte[ids] ({n}, 32) + wpe[0..{n - 1}] ({n}, 32) = h0 ({n}, 32)" in table.stdout
    assert '"O"' in table.stdout and "cos(wte, wpe)" in table.stdout


def test_input_full_gives_h0_as_the_model_adds_it(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("input", "the cat", "--full")
    ids = ids_of(tiny, "the cat")
    h0 = np.array(doc["h0"])
    assert h0.shape == (len(ids), 32)
    # both sides add the same float32 numbers; JSON carries each float32 exactly (atol 0 would pass too)
    np.testing.assert_allclose(h0, tiny.wte[ids] + tiny.wpe[: len(ids)], rtol=0, atol=1e-7)
    table = run_cli("input", "the cat", "--full")
    assert table.exit_code == 0 and "h0, every number:" in table.stdout


def long_text(tiny: Tiny, n: int) -> str:
    text = " king" * n
    assert len(ids_of(tiny, text)) == n  # one token per word
    return text


def test_the_1024_wall(hub: FakeHub, tiny: Tiny) -> None:
    at_the_wall = run_json("input", long_text(tiny, 1024))
    assert at_the_wall["n_tokens"] == 1024 and at_the_wall["tokens"][-1]["position"] == 1023
    assert at_the_wall["notes"] == []
    over = run_cli("input", long_text(tiny, 1025))
    assert over.exit_code == 2 and over.stdout == ""
    assert over.stderr.strip() == (
        "gpt2emb: the text is 1,025 tokens, but position 1024 does not exist: gpt2 learned 1,024 positions, "
        "0 to 1023; shorten the text, or use --truncate to keep the first 1,024"
    )
    as_json = run_cli("input", long_text(tiny, 1025), "--json")
    assert as_json.exit_code == 2 and json.loads(as_json.stderr)["error"]["code"] == 2
    cut = run_json("input", long_text(tiny, 1100), "--truncate")
    assert cut["n_tokens"] == 1024 and cut["text_tokens"] == 1100 and len(cut["tokens"]) == 1024
    assert cut["tokens"][-1]["position"] == 1023
    assert cut["notes"] == [
        "the text is 1,100 tokens: only the first 1,024 go in (position 1024 does not exist: gpt2 learned "
        "1,024 positions, 0 to 1023)"
    ]
    table = run_cli("input", long_text(tiny, 1100), "--truncate")
    assert table.exit_code == 0 and "only the first 1,024 go in" in table.stdout
    assert "wte[ids] (1024, 32) + wpe[0..1023] (1024, 32) = h0 (1024, 32)" in table.stdout


def test_empty_text_is_refused(hub: FakeHub) -> None:
    result = run_cli("input", "")
    assert result.exit_code == 2 and "the text is empty" in result.stderr


def test_input_reads_its_text_from_stdin(hub: FakeHub, stdin: Callable[[bytes], None]) -> None:
    def fed(data: bytes) -> Any:
        stdin(data)
        return run_cli("input", "-", "--json")

    typed = run_json("input", "hello king\nthe cat")
    # a file's text: its line ends inside kept, those at its end dropped (as "$(cat file)"), a BOM dropped
    for data in (b"hello king\nthe cat\n", b"\xef\xbb\xbfhello king\nthe cat\r\n\n"):
        proc = fed(data)
        assert proc.exit_code == 0, proc.stderr
        assert json.loads(proc.stdout) == typed
    for data, said in (
        (b"\xff\xfeh\x00i\x00", "stdin is UTF-16 text"),
        (b"hello \xff", "stdin is not UTF-8 text (byte 7)"),
        (b"\xef\xbb\xbfhello \xff", "stdin is not UTF-8 text (byte 10)"),  # counted in the file, BOM and all
        (b"\n\n", "the text is empty"),
    ):
        proc = fed(data)
        assert proc.exit_code == 2 and said in proc.stderr, proc.stderr


# ---------------------------------------------------------------- sentences without quotes


def test_input_takes_its_words_unquoted(hub: FakeHub) -> None:
    """Was: Got unexpected extra argument(s) (Brasil é gigante)."""
    unquoted = run_json("input", "O", "Brasil", "é", "gigante")
    assert unquoted == run_json("input", "O Brasil é gigante")
    assert unquoted["text"] == "O Brasil é gigante"
    assert run_json("input", "two  spaces", "kept")["text"] == "two  spaces kept"  # joined as echo joins


def test_context_with_sentences_unquoted_says_to_quote_them(hub: FakeHub) -> None:
    """Was: " " + "b" + "an" + "k" is not in sentence 1 ("by"), with no word of quotes."""
    result = run_cli("context", "bank", "by", "the", "river", "bank", "at", "the", "bank")
    assert result.exit_code == 2
    assert "sentence 1 is the one word \"by\", without 'bank'" in result.stderr
    assert 'quote each, as in: context bank "by the river bank" "at the bank"' in result.stderr
    assert hub.requests == []  # refused before anything is fetched
