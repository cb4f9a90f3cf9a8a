import json
import math

import pytest

from gpt2emb import registry
from gpt2emb.sizes import param_counts, sizes

from conftest import run_cli
from fakehub import Content, FakeHub, Repo
from tinymodel import gpt2_tensor_shapes, virtual_safetensors

PUBLISHED_TOTALS = {
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
}


def test_totals_are_the_published_ones() -> None:
    result = sizes()
    assert {m.name: m.total_params for m in result.models} == PUBLISHED_TOTALS
    small = result.models[0]
    assert small.wte_params == 50257 * 768 and small.wpe_params == 1024 * 768
    assert round(100 * small.wte_share, 1) == 31.0
    assert small.embeddings_mb == pytest.approx((50257 + 1024) * 768 * 4 / 1e6)
    assert sizes("fp16").models[0].embeddings_mb == pytest.approx(small.embeddings_mb / 2)


@pytest.mark.parametrize("spec", registry.MODELS, ids=lambda m: m.name)
def test_counts_match_transformers_own_model(spec: registry.ModelSpec) -> None:
    """The arithmetic agrees with GPT2LMHeadModel built on the meta device at each published shape."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    s = spec.shape
    config = GPT2Config(
        vocab_size=s.vocab_size,
        n_embd=s.d_model,
        n_positions=s.n_positions,
        n_layer=s.n_layer,
        n_head=s.n_head,
    )
    with torch.device("meta"):
        model = GPT2LMHeadModel(config)
    assert sum(p.numel() for p in model.parameters()) == param_counts(s)["total_params"]


def test_wte_is_the_largest_single_piece() -> None:
    for spec in registry.MODELS:
        s = spec.shape
        shapes = gpt2_tensor_shapes(s.vocab_size, s.d_model, s.n_positions, s.n_layer)
        params = {k: math.prod(v) for k, v in shapes.items() if not k.endswith("attn.bias")}
        assert max(params, key=lambda k: params[k]) == "wte.weight"


def serve_real_shapes(hub: FakeHub, tamper: str | None = None) -> None:
    for spec in registry.MODELS:
        s = spec.shape
        d = s.d_model + (8 if spec.name == tamper else 0)  # checkpoint and config agree, not with us
        config = {
            "model_type": "gpt2",
            "vocab_size": s.vocab_size,
            "n_embd": d,
            "n_positions": 1024,
            "n_layer": s.n_layer,
            "n_head": s.n_head,
        }
        files: dict[str, Content] = {
            "config.json": json.dumps(config).encode(),
            "model.safetensors": virtual_safetensors(gpt2_tensor_shapes(s.vocab_size, d, 1024, s.n_layer)),
        }
        hub.repos[spec.repo] = Repo(f"{abs(hash(spec.name)):040d}"[:40], files)


def test_verify_reads_only_headers_and_agrees(hub: FakeHub) -> None:
    hub.reset()
    serve_real_shapes(hub)
    result = run_cli("sizes", "--verify", "--json")
    assert result.exit_code == 0, result.output
    assert [m["verified"] for m in json.loads(result.stdout)["models"]] == [True] * 4
    assert hub.bytes_served < 4 * 200_000  # headers and configs only, for 6.4 GB of checkpoints


def test_verify_reports_a_mismatch(hub: FakeHub) -> None:
    hub.reset()
    serve_real_shapes(hub, tamper="gpt2-large")
    result = run_cli("sizes", "--verify")
    assert result.exit_code != 0
    assert "MISMATCH" in result.stdout
    assert "disagrees" in result.stderr


def test_sizes_table_at_80_columns() -> None:
    result = run_cli("sizes")
    assert result.exit_code == 0
    assert "124,439,808" in result.stdout and "1,557,611,200" in result.stdout and "31.0%" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
