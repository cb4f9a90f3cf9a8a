"""store/whole_weights.py: every weight file of a checkpoint, for running the whole model.

A sharded Hub model's weights are fetched once, a folder model is its own weights folder, and weights the Hub
no longer serves are told as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpt2emb import registry
from gpt2emb.errors import BadModel, NotCached
from gpt2emb.store import checkpoint, whole_weights

from checkpoints import folder_of, serve, shard_name, sharded
from conftest import COMMIT
from fakehub import FakeHub
from tinymodel import Tiny, safetensors_bytes


def test_the_whole_of_a_sharded_hub_model_is_fetched_once(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What running the whole model needs: the index (in the HF cache since its header was read) and every
    shard; the shards' sizes while missing, nothing once fetched into the HF cache's snapshot, which then
    holds them all; offline, what is missing is named."""
    from huggingface_hub import constants

    files, _ = sharded(tiny)
    serve(hub, tiny, "someone/sharded", dict(files))
    ref = registry.resolve("someone/sharded")
    info = checkpoint.read_info(ref, COMMIT)
    shards = [shard_name(1), shard_name(2), shard_name(3)]
    assert whole_weights.weight_files(info) == ["model.safetensors.index.json", *shards]
    assert whole_weights.missing_weights(ref, info) == {name: len(files[name]) for name in shards}
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(NotCached) as e:
        whole_weights.missing_weights(ref, info)
    assert e.value.message == (
        f"this runs the whole of someone/sharded, and its weights ({', '.join(shards)}) are not in the "
        "Hugging Face cache while HF_HUB_OFFLINE is set: run once with the network to fetch them"
    )
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    folder = whole_weights.weights_folder(ref, info)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["config.json", "model.safetensors.index.json", *shards]
    )
    for name in shards:
        assert (folder / name).read_bytes() == files[name]
    assert whole_weights.missing_weights(ref, info) == {}
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert whole_weights.missing_weights(ref, info) == {}
    assert whole_weights.weights_folder(ref, info) == folder


def test_a_folder_model_is_its_own_weights_folder(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    assert whole_weights.weight_files(info) == ["model.safetensors"]
    assert whole_weights.missing_weights(ref, info) == {}
    assert whole_weights.weights_folder(ref, info) == folder


def test_weights_the_hub_no_longer_serves(hub: FakeHub, tiny: Tiny) -> None:
    serve(hub, tiny, "someone/model", {"model.safetensors": safetensors_bytes(tiny.state())})
    ref = registry.resolve("someone/model")
    info = checkpoint.read_info(ref, COMMIT)
    serve(hub, tiny, "someone/model", {})  # the same commit, its weights gone
    said = f"the Hub no longer serves model.safetensors of someone/model at commit {COMMIT[:12]}: the commit "
    said += "may be gone"
    with pytest.raises(BadModel) as e:
        whole_weights.missing_weights(ref, info)
    assert e.value.message == said
    with pytest.raises(BadModel) as e:
        whole_weights.weights_folder(ref, info)
    assert e.value.message == said
