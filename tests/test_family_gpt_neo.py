"""GPT-Neo (families/gpt_neo.py) on a tiny GPT-Neo made by transformers: served by the fake Hub and read as
a local folder.

Oracles: the model's own position table (64 rows from row 0: GPT-Neo's 2048 at a tiny size), and
transformers' own forward pass for h0 (hidden_states[0] = wte[ids] + wpe[0..n-1]).
"""

from __future__ import annotations

import numpy as np
import pytest

from oracles import unit
from tiny_gpt_neo import N_LAYER, N_POSITIONS, TinyGPTNeo, build

from conftest import hub_or_folder, run_cli, run_json, serve
from fakehub import FakeHub

REPO = "EleutherAI/gpt-neo-125m"


@pytest.fixture(scope="module")
def neo(tmp_path_factory: pytest.TempPathFactory) -> TinyGPTNeo:
    return build(tmp_path_factory.mktemp("gpt_neo"))


@pytest.fixture
def served(hub: FakeHub, neo: TinyGPTNeo) -> FakeHub:
    return serve(hub, {REPO: neo.files()})


@pytest.mark.parametrize("where", ["hub", "folder"])
def test_neighbors_of_cat(served: FakeHub, neo: TinyGPTNeo, where: str) -> None:
    model = hub_or_folder(REPO, neo.folder, where)
    doc = run_json("neighbors", "cat", "-k", "3", "-m", model)
    first = doc["items"][0]
    assert first["tokens"][0]["id"] == neo.id("cat")
    assert [n["token"] for n in first["neighbors"][:2]] == [" cats", " kitten"]
    assert first["neighbors"][0]["id"] == neo.id("cats")
    table = run_cli("neighbors", "cat", "-m", model)
    assert table.exit_code == 0 and '" kitten"' in table.stdout


@pytest.mark.parametrize("where", ["hub", "folder"])
def test_positions_are_the_table_s_rows_up_to_its_wall(served: FakeHub, neo: TinyGPTNeo, where: str) -> None:
    model = hub_or_folder(REPO, neo.folder, where)
    last = N_POSITIONS - 1
    doc = run_json("positions", "0", "1", "2", str(last), "-m", model)
    assert doc["positions"] == [0, 1, 2, last] and doc["rows"] == [0, 1, 2, last]
    u = unit(neo.wpe[[0, 1, 2, last]])
    np.testing.assert_allclose(np.array(doc["matrix"]), u @ u.T, atol=1e-6)
    assert run_json("positions", "--heatmap", "--cells", "8", "-m", model)["n_positions"] == N_POSITIONS
    past = run_cli("positions", str(N_POSITIONS), "-m", model)
    assert past.exit_code == 2
    assert f"position {N_POSITIONS} does not exist" in past.stderr
    assert f"learned {N_POSITIONS} positions, 0 to {last}" in past.stderr and "padding" not in past.stderr


def test_input_is_transformers_own_first_hidden_state(served: FakeHub, neo: TinyGPTNeo) -> None:
    import torch

    text = "the king and the cats"
    doc = run_json("input", text, "--full", "-m", REPO)
    ids = list(neo.tokenizer.encode(text).ids)
    assert [t["id"] for t in doc["tokens"]] == ids
    assert [t["row"] for t in doc["tokens"]] == list(range(len(ids)))
    with torch.no_grad():
        out = neo.model()(input_ids=torch.tensor([ids]), output_hidden_states=True)
    h0 = out.hidden_states[0][0].numpy()
    np.testing.assert_allclose(np.array(doc["h0"]), h0, atol=1e-6)
    np.testing.assert_allclose(np.array(doc["h0"]), neo.wte[ids] + neo.wpe[: len(ids)], atol=1e-6)
    n = len(ids)
    table = run_cli("input", text, "-m", REPO)
    assert (
        table.exit_code == 0
        and f"wte[ids] ({n}, 32) + wpe[0..{n - 1}] ({n}, 32) = h0 ({n}, 32)" in table.stdout
    )
    too_long = run_cli("input", " the" * (N_POSITIONS + 1), "-m", REPO)
    assert too_long.exit_code == 2 and f"position {N_POSITIONS} does not exist" in too_long.stderr


@pytest.mark.parametrize("where", ["hub", "folder"])
def test_tying_is_tied(served: FakeHub, neo: TinyGPTNeo, where: str) -> None:
    model = hub_or_folder(REPO, neo.folder, where)
    doc = run_json("tying", "-m", model)
    assert doc["tied"] is True and doc["saved_params"] == neo.wte.size
    meta = next(c for c in doc["checks"] if c["name"] == "meta_model")
    assert (
        "GPTNeoForCausalLM" in meta["detail"] and "lm_head.weight is transformer.wte.weight" in meta["detail"]
    )
    checkpoint = next(c for c in doc["checks"] if c["name"] == "checkpoint")
    assert checkpoint["passed"] and "no lm_head.weight" in checkpoint["detail"]


def test_context_runs_gpt_neo(served: FakeHub) -> None:
    doc = run_json("context", "cat", "the cat sat", "a cat and a dog", "-m", REPO)
    assert len(doc["layers"]) == N_LAYER + 1  # h0 and each block
    assert all(s["at"] for s in doc["sentences"])


def test_geometry_measures_both_tables(served: FakeHub, neo: TinyGPTNeo) -> None:
    geo = run_json("geometry", "-m", REPO)
    assert geo["wpe"]["rows"] == N_POSITIONS and geo["wte"]["rows"] == len(neo.wte)
    norms = np.linalg.norm(neo.wpe.astype(np.float64), axis=1)
    assert geo["wpe"]["norm"]["mean"] == pytest.approx(norms.mean(), rel=1e-6)
    assert run_cli("geometry", "-m", REPO).exit_code == 0
