"""A config whose model does not have its checkpoint's tensor shapes (n_inner, intermediate_size) is one
line with exit 6 naming the tensor, both shapes, the config file, the weights file and the fix, from every
command that builds the model (tying on the meta device, tying --load and --grad, context), before any
weight is loaded: never a 130-billion-parameter model reported as tied, never transformers' "look at the
above report" about a report gpt2emb silences.

Names are matched across a prefix (a hub GPT-2's h.0... is the model's transformer.h.0..., a BertModel's
encoder... is BertForMaskedLM's bert.encoder...), so good models of those shapes still pass.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpt2emb import heavy
from gpt2emb.errors import BadModel
from test_damaged_model_files import CONTEXT, model, one_line
from tiny_bert import build as build_bert

from conftest import run_cli, serve
from fakehub import FakeHub
from tinymodel import Tiny, safetensors_bytes

D = 32  # the tiny GPT-2's width: its c_fc is [32, 128]
BUILDERS = [("tying",), ("tying", "--load"), ("tying", "--grad", "the cat sat"), CONTEXT]
IDS = ["tying", "load", "grad", "context"]


def disagrees(
    line: str, folder: Path, weights: str, key: str, model_shape: list[int], saved: list[int]
) -> None:
    where = folder.resolve()
    assert line == (
        f"gpt2emb: {where}/config.json describes a model whose {key} is {model_shape}, but {where}/{weights} "
        f"holds it as {saved}: the config and the weights disagree; save the model again"
    )


def test_a_config_of_130_billion_parameters_over_tiny_weights_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    folder = model(tiny, tmp_path / "m", n_inner=10**9)
    line = one_line(run_cli("tying", "-m", str(folder)))
    key = "transformer.h.0.mlp.c_fc.weight"  # the first tensor that differs, in the model's order
    disagrees(line, folder, "model.safetensors", key, [D, 10**9], [D, 4 * D])
    assert "130,000" not in line


@pytest.mark.parametrize("weights", ["safetensors", "bin"])
@pytest.mark.parametrize("command", BUILDERS, ids=IDS)
def test_n_inner_that_the_weights_do_not_have(
    tiny: Tiny, tmp_path: Path, weights: str, command: tuple[str, ...]
) -> None:
    folder = model(tiny, tmp_path / "m", weights, n_inner=2 * D)
    line = one_line(run_cli(*command, "-m", str(folder)))
    file = "model.safetensors" if weights == "safetensors" else "pytorch_model.bin"
    disagrees(line, folder, file, "transformer.h.0.mlp.c_fc.weight", [D, 2 * D], [D, 4 * D])
    assert "above report" not in line


def sharded_folder(tiny: Tiny, folder: Path, **config: Any) -> Path:
    """The tiny GPT-2 in two shards (wte and the first block; the rest) and their index."""
    model(tiny, folder, "none", **config)
    state = tiny.state(prefix="transformer.")
    first = {
        k: v for k, v in state.items() if k == "transformer.wte.weight" or k.startswith("transformer.h.0.")
    }
    groups = [first, {k: v for k, v in state.items() if k not in first}]
    weight_map = {}
    for i, group in enumerate(groups, 1):
        name = f"model-{i:05d}-of-00002.safetensors"
        (folder / name).write_bytes(safetensors_bytes(group))
        weight_map.update(dict.fromkeys(group, name))
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": weight_map})
    )
    return folder


@pytest.mark.parametrize("command", [("tying",), CONTEXT], ids=["tying", "context"])
def test_every_shard_s_header_is_read(tiny: Tiny, tmp_path: Path, command: tuple[str, ...]) -> None:
    folder = sharded_folder(tiny, tmp_path / "m", n_inner=2 * D)
    line = one_line(run_cli(*command, "-m", str(folder)))
    disagrees(
        line, folder, "model.safetensors.index.json", "transformer.h.0.mlp.c_fc.weight", [D, 64], [D, 128]
    )
    good = sharded_folder(tiny, tmp_path / "good")
    assert run_cli(*command, "-m", str(good)).exit_code == 0


def test_a_hub_checkpoint_without_the_prefix(hub: FakeHub, tiny: Tiny, tiny_files: dict[str, bytes]) -> None:
    """openai-community/gpt2's names have no transformer. prefix, and its file carries the causal masks.
    (context fetches the weights before it loads them, saying so in a note: the refusal is its last line.)"""
    assert run_cli("tying", "--load", "-m", "openai-community/gpt2").exit_code == 0
    config = json.dumps({**tiny.config, "n_inner": 2 * D}).encode()
    serve(hub, {"someone/wider": {**tiny_files, "config.json": config}})
    assert one_line(run_cli("tying", "-m", "someone/wider")).endswith("save the model again")
    for command in (("tying",), CONTEXT):
        result = run_cli(*command, "-m", "someone/wider")
        assert result.exit_code == 6, result.stdout + result.stderr
        line = result.stderr.strip().splitlines()[-1]
        assert line.startswith(
            "gpt2emb: someone/wider's config.json describes a model whose h.0.mlp.c_fc.weight"
        ), line
        assert (
            "is [32, 64], but " in line and "model.safetensors holds it as [32, 128]: the config and" in line
        )


def test_more_positions_than_wpe_has_rows_is_still_refused_first(tiny: Tiny, tmp_path: Path) -> None:
    folder = model(tiny, tmp_path / "m", n_positions=2048, n_ctx=2048)
    for command in (("tying",), CONTEXT):
        line = one_line(run_cli(*command, "-m", str(folder)))
        assert "transformer.wpe.weight is [1024, 32], config.json says [2048, 32]" in line, line


@pytest.mark.parametrize("base", [False, True], ids=["BertForMaskedLM", "BertModel"])
def test_bert_names_match_across_the_bert_prefix(tmp_path: Path, base: bool) -> None:
    """A BertModel's checkpoint names lack BertForMaskedLM's "bert." and hold a pooler it has not: a good
    one passes every check, one whose config says another intermediate_size is refused."""
    bert = build_bert(tmp_path / "bert", base)
    folder = str(bert.folder)
    for command in (("tying",), ("tying", "--load"), ("context", "king", "the king sat", "a king ran")):
        result = run_cli(*command, "-m", folder)
        assert result.exit_code == 0, result.stdout + result.stderr
    bad = shutil.copytree(bert.folder, tmp_path / "bad")  # a folder of its own: no "cached anew" note
    config = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**config, "intermediate_size": 48}))
    key = ("" if base else "bert.") + "encoder.layer.0.intermediate.dense.weight"
    for command in (("tying",), ("context", "king", "the king sat", "a king ran")):
        line = one_line(run_cli(*command, "-m", str(bad)))
        disagrees(line, bad, "model.safetensors", key, [48, 32], [64, 32])


class Meta:
    """A model as check_shapes sees it: its state dict's names and shapes."""

    def __init__(self, shapes: dict[str, tuple[int, ...]]) -> None:
        self.shapes = shapes

    def state_dict(self) -> dict[str, Any]:
        return {k: SimpleNamespace(shape=v) for k, v in self.shapes.items()}


def test_names_that_match_nothing_or_several_are_skipped() -> None:
    model = Meta({"a.x.weight": (2,), "b.x.weight": (3,), "a.y.weight": (4,), "y.weight": (5,)})
    check = heavy.check_shapes
    check(model, {"x.weight": (9,), "pooler.weight": (9,), "weight": (9,)}, "c", "w")  # several, none
    check(model, {"y.weight": (5,)}, "c", "w")  # equal wins over the a.y.weight it ends
    check(model, {"a.x.weight": (2,), "x.y.weight": (9,)}, "c", "w")
    with pytest.raises(
        BadModel, match=r"c describes a model whose x.weight is \[4\], but w holds it as \[9\]"
    ):
        check(Meta({"a.x.weight": (4,)}), {"x.weight": (9,)}, "c", "w")
    with pytest.raises(BadModel, match=r"whose a.y.weight is \[4\], but w holds it as \[1\]"):
        check(model, {"y.weight": (5,), "a.y.weight": (1,)}, "c", "w")
