"""What core/sizes.py decides, pinned where a mutation run found it loose (issue 43, point 4): a model with no
position table counts no position parameters and no position rows."""

from __future__ import annotations

from pathlib import Path

from tiny_llama import build as build_llama

from conftest import run_json


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
