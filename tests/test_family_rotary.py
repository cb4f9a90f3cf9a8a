"""Rotary models (families/llama.py, qwen2.py, neox.py) on tiny models made by transformers: served by the
fake Hub and read as local folders. They have no position table: `positions` refuses, `input` is
h0 = wte[ids], `geometry` measures wte alone. Their output layer is their own: `tying` says so, and
`tying --compare` fetches its rows by byte ranges and measures them against wte.

Oracles: the fixtures' own arrays (a Llama's output rows meet their wte rows at exactly 1/sqrt(2); a NeoX's
equal theirs but on every fourth row, negated), transformers' own embedding lookup and hidden states.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tiny_llama import N_LAYER, TinyLlama
from tiny_llama import build as build_llama
from tiny_llama import model as llama_model
from tiny_neox import TinyNeox
from tiny_neox import build as build_neox

from conftest import copy_model, hub_or_folder, run_cli, run_json, serve
from fakehub import FakeHub

LLAMA, NEOX = "test-org/tiny-llama", "EleutherAI/tiny-pythia"
SMOL, MISTRAL, QWEN = "HuggingFaceTB/tiny-smollm", "test-org/tiny-mistral", "Qwen/tiny-qwen2"
ROTARY = "rotary position embeddings rotate the queries and keys inside attention"


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> TinyLlama:
    return build_llama(tmp_path_factory.mktemp("llama"))


@pytest.fixture(scope="module")
def neox(tmp_path_factory: pytest.TempPathFactory) -> TinyNeox:
    return build_neox(tmp_path_factory.mktemp("neox"))


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory) -> TinyLlama:
    """A Llama with a byte-level tokenizer and its output layer tied, as SmolLM."""
    return build_llama(tmp_path_factory.mktemp("smol"), tied=True, byte_level=True)


@pytest.fixture(scope="module")
def mistral(tmp_path_factory: pytest.TempPathFactory) -> TinyLlama:
    return build_llama(tmp_path_factory.mktemp("mistral"), kind="mistral")


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> TinyLlama:
    return build_llama(tmp_path_factory.mktemp("qwen2"), kind="qwen2")


@pytest.fixture
def served(hub: FakeHub, llama: TinyLlama, neox: TinyNeox) -> FakeHub:
    return serve(hub, {LLAMA: llama.files(), NEOX: neox.files()})


def _silent_on_tying(llama: TinyLlama, folder: Path) -> Path:
    """The tiny Llama copied into folder, its config.json without tie_word_embeddings."""
    config = json.loads(llama.files()["config.json"])
    del config["tie_word_embeddings"]
    return copy_model(llama.files(), folder, config)


# ---------------------------------------------------------------- words


@pytest.mark.parametrize("place", ["hub", "folder"])
@pytest.mark.parametrize("kind", ["llama", "neox"])
def test_word_commands(served: FakeHub, llama: TinyLlama, neox: TinyNeox, kind: str, place: str) -> None:
    tiny = llama if kind == "llama" else neox
    model = hub_or_folder(LLAMA if kind == "llama" else NEOX, tiny.folder, place)
    doc = run_json("neighbors", "cat", "-k", "2", "-m", model)
    item = doc["items"][0]
    assert item["tokens"] == [{"id": tiny.id("cat"), "token": " cat"}]
    assert [(n["id"], n["token"]) for n in item["neighbors"]] == [
        (tiny.id("cats"), " cats"),
        (tiny.id("kitten"), " kitten"),
    ]
    vec = run_json("vector", "cat", "--full", "-m", model)
    np.testing.assert_array_equal(vec["items"][0]["vector"], tiny.wte[tiny.id("cat")])
    sim = run_json("similarity", "cat", "cats", "-m", model)
    a, b = (tiny.wte[tiny.id(w)].astype(np.float64) for w in ("cat", "cats"))
    assert sim["matrix"][0][1] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-12)
    ana = run_json("analogy", "cats", "cat", "kitten", "-k", "3", "-m", model)
    assert len(ana["results"]) == 3
    for args in (
        ["neighbors", "cat"],
        ["vector", "cat"],
        ["similarity", "cat", "cats"],
        ["analogy", "cats", "cat", "kitten"],
    ):
        result = run_cli(*args, "-m", model)
        assert result.exit_code == 0, result.stderr
        assert '" cat' in result.stdout


def test_sentencepiece_pieces_read_as_text(served: FakeHub, llama: TinyLlama) -> None:
    """'▁' is a space; a byte fallback piece is its byte: \\xNN where it is no whole character."""
    doc = run_json("vector", "café", "-m", LLAMA)
    ids = llama.tokenizer.encode("café", add_special_tokens=False).ids
    pieces = [llama.tokenizer.id_to_token(i) for i in ids]
    assert pieces[-2:] == ["<0xC3>", "<0xA9>"]  # é is not in the tiny vocabulary: two byte pieces
    assert [t["id"] for t in doc["items"][0]["tokens"]] == ids
    assert [t["token"] for t in doc["items"][0]["tokens"]][-2:] == ["\\xc3", "\\xa9"]
    text = run_json("input", "a\nb", "-m", LLAMA)
    newline = llama.tokenizer.token_to_id("<0x0A>")
    assert {"id": newline, "token": "\n"} in [{"id": t["id"], "token": t["token"]} for t in text["tokens"]]
    emoji = run_cli("neighbors", "😀", "-m", LLAMA)
    assert emoji.exit_code == 2 and "raw bytes" in emoji.stderr


# ---------------------------------------------------------------- no position table


@pytest.mark.parametrize("args", [["positions", "0", "1"], ["positions", "--heatmap"]])
@pytest.mark.parametrize("place", ["hub", "folder"])
def test_positions_says_there_is_no_position_table(
    served: FakeHub, llama: TinyLlama, args: list[str], place: str
) -> None:
    model = hub_or_folder(LLAMA, llama.folder, place)
    result = run_cli(*args, "-m", model)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"gpt2emb: {model} has no position table: in a Llama model, {ROTARY}, so there are no position rows "
        "to compare; use a model with learned positions, such as gpt2 or roberta-base"
    )
    error = json.loads(run_cli(*args, "-m", model, "--json").stderr)["error"]
    assert error["code"] == 2 and "no position table" in error["message"]


@pytest.mark.parametrize("kind", ["llama", "neox"])
def test_input_is_the_token_rows_alone(served: FakeHub, llama: TinyLlama, neox: TinyNeox, kind: str) -> None:
    import torch

    tiny = llama if kind == "llama" else neox
    model = LLAMA if kind == "llama" else NEOX
    text = "the cat and the dog"
    doc = run_json("input", text, "--full", "-m", model)
    ids = tiny.tokenizer.encode(text, add_special_tokens=False).ids
    assert [t["id"] for t in doc["tokens"]] == ids
    from transformers import AutoModelForCausalLM

    lookup = AutoModelForCausalLM.from_pretrained(tiny.folder).get_input_embeddings()
    with torch.no_grad():
        h0 = lookup(torch.tensor(ids)).numpy()
    np.testing.assert_array_equal(np.array(doc["h0"], dtype=np.float32), h0)
    assert doc["n_positions"] == 0
    for t in doc["tokens"]:
        assert t["wpe_norm"] is None and t["cos_wte_wpe"] is None and t["row"] is None
        assert t["h0_norm"] == t["wte_norm"] == pytest.approx(np.linalg.norm(tiny.wte[t["id"]]), rel=1e-6)
    assert any("has no position table: in a" in n and ROTARY in n for n in doc["notes"])
    table = run_cli("input", "the cat", "-m", model)
    assert table.exit_code == 0
    assert "wte[ids] (2, 32) = h0 (2, 32)" in table.stdout
    assert "|wpe|" not in table.stdout and "cos(wte, wpe)" not in table.stdout
    cat = next(line.split() for line in table.stdout.splitlines() if '" cat"' in line)
    assert cat == ["1", str(tiny.id("cat")), '"', 'cat"', "2.0000", "2.0000"]  # pos id token |wte| |h0|
    assert "no position table" in table.stdout


def test_a_long_text_has_no_position_wall(served: FakeHub) -> None:
    doc = run_json("input", " the" * 300, "-m", LLAMA)  # more tokens than max_position_embeddings (128)
    assert doc["n_tokens"] == doc["text_tokens"] == 300


@pytest.mark.parametrize("place", ["hub", "folder"])
def test_geometry_measures_wte_alone(served: FakeHub, llama: TinyLlama, place: str) -> None:
    model = hub_or_folder(LLAMA, llama.folder, place)
    doc = run_json("geometry", "-m", model)
    assert doc["wpe"] is None and doc["wte_vs_wpe"] is None
    assert "has no position table" in doc["reading"] and ROTARY in doc["reading"]
    norms = np.linalg.norm(llama.wte.astype(np.float64), axis=1)
    assert doc["wte"]["rows"] == len(llama.wte)
    assert doc["wte"]["norm"]["mean"] == pytest.approx(norms.mean(), rel=1e-9)
    assert doc["wte"]["largest"][0]["id"] == int(np.argmax(norms))
    table = run_cli("geometry", "-m", model)
    assert table.exit_code == 0
    assert f"wte of {model}" in table.stdout and "wpe rows" not in table.stdout
    assert "there is no wpe to measure" in " ".join(table.stdout.split())


@pytest.mark.parametrize("kind", ["llama", "neox"])
def test_context_runs_every_layer(served: FakeHub, kind: str) -> None:
    model = LLAMA if kind == "llama" else NEOX
    doc = run_json("context", "cat", "the cat sat", "a cat and a dog", "-m", model)
    assert [x["layer"] for x in doc["layers"]] == list(range(N_LAYER + 1))
    first = doc["layers"][0]  # h0 = wte[token]: the same vector in both sentences, and the static row
    assert first["pairs"][0]["cosine"] == pytest.approx(1.0, abs=1e-12)
    assert first["static"] == pytest.approx([1.0, 1.0], abs=1e-12)
    assert not any("layer 0" in n for n in doc["notes"])  # the same on every run: in the docs


def test_context_matches_transformers_hidden_states(served: FakeHub, llama: TinyLlama) -> None:
    import torch

    sentences = ["the cat sat", "a cat and a dog"]
    doc = run_json("context", "cat", *sentences, "-m", LLAMA)
    lm = llama_model(llama.folder)
    vectors = []
    for sentence, found in zip(sentences, doc["sentences"], strict=True):
        ids = llama.tokenizer.encode(sentence, add_special_tokens=False).ids
        with torch.no_grad():
            states = lm.model(torch.tensor([ids]), output_hidden_states=True).hidden_states
        vectors.append(states[-1][0, found["at"][0]].numpy().astype(np.float64))
    a, b = vectors
    cosine = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert doc["layers"][-1]["pairs"][0]["cosine"] == pytest.approx(cosine, abs=1e-6)


# ---------------------------------------------------------------- tying


@pytest.mark.parametrize("place", ["hub", "folder"])
def test_an_untied_llama_says_so_and_compares(served: FakeHub, llama: TinyLlama, place: str) -> None:
    model = hub_or_folder(LLAMA, llama.folder, place)
    doc = run_json("tying", "--compare", "-m", model)
    assert doc["tied"] is False and doc["saved_params"] == 0
    assert [c["passed"] for c in doc["checks"]] == [False, False, False]
    assert "tie_word_embeddings = false" in doc["checks"][0]["detail"]
    assert "lm_head.weight is not model.embed_tokens.weight" in doc["checks"][1]["detail"]
    assert "a separate lm_head.weight" in doc["checks"][2]["detail"]
    c = doc["comparison"]
    assert c["rows"] == c["total_rows"] == len(llama.wte) and c["sampled"] is False
    assert c["mean_cosine_matching"] == pytest.approx(1 / math.sqrt(2), abs=1e-6)  # planted: every row
    assert abs(c["mean_cosine_random"]) < 0.05  # random directions in 32 dimensions
    assert c["output"] == "lm_head.weight" and c["bytes_read"] == llama.wte.nbytes
    table = run_cli("tying", "--compare", "-m", model)
    assert table.exit_code == 0
    assert f"{model}: not tied" in table.stdout
    shown = " ".join(table.stdout.split())
    assert f"against wte: all {len(llama.wte)} rows ({llama.wte.nbytes:,} bytes read)" in shown
    assert "row i with wte row i 0.7071" in shown


def test_a_config_without_tie_word_embeddings_is_untied(tmp_path: Path, llama: TinyLlama) -> None:
    """LlamaConfig defaults it to false (GPT-2's to true): a config that leaves it out is read that way."""
    folder = _silent_on_tying(llama, tmp_path / "llama")
    doc = run_json("tying", "-m", str(folder))
    assert doc["tied"] is False
    assert doc["checks"][0] == {
        "name": "config",
        "passed": False,
        "detail": "config.json: tie_word_embeddings = false",
    }


def _neox_model(folder: Path) -> Any:
    from transformers import GPTNeoXForCausalLM

    return GPTNeoXForCausalLM.from_pretrained(folder)


def test_sizes_counts_an_untied_output_layer(tmp_path: Path, llama: TinyLlama, neox: TinyNeox) -> None:
    """GPT-NeoX's embed_out and a Llama whose config is silent on tying (untied) count their output layer,
    as transformers' own models do."""
    silent = _silent_on_tying(llama, tmp_path / "silent")
    doc = run_json("sizes", "-m", str(neox.folder), "-m", str(llama.folder), "-m", str(silent))
    rows = len(neox.wte) * neox.wte.shape[1], len(llama.wte) * llama.wte.shape[1]
    for m, output_params, loaded in zip(
        doc["models"],
        (rows[0], rows[1], rows[1]),
        (_neox_model(neox.folder), llama_model(llama.folder), llama_model(llama.folder)),
        strict=True,
    ):
        assert m["output_params"] == output_params
        assert m["total_params"] == sum(p.numel() for p in loaded.parameters())
    table = run_cli("sizes", "-m", str(neox.folder)).stdout
    assert "tied to wte" not in table
    assert re.search(r"^ *positions +learned none *$", table, re.MULTILINE)  # rotary: not "0"


def test_neox_compare_counts_the_negated_rows(served: FakeHub, neox: TinyNeox) -> None:
    doc = run_json("tying", "--compare", "-m", NEOX)
    assert doc["tied"] is False
    assert "a separate embed_out.weight" in doc["checks"][2]["detail"]
    c = doc["comparison"]
    assert c["output"] == "embed_out.weight"
    assert c["mean_cosine_matching"] == pytest.approx(1 - 2 * neox.negated / len(neox.wte), abs=1e-9)


@pytest.mark.parametrize(("place", "verb"), [("hub", "fetching"), ("folder", "reading")])
def test_compare_says_it_reads_a_folder_and_fetches_from_the_hub(
    served: FakeHub, neox: TinyNeox, place: str, verb: str
) -> None:
    from gpt2emb.core.tying import tying
    from gpt2emb.report import QuietReporter

    class Labels(QuietReporter):
        def __init__(self) -> None:
            self.labels: list[str] = []

        def progress(self, label: str, total: int) -> Any:
            self.labels.append(label)
            return super().progress(label, total)

    model, said = hub_or_folder(NEOX, neox.folder, place), Labels()
    tying(model, compare=True, reporter=said)
    assert f"{verb} embed_out.weight of {model}" in said.labels


def test_compare_samples_a_large_output_layer_by_ranges(
    served: FakeHub, llama: TinyLlama, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.core import tying

    run_json("neighbors", "cat", "-m", LLAMA)  # the entry is built: what follows reads the output layer only
    served.requests.clear()
    monkeypatch.setattr(tying, "COMPARE_ALL_BYTES", 1000)  # as if the 47 KB table were over the limit
    monkeypatch.setattr(tying, "COMPARE_SAMPLE", 128)
    monkeypatch.setattr(tying, "COMPARE_RUN", 16)
    c = run_json("tying", "--compare", "-m", LLAMA)["comparison"]
    assert c["sampled"] is True and c["rows"] == 128 and c["total_rows"] == len(llama.wte)
    assert c["mean_cosine_matching"] == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    ranges = [r[2] for r in served.requests if r[0] == "GET" and r[1].endswith("model.safetensors")]
    assert len(ranges) == 8 and all(r.startswith("bytes=") for r in ranges)  # 8 runs of 16 rows, each once
    sizes = [int(b) - int(a) + 1 for a, b in (r.removeprefix("bytes=").split("-") for r in ranges)]
    assert sizes == [16 * llama.wte.shape[1] * 4] * 8
    table = run_cli("tying", "--compare", "-m", LLAMA)
    assert f"a seeded sample of 128 of its {len(llama.wte)} rows" in " ".join(table.stdout.split())


def test_a_tied_llama_says_so(hub: FakeHub, smol: TinyLlama) -> None:
    """SmolLM: a Llama whose config ties the output layer, with a byte-level tokenizer."""
    serve(hub, {SMOL: smol.files()})
    doc = run_json("tying", "-m", SMOL)
    assert doc["tied"] is True and doc["saved_params"] == smol.wte.size
    assert [c["passed"] for c in doc["checks"]] == [True, True, True]
    assert "no lm_head.weight: the output layer is read from wte" in doc["checks"][2]["detail"]
    refused = run_cli("tying", "--compare", "-m", SMOL)
    assert refused.exit_code == 2 and "nothing to compare" in refused.stderr
    item = run_json("neighbors", "cat", "-k", "1", "-m", SMOL)["items"][0]  # byte-level words: "Ġcat"
    assert item["tokens"] == [{"id": smol.id("cat"), "token": " cat"}]
    assert item["neighbors"][0]["token"] == " cats"


# ---------------------------------------------------------------- Mistral, Qwen2; the tokenizers bpe.py takes


@pytest.mark.parametrize("kind", ["mistral", "qwen2"])
def test_mistral_and_qwen2(
    hub: FakeHub, mistral: TinyLlama, qwen: TinyLlama, kind: str, caches: dict[str, Path]
) -> None:
    tiny, repo = (mistral, MISTRAL) if kind == "mistral" else (qwen, QWEN)
    serve(hub, {repo: tiny.files()})
    item = run_json("neighbors", "cat", "-k", "1", "-m", repo)["items"][0]
    assert item["tokens"] == [{"id": tiny.id("cat"), "token": " cat"}]
    assert item["neighbors"][0]["token"] == " cats"
    refused = run_cli("positions", "0", "-m", repo)
    title = "Mistral" if kind == "mistral" else "Qwen2"
    assert refused.exit_code == 2 and f"in a {title} model, {ROTARY}" in refused.stderr
    doc = run_json("tying", "--compare", "-m", repo)
    assert doc["tied"] is False
    assert doc["comparison"]["mean_cosine_matching"] == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    manifest = json.loads(next(caches["cache"].rglob("manifest.json")).read_text())
    assert manifest["words"] == ("SentencePiece BPE" if kind == "mistral" else "byte-level BPE")


def test_bpe_takes_only_gpt2_s_plain_pattern(qwen: TinyLlama, neox: TinyNeox, llama: TinyLlama) -> None:
    """Qwen2's normalizer and Split pattern, and SentencePiece's Metaspace, go to the tokenizers library;
    GPT-2's plain byte-level BPE (Pythia's) bpe.py answers itself. Either way the ids `vector` shows for a
    word are the library's own for the word as it starts a text (" " + word): "cafe" + U+0301 is "café"
    where the tokenizer's normalizer composes it (Qwen2's NFC), and two other tokens where it does not
    (Pythia's)."""
    from tokenizers import Tokenizer

    from gpt2emb import bpe

    def library(t: TinyLlama | TinyNeox) -> Any:
        return Tokenizer.from_file(str(t.folder / "tokenizer.json"))

    def table(t: TinyLlama | TinyNeox) -> np.ndarray | None:
        return bpe.table(json.loads((t.folder / "tokenizer.json").read_text()))

    words = ["cat", "cats", "kitten", "Paris", "café", "cafe\u0301", "naïve"]
    shown = {}
    for t in (qwen, neox, llama):
        items = run_json("vector", *words, "-m", str(t.folder))["items"]
        shown[t.folder.name] = ids = [[x["id"] for x in item["tokens"]] for item in items]
        assert ids == [library(t).encode(" " + w, add_special_tokens=False).ids for w in words], t.folder.name
    assert shown[qwen.folder.name][4] == shown[qwen.folder.name][5]  # composed by Qwen2's normalizer
    assert shown[neox.folder.name][4] != shown[neox.folder.name][5]  # not by Pythia's, which has none
    # who answered: bpe.py declines Qwen2's and SentencePiece's tokenizers, and gives the library's ids for
    # Pythia's by itself
    assert table(qwen) is None and table(llama) is None
    plain = table(neox)
    assert plain is not None  # Pythia's kind: GPT-2's plain byte-level BPE
    added = [a["content"] for a in json.loads((neox.folder / "tokenizer.json").read_text())["added_tokens"]]
    ours = bpe.Bpe(plain, added)
    for w in words:
        assert ours.encode(" " + w) == tuple(library(neox).encode(" " + w, add_special_tokens=False).ids), w
    # what makes Qwen2's the library's: its fixture has the normalizer and split pattern bpe.py leaves alone
    parsed = json.loads((qwen.folder / "tokenizer.json").read_text())
    assert parsed["normalizer"]["type"] == "NFC" and parsed["pre_tokenizer"]["type"] == "Sequence"


# ---------------------------------------------------------------- first use


def test_first_use_fetches_config_tokenizer_header_and_wte_only(served: FakeHub, llama: TinyLlama) -> None:
    run_json("neighbors", "cat", "-m", LLAMA)
    files = {r[1].rsplit("/", 1)[1] for r in served.requests}
    assert files == {"config.json", "tokenizer.json", "model.safetensors"}
    ranged = [r[2] for r in served.requests if r[0] == "GET" and r[1].endswith("model.safetensors")]
    assert len(ranged) == 3  # the header's length, the header, wte (no wpe: there is none)
    sizes = [int(b) - int(a) + 1 for a, b in (r.removeprefix("bytes=").split("-") for r in ranged)]
    assert sizes[2] == llama.wte.nbytes
    small = sum(len(llama.files()[f]) for f in ("config.json", "tokenizer.json"))
    assert served.bytes_served == small + sum(sizes)
