"""DistilBERT (families/distilbert.py) on a tiny DistilBERT made by transformers: served by the fake Hub as
distilbert/distilbert-base-uncased and read as a local folder.

Oracles: the model's own tables read at row p (no offset), and transformers' own modules for h0 (the layer
norm of token + position rows: no token-type row) and for the hidden states of `context`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oracles import encoder_context_cosines, geometry_similarity_vector, unit
from tiny_distilbert import N_LAYER, N_POSITIONS, TinyDistilBert, build

from conftest import hub_or_folder, run_cli, run_json, serve
from fakehub import FakeHub

REPO = "distilbert/distilbert-base-uncased"


@pytest.fixture(scope="module")
def distil(tmp_path_factory: pytest.TempPathFactory) -> TinyDistilBert:
    return build(tmp_path_factory.mktemp("distilbert"))


@pytest.fixture
def served(hub: FakeHub, distil: TinyDistilBert) -> FakeHub:
    return serve(hub, {REPO: distil.files()})


@pytest.mark.parametrize("at", ["hub", "folder"])
def test_neighbors_of_cat(served: FakeHub, distil: TinyDistilBert, at: str) -> None:
    model = hub_or_folder(REPO, distil.folder, at)
    doc = run_json("neighbors", "cat", "-k", "3", "-m", model)
    first = doc["items"][0]
    assert first["tokens"] == [{"id": distil.id("cat"), "token": " cat"}]
    assert [n["token"] for n in first["neighbors"][:2]] == [" cats", " kitten"]
    assert first["neighbors"][0]["id"] == distil.id("cats")
    table = run_cli("neighbors", "cat", "-m", model)
    assert table.exit_code == 0 and '" kitten"' in table.stdout


def test_positions_start_at_row_zero(served: FakeHub, distil: TinyDistilBert) -> None:
    doc = run_json("positions", "0", "1", "2", "40", "-m", REPO)
    assert doc["positions"] == doc["rows"] == [0, 1, 2, 40]
    u = unit(distil.positions[[0, 1, 2, 40]])
    np.testing.assert_allclose(np.array(doc["matrix"]), u @ u.T, atol=1e-6)
    assert run_cli("positions", "0", "1", "2", "-m", REPO).exit_code == 0
    past = run_cli("positions", str(N_POSITIONS), "-m", REPO)
    assert past.exit_code == 2
    assert (
        f"position {N_POSITIONS} does not exist: {REPO} learned {N_POSITIONS} positions, 0 to " in past.stderr
    )


@pytest.mark.parametrize("at", ["hub", "folder"])
def test_input_is_transformers_own_embedding_output(served: FakeHub, distil: TinyDistilBert, at: str) -> None:
    import torch

    model = hub_or_folder(REPO, distil.folder, at)
    text = "the King and the cats"
    doc = run_json("input", text, "--full", "-m", model)
    ids = list(distil.tokenizer.encode(text, add_special_tokens=False).ids)
    assert [t["id"] for t in doc["tokens"]] == ids and distil.id("king") in ids
    assert [t["row"] for t in doc["tokens"]] == list(range(len(ids)))
    with torch.no_grad():
        h0 = distil.model().distilbert.embeddings(torch.tensor([ids]))[0].numpy()
    np.testing.assert_allclose(np.array(doc["h0"]), h0, atol=2e-5)
    summed = distil.wte[ids] + distil.positions[: len(ids)]  # before the layer norm, no token-type row
    np.testing.assert_allclose(
        [t["sum_norm"] for t in doc["tokens"]], np.linalg.norm(summed, axis=1), rtol=1e-5
    )
    table = run_cli("input", text, "-m", model)
    assert table.exit_code == 0
    n = len(ids)
    assert f"LayerNorm(wte[ids] ({n}, 32) + wpe[0..{n - 1}] ({n}, 32)) = h0 ({n}, 32)" in table.stdout


def test_a_distilbert_model_checkpoint_without_the_prefix(tmp_path: Path) -> None:
    import torch
    from transformers import DistilBertModel

    base = build(tmp_path, base=True)
    doc = run_json("neighbors", "cat", "-k", "2", "-m", str(base.folder))
    assert [n["token"] for n in doc["items"][0]["neighbors"]] == [" cats", " kitten"]
    ids = list(base.tokenizer.encode("the king", add_special_tokens=False).ids)
    got = run_json("input", "the king", "--full", "-m", str(base.folder))
    model = DistilBertModel.from_pretrained(base.folder).eval()  # type: ignore[no-untyped-call]
    with torch.no_grad():
        h0 = model.embeddings(torch.tensor([ids]))[0].numpy()
    np.testing.assert_allclose(np.array(got["h0"]), h0, atol=2e-5)


def test_tying_names_distilbert_s_layers(served: FakeHub, distil: TinyDistilBert) -> None:
    doc = run_json("tying", "-m", REPO)
    assert doc["tied"] is True
    meta = next(c for c in doc["checks"] if c["name"] == "meta_model")
    assert "DistilBertForMaskedLM" in meta["detail"]
    assert "vocab_projector.weight is distilbert.embeddings.word_embeddings.weight" in meta["detail"]
    loaded = run_json("tying", "--load", "-m", str(distil.folder))
    assert next(c for c in loaded["checks"] if c["name"] == "loaded_model")["passed"] is True
    grad = run_cli("tying", "--grad", "the cat sat", "-m", REPO)
    assert grad.exit_code == 2 and "masked language model (DistilBERT)" in grad.stderr


def test_geometry_similarity_and_vector(served: FakeHub, distil: TinyDistilBert) -> None:
    geometry_similarity_vector(REPO, distil.wte, distil.positions, distil.id)


def test_context_is_transformers_own_hidden_states(served: FakeHub, distil: TinyDistilBert) -> None:
    from transformers import DistilBertModel

    sentences = ["the cat sat", "a dog and a cat"]
    doc = run_json("context", "cat", *sentences, "-m", REPO)
    assert len(doc["layers"]) == N_LAYER + 1  # h0 and each block
    at = [s["at"] for s in doc["sentences"]]
    assert at == [[1], [4]]
    want = encoder_context_cosines(
        DistilBertModel, distil.folder, distil.tokenizer, sentences, [a[0] for a in at]
    )
    for layer in doc["layers"]:
        assert layer["pairs"][0]["cosine"] == pytest.approx(want[layer["layer"]], abs=1e-5)
    assert run_cli("context", "cat", *sentences, "-m", REPO).exit_code == 0
