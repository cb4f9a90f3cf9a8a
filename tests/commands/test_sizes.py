"""`sizes` (and --verify): the parameter counts of each model against the published totals and transformers'
own models, the table, sharded and pickle checkpoints, the options that need or refuse -m."""

import json
import math
import struct

import pytest

import tiny_gpt_neo
import tiny_roberta
from gpt2emb import registry
from gpt2emb.core.sizes import sizes
from gpt2emb.families.gpt2 import param_counts
from gpt2emb.registry import Shape
from tiny_gpt_neo import TinyGPTNeo
from tiny_roberta import TinyRoberta

import tinymodel
from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, gpt2_tensor_shapes, hub_files, serve_real_shapes

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


@pytest.mark.parametrize("dtype, width", [("fp32", 4), ("fp16", 2)])
def test_the_table_says_its_mb_are_10_to_the_6_bytes(dtype: str, width: int) -> None:
    """Exercise 2 is worked by hand: the table's MB must be the one it says it is, not MiB."""
    result = run_cli("sizes", "--dtype", dtype)
    assert "MB: 10^6 bytes (a MiB, 2^20 bytes, is 1.048576 MB)" in result.stdout
    xl = registry.find("xl")
    assert xl is not None
    n = xl.shape.vocab_size * xl.shape.d_model + xl.shape.n_positions * xl.shape.d_model
    row = next(line for line in result.stdout.splitlines() if line.strip().startswith("wte+wpe MB"))
    assert row.split()[-1] == f"{n * width / 1e6:,.1f}"  # 328.2 for fp32: MiB would give 313.0


# ---------------------------------------------------------------- sizes -m: any model, from its headers


@pytest.fixture(scope="module")
def roberta(tmp_path_factory: pytest.TempPathFactory) -> TinyRoberta:
    return tiny_roberta.build(tmp_path_factory.mktemp("roberta"))


@pytest.fixture(scope="module")
def neo(tmp_path_factory: pytest.TempPathFactory) -> TinyGPTNeo:
    return tiny_gpt_neo.build(tmp_path_factory.mktemp("gpt_neo"))


def header_size(safetensors: bytes) -> int:
    (n,) = struct.unpack("<Q", safetensors[:8])
    return 8 + int(n)


def weights_fetched(hub: FakeHub) -> int:
    """Bytes asked of any .safetensors file, from the Range of every GET."""
    total = 0
    for method, path, rng in hub.requests:
        if method == "GET" and path.endswith(".safetensors"):
            a, b = (int(x) for x in rng.removeprefix("bytes=").split("-"))
            total += b - a + 1
    return total


@pytest.mark.parametrize("where", ["hub", "folder"])
def test_sizes_of_the_tiny_roberta_are_transformers_own_count(
    hub: FakeHub, roberta: TinyRoberta, where: str
) -> None:
    """The header's count agrees with RobertaForMaskedLM's own parameters; the position table's 66 rows (64
    positions) count whole; only the config and the header are fetched."""
    hub.repos["FacebookAI/roberta-base"] = Repo(COMMIT, roberta.files())
    model = "roberta-base" if where == "hub" else str(roberta.folder)
    doc = run_json("sizes", "-m", model)
    assert doc["source"] == "checkpoint"
    (m,) = doc["models"]
    total = sum(p.numel() for p in roberta.model().parameters())
    vocab, d = roberta.wte.shape
    rows = tiny_roberta.N_POSITIONS + 2
    assert m["total_params"] == total
    assert (m["wte_params"], m["wpe_params"], m["output_params"]) == (vocab * d, rows * d, 0)
    assert (m["n_positions"], m["position_rows"], m["family"]) == (tiny_roberta.N_POSITIONS, rows, "roberta")
    assert (m["block_params"], m["final_ln_params"], m["verified"]) == (None, None, None)
    assert m["wte_share"] == pytest.approx(vocab * d / total, rel=1e-12)
    assert m["embeddings_mb"] == pytest.approx((vocab + rows) * d * 4 / 1e6)
    assert m["total_mb"] == pytest.approx(total * 4 / 1e6)
    assert m["commit"] == (COMMIT if where == "hub" else None)
    half = run_json("sizes", "-m", model, "--dtype", "fp16")["models"][0]
    assert half["total_mb"] == pytest.approx(m["total_mb"] / 2)
    if where == "hub":
        assert weights_fetched(hub) == header_size(roberta.files()["model.safetensors"])
    table = run_cli("sizes", "-m", model)
    assert table.exit_code == 0 and f"{total:,}" in table.stdout and f"{rows:,}" in table.stdout
    assert "tied to wte" in table.stdout


def test_sizes_side_by_side_gpt_neo_and_roberta(roberta: TinyRoberta, neo: TinyGPTNeo) -> None:
    """GPT-Neo's output layer is tied (not stored): transformers' count, where the header holds no lm_head."""
    doc = run_json("sizes", "-m", str(neo.folder), "-m", str(roberta.folder))
    got = {m["family"]: m["total_params"] for m in doc["models"]}
    assert got == {
        "gpt_neo": sum(p.numel() for p in neo.model().parameters()),
        "roberta": sum(p.numel() for p in roberta.model().parameters()),
    }
    table = run_cli("sizes", "-m", str(neo.folder), "-m", str(roberta.folder))
    assert table.exit_code == 0 and "gpt_neo" in table.stdout and "roberta" in table.stdout


@pytest.mark.parametrize("tie", [True, False])
def test_sizes_of_a_sharded_checkpoint_counts_every_shard(hub: FakeHub, tiny: Tiny, tie: bool) -> None:
    """Three shards with the 4 MB causal masks (buffers, not counted) and an lm_head.weight in the middle one:
    a separate output layer when the config unties it, the token table stored twice when tied."""
    from checkpoints import serve, sharded  # here: test_checkpoint imports this module

    files, header_sizes = sharded(tiny, extra={"lm_head.weight": tiny.wte * 2})
    files["config.json"] = json.dumps({**tiny.config, "tie_word_embeddings": tie}).encode()
    serve(hub, tiny, "someone/sharded", dict(files))
    (m,) = run_json("sizes", "-m", "someone/sharded")["models"]
    vocab, d = tiny.wte.shape
    formula = param_counts(Shape(vocab, d, tinymodel.N_POSITIONS, tinymodel.N_LAYER, 2))["total_params"]
    output = 0 if tie else vocab * d
    assert (m["total_params"], m["output_params"]) == (formula + output, output)
    assert m["wte_params"] == vocab * d and m["wpe_params"] == tinymodel.N_POSITIONS * d
    assert weights_fetched(hub) == sum(header_sizes)


def test_sizes_of_a_pickle_checkpoint_is_refused(hub: FakeHub, tiny: Tiny) -> None:
    hub.repos["someone/pickled"] = Repo(COMMIT, hub_files(tiny, weights="bin"))
    result = run_cli("sizes", "-m", "someone/pickled")
    assert result.exit_code == 6
    assert "pytorch_model.bin, a pickle with no header to count from" in result.stderr
    assert "use a model saved as safetensors" in result.stderr


def test_sizes_options_that_need_or_refuse_m() -> None:
    both = run_cli("sizes", "-m", "gpt2", "--verify")
    assert both.exit_code == 2 and "-m counts from the headers already" in both.stderr
    alone = run_cli("sizes", "--revision", "v1")
    assert alone.exit_code == 2 and "--revision is for a model given with -m" in alone.stderr
