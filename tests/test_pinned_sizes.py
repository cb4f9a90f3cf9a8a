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
