"""What core/sizes.py decides, pinned where a mutation run found it loose (issue 43, point 4): a model with no
position table counts no position parameters and no position rows; `models` gives each GPT-2 size its total;
a checkpoint of the embeddings alone has its config's layers; an output layer of integers is no parameter;
the GPT-2 sizes have no output layer of their own; --figure draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tiny_llama import build as build_llama

from conftest import COMMIT, run_json
from fakehub import FakeHub, Repo
from tinymodel import N_LAYER, Tiny, hub_files, safetensors_bytes


def test_a_model_without_a_position_table_counts_no_position_parameters(tmp_path: Path) -> None:
    llama = build_llama(tmp_path / "llama")
    (m,) = run_json("sizes", "-m", str(llama.folder))["models"]
    assert m["family"] == "llama" and m["wpe_params"] == 0 and m["position_rows"] == 0
    assert m["wte_params"] == llama.wte.size
    assert m["embeddings_mb"] == llama.wte.size * 4 / 1e6  # the token table alone, 4 bytes a parameter


def test_models_gives_each_gpt2_size_its_published_total_and_others_none() -> None:
    """The registry's totals by the GPT-2 formula (the published counts; distilgpt2: gpt2 with 6 blocks of
    7,087,872 parameters); a family with no formula (RoBERTa) has none: sizes -m counts it."""
    totals = {m["name"]: m["total_params"] for m in run_json("models")["models"]}
    assert totals == {
        "gpt2": 124_439_808,
        "gpt2-medium": 354_823_168,
        "gpt2-large": 774_030_080,
        "gpt2-xl": 1_557_611_200,
        "distilgpt2": 124_439_808 - 6 * 7_087_872,
        "roberta-base": None,
        "roberta-large": None,
    }


def test_a_checkpoint_of_the_embeddings_alone_has_its_config_s_layers(hub: FakeHub, tiny: Tiny) -> None:
    """A checkpoint that holds wte and wpe and no block: its header names no layers, so the config's count
    stands (the weights' own when they hold blocks: a config that disagrees with them is refused)."""
    files = hub_files(tiny)
    files["model.safetensors"] = safetensors_bytes({"wte.weight": tiny.wte, "wpe.weight": tiny.wpe})
    hub.repos["someone/tables"] = Repo(COMMIT, files)
    (m,) = run_json("sizes", "-m", "someone/tables")["models"]
    assert m["n_layer"] == N_LAYER and m["total_params"] == tiny.wte.size + tiny.wpe.size


def test_an_output_layer_stored_as_integers_is_no_parameter(hub: FakeHub, tiny: Tiny) -> None:
    """An lm_head.weight of int8 beside a tied wte: not a parameter (integer tensors never are), so the
    count is the tied model's, as without it."""
    plain = run_json("sizes", "-m", "openai-community/gpt2")["models"][0]
    files = hub_files(tiny)
    state = tiny.state(buffers=True)
    files["model.safetensors"] = safetensors_bytes(
        {**state, "lm_head.weight": np.zeros(tiny.wte.shape, np.int8)}
    )
    hub.repos["someone/int8-head"] = Repo(COMMIT, files)
    (m,) = run_json("sizes", "-m", "someone/int8-head")["models"]
    assert (m["total_params"], m["output_params"]) == (plain["total_params"], 0)


def test_the_gpt2_sizes_have_no_output_layer_of_their_own() -> None:
    """GPT-2 ties its output layer to wte: by the formula, no parameter is the output layer's own."""
    assert [m["output_params"] for m in run_json("sizes")["models"]] == [0, 0, 0, 0]


def test_sizes_draws_its_figure_by_the_formula_and_from_headers(hub: FakeHub, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    for args in ([], ["-m", "openai-community/gpt2"]):
        target = tmp_path / f"sizes{len(args)}.svg"
        doc = run_json("sizes", *args, "--figure", str(target))
        assert doc["figure"] == str(target) and target.read_text().startswith("<?xml")
