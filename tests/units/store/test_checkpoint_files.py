"""store/checkpoint_files.py: where a checkpoint's files lie, which hold the weights, and their headers.

Sharded checkpoints (an index and three shards) are read through their headers and the byte ranges of the
shards that hold the tables, from a folder, the Hub or the HF cache. A lying shard or index is one line,
exit 6, and so is a tensor two shards hold. A model without weights, and a shard not cached offline, are
told."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import registry
from gpt2emb.errors import BadModel, NotCached
from gpt2emb.report import QuietReporter
from gpt2emb.store import build, checkpoint, checkpoint_files, table_rows
from gpt2emb.store import hub as hub_module

from checkpoints import FIX, folder_of, layout, nothing_cached, refused, serve, shard_name, sharded, st_file
from conftest import COMMIT, run_cli, run_json
from fakehub import Content, FakeHub, Repo
from tinymodel import (
    Tiny,
    gpt2_tensor_shapes,
    hub_files,
    safetensors_bytes,
    serve_real_shapes,
    virtual_safetensors,
)


def test_a_sharded_hub_repo_fetches_headers_and_the_embedding_ranges_only(hub: FakeHub, tiny: Tiny) -> None:
    files, header_sizes = sharded(tiny)
    serve(hub, tiny, "someone/sharded", dict(files))
    hub.bytes_served = 0
    m = build.open_model(registry.resolve("someone/sharded"))
    np.testing.assert_array_equal(m.wte, tiny.wte)
    np.testing.assert_array_equal(m.wpe, tiny.wpe)
    got: dict[str, int] = {}  # bytes fetched from each shard, from the Range of every GET
    for method, path, rng in hub.requests:
        if method == "GET" and path.endswith(".safetensors"):
            a, b = (int(x) for x in rng.removeprefix("bytes=").split("-"))
            name = path.rsplit("/", 1)[1]
            got[name] = got.get(name, 0) + b - a + 1
    assert got == {
        shard_name(1): header_sizes[0] + tiny.wte.nbytes,
        shard_name(2): header_sizes[1],  # holds neither table: its header only
        shard_name(3): header_sizes[2] + tiny.wpe.nbytes,
    }
    base = hub_files(tiny, weights="none")
    small = (
        len(files["model.safetensors.index.json"]) + len(base["config.json"]) + len(base["tokenizer.json"])
    )
    shards_size = sum(len(files[shard_name(i)]) for i in (1, 2, 3))
    assert hub.bytes_served <= sum(got.values()) + small
    assert hub.bytes_served < shards_size / 20  # 8.6 MB of shards, 0.2 MB fetched

    doc = run_json("neighbors", "cat", "-m", "someone/sharded")
    assert doc["items"][0]["neighbors"][0]["token"] == " cats"
    hub.requests.clear()
    hub.fault = lambda method, path: "drop"  # warm: no network at all
    assert run_json("neighbors", "cat", "-m", "someone/sharded") == doc
    assert hub.requests == []


def test_a_sharded_folder(tiny: Tiny, tmp_path: Path) -> None:
    files, _ = sharded(tiny)
    folder = folder_of(tiny, tmp_path / "sharded", files)
    m = build.open_model(registry.resolve(str(folder)))
    np.testing.assert_array_equal(m.wte, tiny.wte)
    np.testing.assert_array_equal(m.wpe, tiny.wpe)
    assert run_json("neighbors", "cat", "-m", str(folder))["items"][0]["neighbors"][0]["token"] == " cats"
    files, _ = sharded(Tiny(tiny.tokenizer, tiny.config, -tiny.wte, tiny.wpe, tiny.blocks))
    (folder / shard_name(1)).write_bytes(files[shard_name(1)])  # a new first shard: a new entry
    np.testing.assert_array_equal(build.open_model(registry.resolve(str(folder))).wte, -tiny.wte)


def test_shards_in_the_hf_cache_are_read_offline(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants, hf_hub_download

    files, _ = sharded(tiny)
    serve(hub, tiny, "someone/sharded", dict(files))
    for name in ("config.json", "tokenizer.json", *files):  # downloaded whole earlier, as transformers does
        hf_hub_download("someone/sharded", name)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub.requests.clear()
    m = build.open_model(registry.resolve("someone/sharded"))
    np.testing.assert_array_equal(m.wpe, tiny.wpe)
    assert hub.requests == []


@pytest.mark.parametrize("where", ["folder", "hub"])
def test_tying_reads_every_shards_header(hub: FakeHub, tiny: Tiny, tmp_path: Path, where: str) -> None:
    """An lm_head.weight in the second shard, which holds neither wte nor wpe, is still seen."""
    files, _ = sharded(tiny, extra={"lm_head.weight": tiny.wte * 2})
    if where == "folder":
        model = str(folder_of(tiny, tmp_path / "untied", files))
    else:
        serve(hub, tiny, "someone/untied-shards", dict(files))
        model = "someone/untied-shards"
    check = run_json("tying", "-m", model)["checks"][2]
    n = len(tiny.state(buffers=True)) + 1
    assert check == {
        "name": "checkpoint",
        "passed": False,
        "detail": f"model.safetensors.index.json stores {n} tensors and a separate lm_head.weight",
    }


def test_sizes_verify_counts_every_shard(hub: FakeHub) -> None:
    hub.reset()
    serve_real_shapes(hub)
    shapes = gpt2_tensor_shapes(50257, 1600, 1024, 48)  # gpt2-xl, split in three as its real repo could be
    keys = list(shapes)
    files: dict[str, Content] = {"config.json": hub.repos["openai-community/gpt2-xl"].files["config.json"]}
    weight_map = {}
    for i in (1, 2, 3):
        part = keys[(i - 1) * len(keys) // 3 : i * len(keys) // 3]
        files[shard_name(i)] = virtual_safetensors({k: shapes[k] for k in part})
        weight_map.update({k: shard_name(i) for k in part})
    files["model.safetensors.index.json"] = json.dumps({"weight_map": weight_map}).encode()
    hub.repos["openai-community/gpt2-xl"] = Repo("b" * 40, files)
    result = run_cli("sizes", "--verify", "--json")
    assert result.exit_code == 0, result.output
    assert [m["verified"] for m in json.loads(result.stdout)["models"]] == [True] * 4
    headers_read = {p.rsplit("/", 1)[1] for m, p, _ in hub.requests if m == "GET" and "gpt2-xl/" in p}
    assert {shard_name(i) for i in (1, 2, 3)} <= headers_read
    assert hub.bytes_served < 4 * 200_000  # headers and configs only, for 6.4 GB of checkpoints


@pytest.mark.parametrize("where", ["folder", "hub"])
@pytest.mark.parametrize("lie", ["dtype in shard 2", "missing shard", "index not JSON", "index disagrees"])
def test_a_lying_shard_or_index_is_one_line_exit_6(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, caches: dict[str, Path], where: str, lie: str
) -> None:
    files, _ = sharded(tiny)
    index = json.loads(files["model.safetensors.index.json"])
    if lie == "dtype in shard 2":
        header, data = layout({k: v for k, v in tiny.state(buffers=True).items() if k.startswith("h.1.")})
        header["h.1.ln_2.bias"]["dtype"] = "float32"
        files[shard_name(2)] = st_file(header, data)
    elif lie == "missing shard":
        del files[shard_name(2)]
    elif lie == "index not JSON":
        files["model.safetensors.index.json"] = b'{"weight_map": '
    else:
        index["weight_map"]["ln_f.bias"] = shard_name(1)
        files["model.safetensors.index.json"] = json.dumps(index).encode()
    if where == "folder":
        model = str(folder_of(tiny, tmp_path / "liar", files))
        label = f"{model}/" + "{}"
    else:
        serve(hub, tiny, "someone/liar", dict(files))
        model, label = "someone/liar", "someone/liar's {}"
    index_label = label.format("model.safetensors.index.json")
    expected = {
        "dtype in shard 2": f"{label.format(shard_name(2))} is damaged: its header gives tensor "
        f"h.1.ln_2.bias the dtype 'float32', which safetensors does not define{FIX}",
        "missing shard": f"{index_label} is damaged: it names {shard_name(2)}, which the model does not "
        f"hold{FIX}",
        "index not JSON": f"{index_label} is damaged: it is not JSON{FIX}",
        "index disagrees": f"{index_label} is damaged: it puts tensor ln_f.bias in {shard_name(1)}, whose "
        f"header lacks it{FIX}",
    }[lie]
    refused(["neighbors", "cat", "-m", model], expected)
    assert nothing_cached(caches)


@pytest.mark.parametrize("where", ["folder", "hub"])
def test_a_tensor_that_two_shards_hold(hub: FakeHub, tiny: Tiny, tmp_path: Path, where: str) -> None:
    """ln_f.bias in shard 2 as well as in shard 3, where the index puts it: the later one names the first."""
    files, _ = sharded(tiny, extra={"ln_f.bias": tiny.blocks["ln_f.bias"]})
    if where == "folder":
        model = str(folder_of(tiny, tmp_path / "twice", files))
        label = f"{model}/{shard_name(3)}"
    else:
        serve(hub, tiny, "someone/twice", dict(files))
        model, label = "someone/twice", f"someone/twice's {shard_name(3)}"
    refused(
        ["neighbors", "cat", "-m", model],
        f"{label} is damaged: it holds tensor ln_f.bias, which {shard_name(2)} holds too{FIX}",
    )


def not_cached_offline(repo: str) -> str:
    return (
        f"{repo} is not cached and HF_HUB_OFFLINE is set: run once with the network to fetch it, "
        "or try the tiny example model (python docs/examples/tiny_gpt2.py, then -m ./tiny-gpt2)"
    )


def test_a_weight_file_gets_a_download_bar_and_a_small_file_none(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, bool]] = []

    def file(repo: str, filename: str, revision: str, bar: bool = False) -> Path | None:
        asked.append((filename, bar))
        return None

    monkeypatch.setattr(hub_module, "file", file)
    ref = registry.resolve("someone/model")
    for name in ("config.json", "model.safetensors", "pytorch_model.bin", "model.safetensors.index.json"):
        assert checkpoint_files.source_file(ref, COMMIT, name) is None
    assert asked == [
        ("config.json", False),
        ("model.safetensors", True),
        ("pytorch_model.bin", True),
        ("model.safetensors.index.json", False),
    ]


def test_weights_gone_from_a_folder_after_its_header_was_read(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    (folder / "model.safetensors").unlink()
    with pytest.raises(BadModel) as e:
        table_rows.embeddings(ref, info, QuietReporter())
    assert e.value.message == f"{folder}/model.safetensors is gone; the folder changed while it was read"


def test_weights_not_cached_offline_after_the_header_was_read(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    serve(hub, tiny, "someone/model", {"model.safetensors": safetensors_bytes(tiny.state())})
    ref = registry.resolve("someone/model")
    info = checkpoint.read_info(ref, COMMIT)  # the header by ranges: the file itself is not in the HF cache
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(NotCached) as e:
        table_rows.embeddings(ref, info, QuietReporter())
    assert e.value.message == not_cached_offline("someone/model")


@pytest.mark.parametrize("where", ["folder", "hub", "hub offline"])
def test_a_model_without_weights(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Online or in a folder the model is refused, naming where the weights should be; offline, with its
    config cached and no weights, it is not cached."""
    from huggingface_hub import constants, hf_hub_download

    if where == "folder":
        model = str(folder_of(tiny, tmp_path / "empty", {}))
    else:
        serve(hub, tiny, "someone/empty", {})
        model = "someone/empty"
    ref = registry.resolve(model)
    if where == "hub offline":
        hf_hub_download("someone/empty", "config.json", revision=COMMIT)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        with pytest.raises(NotCached) as offline:
            checkpoint.read_info(ref, COMMIT)
        assert offline.value.message == not_cached_offline("someone/empty")
        return
    with pytest.raises(BadModel) as e:
        checkpoint.read_info(ref, COMMIT)
    assert e.value.message == (
        f"{model} holds no model.safetensors or pytorch_model.bin (nor a model.safetensors.index.json of "
        "shards); save the model's weights there"
    )


def test_a_shard_not_cached_offline(hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants, hf_hub_download

    files, _ = sharded(tiny)
    serve(hub, tiny, "someone/sharded", dict(files))
    for name in ("config.json", "model.safetensors.index.json", shard_name(1), shard_name(3)):
        hf_hub_download("someone/sharded", name, revision=COMMIT)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(NotCached) as e:
        checkpoint.read_info(registry.resolve("someone/sharded"), COMMIT)
    assert e.value.message == not_cached_offline("someone/sharded")


@pytest.mark.parametrize(
    "index", [{}, {"weight_map": {}}, {"weight_map": ["model.safetensors"]}, []], ids=repr
)
def test_an_index_without_a_weight_map(tiny: Tiny, tmp_path: Path, index: Any) -> None:
    files = {"model.safetensors.index.json": json.dumps(index).encode()}
    folder = folder_of(tiny, tmp_path / "model", files)
    with pytest.raises(BadModel) as e:
        checkpoint.read_info(registry.resolve(str(folder)), "local")
    assert e.value.message == (
        f"{folder}/model.safetensors.index.json is damaged: it has no weight_map (tensor name -> shard file)"
        f"{FIX}"
    )


@pytest.mark.parametrize("shard", ["../model.safetensors", "model.bin", 5, ""], ids=repr)
def test_an_index_naming_a_shard_elsewhere(tiny: Tiny, tmp_path: Path, shard: Any) -> None:
    files = {"model.safetensors.index.json": json.dumps({"weight_map": {"wte.weight": shard}}).encode()}
    folder = folder_of(tiny, tmp_path / "model", files)
    with pytest.raises(BadModel) as e:
        checkpoint.read_info(registry.resolve(str(folder)), "local")
    assert e.value.message == (
        f"{folder}/model.safetensors.index.json is damaged: it names the shard {shard!r}, which is not a "
        f".safetensors file beside it{FIX}"
    )
