"""RoBERTa (families/roberta.py) on a tiny RoBERTa made by transformers: served by the fake Hub as
FacebookAI/roberta-base and read as a local folder, every command in table and JSON.

Oracles: the model's own position table read at row p + 2, and transformers' own embeddings module for h0
(the layer norm of token + position + token-type rows).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oracles import geometry_similarity_vector, unit
from tiny_roberta import N_POSITIONS, TinyRoberta, build

from conftest import copy_model, hub_or_folder, run_cli, run_json, serve
from fakehub import FakeHub

REPO = "FacebookAI/roberta-base"


@pytest.fixture(scope="module")
def roberta(tmp_path_factory: pytest.TempPathFactory) -> TinyRoberta:
    return build(tmp_path_factory.mktemp("roberta"))


@pytest.fixture
def served(hub: FakeHub, roberta: TinyRoberta) -> FakeHub:
    return serve(hub, {REPO: roberta.files()})


@pytest.mark.parametrize("where", ["hub", "folder"])
def test_neighbors_of_cat(served: FakeHub, roberta: TinyRoberta, where: str) -> None:
    model = hub_or_folder("roberta-base", roberta.folder, where)
    doc = run_json("neighbors", "cat", "-k", "3", "-m", model)
    first = doc["items"][0]
    assert first["tokens"][0]["id"] == roberta.id("cat")
    assert [n["token"] for n in first["neighbors"][:2]] == [" cats", " kitten"]
    assert first["neighbors"][0]["id"] == roberta.id("cats")
    table = run_cli("neighbors", "cat", "-m", model)
    assert table.exit_code == 0 and '" kitten"' in table.stdout


def test_positions_speak_in_token_positions_and_show_the_rows(served: FakeHub, roberta: TinyRoberta) -> None:
    doc = run_json("positions", "0", "1", "2", "40", "-m", "roberta")
    assert doc["positions"] == [0, 1, 2, 40] and doc["rows"] == [2, 3, 4, 42]
    u = unit(roberta.positions[[2, 3, 4, 42]])  # the oracle reads row p + 2
    np.testing.assert_allclose(np.array(doc["matrix"]), u @ u.T, atol=1e-6)
    table = run_cli("positions", "0", "1", "2", "-m", "roberta")
    assert table.exit_code == 0 and "row" in table.stdout
    past = run_cli("positions", str(N_POSITIONS), "-m", "roberta")
    assert past.exit_code == 2
    assert f"position {N_POSITIONS} does not exist" in past.stderr
    assert f"rows 2 to {N_POSITIONS + 1} of its position table" in past.stderr


def test_heatmap_covers_the_usable_rows(served: FakeHub) -> None:
    doc = run_json("positions", "--heatmap", "--cells", "8", "-m", "roberta")
    assert doc["n_positions"] == N_POSITIONS


def test_input_is_transformers_own_embedding_output(served: FakeHub, roberta: TinyRoberta) -> None:
    import torch

    text = "the king and the cats"
    doc = run_json("input", text, "--full", "-m", "roberta")
    ids = list(roberta.tokenizer.encode(text, add_special_tokens=False).ids)
    assert [t["id"] for t in doc["tokens"]] == ids
    assert [t["row"] for t in doc["tokens"]] == list(range(2, 2 + len(ids)))
    with_specials = roberta.tokenizer.encode(text).ids  # called as usual: <s> ... </s> around the text
    assert with_specials == [0, *ids, 2]
    assert doc["notes"] == [
        "roberta-base's tokenizer, called as usual, adds <s> before and </s> after the text; shown here as "
        "typed, without them: in use each token sits 1 position later"
    ]
    with torch.no_grad():  # RoBERTa numbers positions from pad_token_id + 1 = 2 itself
        h0 = roberta.model().roberta.embeddings(input_ids=torch.tensor([ids]))[0].numpy()
    np.testing.assert_allclose(np.array(doc["h0"]), h0, atol=2e-5)
    np.testing.assert_allclose([t["h0_norm"] for t in doc["tokens"]], np.linalg.norm(h0, axis=1), rtol=1e-5)
    type_row = roberta.model().roberta.embeddings.token_type_embeddings.weight[0].detach().numpy()
    summed = roberta.wte[ids] + roberta.positions[2 : 2 + len(ids)] + type_row  # before the layer norm
    np.testing.assert_allclose(
        [t["sum_norm"] for t in doc["tokens"]], np.linalg.norm(summed, axis=1), rtol=1e-5
    )
    wpe_norms = np.linalg.norm(roberta.positions[2 : 2 + len(ids)], axis=1)
    np.testing.assert_allclose([t["wpe_norm"] for t in doc["tokens"]], wpe_norms, rtol=1e-6)
    table = run_cli("input", text, "-m", "roberta")
    assert table.exit_code == 0
    n = len(ids)
    assert (
        f"LayerNorm(wte[ids] ({n}, 32) + wpe[2..{n + 1}] ({n}, 32) + type[0] (32,)) = h0 ({n}, 32)"
        in table.stdout
    )
    # <s> and </s> come around a text in use: N_POSITIONS - 2 tokens of it fit, not N_POSITIONS
    assert run_json("input", " cat" * (N_POSITIONS - 2), "-m", "roberta")["n_tokens"] == N_POSITIONS - 2
    too_long = run_cli("input", " cat" * (N_POSITIONS - 1), "-m", "roberta")
    assert too_long.exit_code == 2 and too_long.stderr.startswith(
        f"gpt2emb: the text is {N_POSITIONS - 1} tokens, but {N_POSITIONS - 2} fit: roberta-base learned "
        f"{N_POSITIONS} positions, 0 to {N_POSITIONS - 1} (rows 2 to"
    )
    assert (
        "and its tokenizer adds 2 special tokens to a text in use; shorten the text, or use --truncate to "
        f"keep the first {N_POSITIONS - 2}" in too_long.stderr
    )
    cut = run_json("input", " cat" * (N_POSITIONS - 1), "--truncate", "-m", "roberta")
    assert cut["n_tokens"] == N_POSITIONS - 2 and "only the first" in cut["notes"][0]


@pytest.mark.parametrize("special", ["<s>", "</s>", "<pad>", "<unk>", "<mask>"])
def test_special_tokens_are_refused_as_words(served: FakeHub, roberta: TinyRoberta, special: str) -> None:
    """By the family's pattern before anything is fetched (a registry model), by the tokenizer's own list
    with the id once the model is open (a folder)."""
    early = run_cli("vector", special, "-m", "roberta")
    assert early.exit_code == 2 and "special token, not a word" in early.stderr and served.requests == []
    result = run_cli("vector", special, "-m", str(roberta.folder))
    want = roberta.tokenizer.token_to_id(special)
    assert result.exit_code == 2
    assert f"special token, not a word: ask for its row by id (id:{want})" in result.stderr
    doc = run_json("vector", f"id:{want}", "-m", str(roberta.folder))
    assert doc["items"][0]["tokens"][0]["id"] == want


def test_tying_names_roberta_s_layers(served: FakeHub) -> None:
    doc = run_json("tying", "-m", "roberta")
    assert doc["tied"] is True
    meta = next(c for c in doc["checks"] if c["name"] == "meta_model")
    assert "RobertaForMaskedLM" in meta["detail"]
    assert "lm_head.decoder.weight is roberta.embeddings.word_embeddings.weight" in meta["detail"]
    grad = run_cli("tying", "--grad", "the cat sat", "-m", "roberta")
    assert grad.exit_code == 2 and "masked language model" in grad.stderr


def test_geometry_and_similarity_and_vector(served: FakeHub, roberta: TinyRoberta) -> None:
    geometry_similarity_vector("roberta", roberta.wte, roberta.positions[2:], roberta.id)


def test_side_by_side_with_gpt2_is_joined_by_token_text(served: FakeHub, roberta: TinyRoberta) -> None:
    doc = run_json("neighbors", "cat", "-k", "3", "-m", "gpt2", "-m", "roberta")
    gpt2, rob = (r["items"][0]["neighbors"] for r in doc["results"])
    assert gpt2[0]["token"] == rob[0]["token"] == " cats" and gpt2[0]["id"] != rob[0]["id"]
    overlap = doc["overlap"][0]
    shared = {n["token"] for n in gpt2} & {n["token"] for n in rob}
    assert overlap["shared"] == len(shared) >= 2
    table = run_cli("neighbors", "cat", "-k", "3", "-m", "gpt2", "-m", "roberta")
    assert table.exit_code == 0 and "without its leading space" in " ".join(table.stdout.split())


def test_context_runs_roberta(served: FakeHub, roberta: TinyRoberta) -> None:
    doc = run_json("context", "cat", "the cat sat", "a cat and a dog", "-m", "roberta")
    assert len(doc["layers"]) == 3  # h0 and two layers
    assert all(s["at"] for s in doc["sentences"])


def test_an_unsupported_model_type_names_the_supported_ones(tmp_path: Path, roberta: TinyRoberta) -> None:
    config = json.loads(roberta.files()["config.json"])
    folder = copy_model(roberta.files(), tmp_path / "t5", {**config, "model_type": "t5"})
    result = run_cli("neighbors", "cat", "-m", str(folder))
    assert result.exit_code != 0 and "model_type='t5'" in result.stderr and "roberta" in result.stderr


def test_models_lists_each_family(served: FakeHub) -> None:
    doc = run_json("models")
    families = {m["name"]: m["family"] for m in doc["models"]}
    assert families["gpt2"] == "gpt2" and families["roberta-base"] == "roberta"
    assert families["distilgpt2"] == "gpt2" and families["roberta-large"] == "roberta"


def test_a_sentence_past_the_last_position_is_refused_with_the_rows(served: FakeHub) -> None:
    long = "the cat" + " cat" * N_POSITIONS  # " cat" is one token; "the" is one too at the start
    result = run_cli("context", "cat", long, "the cat sat", "-m", "roberta")
    assert result.exit_code == 2
    assert f"sentence 1 has {N_POSITIONS + 2} tokens, but {N_POSITIONS - 2} fit" in result.stderr
    assert f"rows 2 to {N_POSITIONS + 1} of its position table" in result.stderr
