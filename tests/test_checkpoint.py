"""Checkpoints as their authors write them: headers that lie (each refused with one line naming the file, exit
6, before any tensor is read), embeddings in F16/BF16 beside I64 buffers, and sharded checkpoints (an index
and three shards) read through the header and the wte/wpe ranges of the shards that hold them."""

from __future__ import annotations

import copy
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import registry
from gpt2emb.store import build

from conftest import COMMIT, run_cli, run_json
from fakehub import Content, FakeHub, Repo
from tinymodel import Tiny, gpt2_tensor_shapes, hub_files, serve_real_shapes, virtual_safetensors

FIX = "; save the checkpoint again or use another model"
Header = dict[str, Any]
_DTYPE = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int64"): "I64"}


def layout(tensors: dict[str, np.ndarray], dtypes: dict[str, str] | None = None) -> tuple[Header, bytes]:
    """A safetensors header (a dict, to lie about) and the data it describes, written by hand."""
    header: Header = {"__metadata__": {"format": "pt"}}
    data = bytearray()
    for key, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        dtype = (dtypes or {}).get(key) or _DTYPE[array.dtype]
        header[key] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    return header, bytes(data)


def st_file(header: Header | bytes, data: bytes, length: int | None = None) -> bytes:
    """8-byte little-endian header length (or the given lie), the header, the data."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def honest(tiny: Tiny) -> tuple[Header, bytes]:
    position_ids = np.arange(1024, dtype=np.int64)[None]  # an I64 buffer, as some checkpoints carry
    return layout({**tiny.state(), "position_ids": position_ids})


def serve(hub: FakeHub, tiny: Tiny, repo: str, files: dict[str, Content]) -> None:
    base: dict[str, Content] = dict(hub_files(tiny, weights="none"))
    hub.repos[repo] = Repo(COMMIT, {**base, **files})


def folder_of(tiny: Tiny, folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(tiny.config))
    (folder / "tokenizer.json").write_text(tiny.tokenizer.to_str())
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder.resolve()


def nothing_cached(caches: dict[str, Path]) -> bool:
    root = caches["cache"]
    return not any(root.rglob("manifest.json")) and not any(root.rglob("info/*.json"))


# ---------------------------------------------------------------- each kind of lie, with its exact message


def _lie_length(h: Header, d: bytes) -> bytes:
    return st_file(h, d, length=2**63)


def _lie_length_past_end(h: Header, d: bytes) -> bytes:
    raw = json.dumps(h).encode()
    return st_file(raw, d, length=8 + len(raw) + len(d))  # plausible, but 8 bytes longer than the file


def _lie_not_json(h: Header, d: bytes) -> bytes:
    return st_file(json.dumps(h).encode()[:-40] + b" " * 40, d)  # cut short: the object never closes


def _lie_no_dtype(h: Header, d: bytes) -> bytes:
    del h["h.0.ln_1.weight"]["dtype"]
    return st_file(h, d)


def _lie_unknown_dtype(h: Header, d: bytes) -> bytes:
    h["h.0.ln_1.weight"]["dtype"] = "F33"
    return st_file(h, d)


def _lie_past_end(h: Header, d: bytes) -> bytes:
    h["ln_f.bias"]["data_offsets"] = [len(d), len(d) + 128]  # 32 F32 values, right after the file ends
    return st_file(h, d)


def _lie_shape(h: Header, d: bytes) -> bytes:
    h["h.0.attn.c_attn.weight"]["shape"] = [32, 95]  # its bytes hold [32, 96]
    return st_file(h, d)


def _lie_wte_i64(h: Header, d: bytes) -> bytes:
    h["wte.weight"].update(dtype="I64", shape=[h["wte.weight"]["shape"][0], 16])  # the same bytes as I64
    return st_file(h, d)


def _lie_wte_rank(h: Header, d: bytes) -> bytes:
    h["wte.weight"]["shape"] = [1, *h["wte.weight"]["shape"]]
    return st_file(h, d)


def _lie_wpe_shape(h: Header, d: bytes) -> bytes:
    h["wpe.weight"]["shape"] = [512, 64]
    return st_file(h, d)


def _lie_overlap(h: Header, d: bytes) -> bytes:
    h["ln_f.bias"]["data_offsets"] = list(h["ln_f.weight"]["data_offsets"])  # the same bytes twice
    return st_file(h, d)


def _lie_metadata(h: Header, d: bytes) -> bytes:
    h["__metadata__"] = 5  # safetensors' metadata is an object of strings
    return st_file(h, d)


def _expected(kind: str, label: str, h: Header, d: bytes, size: int, vocab: int) -> str:
    base = size - len(d)  # where the data starts
    c_attn = h["h.0.attn.c_attn.weight"]["data_offsets"]
    damaged = {
        "header length": "its header length (9,223,372,036,854,775,808 bytes) is not one safetensors allows "
        "(2 to 100 MB)",
        "header length past the end": f"its header length says {size:,} bytes, but only {size - 8:,} "
        "follow it",
        "not JSON": "its header is not JSON",
        "missing dtype": "its header gives tensor h.0.ln_1.weight no dtype",
        "unknown dtype": "its header gives tensor h.0.ln_1.weight the dtype 'F33', which safetensors does "
        "not define",
        "offsets past the end": f"tensor ln_f.bias's data_offsets [{len(d)}, {len(d) + 128}] are not a byte "
        f"range inside the file ({size - base:,} bytes of data after the header)",
        "overlapping tensors": "tensors ln_f.weight and ln_f.bias share bytes "
        f"{h['ln_f.weight']['data_offsets']}",
        "metadata not an object": "its header's __metadata__ is not a JSON object of strings",
        "shape vs byte range": f"tensor h.0.attn.c_attn.weight is F32 [32, 95], which takes 12,160 bytes, "
        f"but its data_offsets {c_attn} hold 12,288",
    }
    if kind in damaged:
        return f"{label} is damaged: {damaged[kind]}{FIX}"
    return {
        "wte as I64": f"{label} stores wte.weight as I64; gpt2emb reads embeddings stored as F32, F16 or "
        "BF16: save the model in one of those",
        "wte rank": f"{label} disagrees with its config: wte.weight is [1, {vocab}, 32], config.json says "
        f"[{vocab}, 32]",
        "wpe shape": f"{label} disagrees with its config: wpe.weight is [512, 64], config.json says "
        "[1024, 32]",
    }[kind]


LIES: dict[str, Callable[[Header, bytes], bytes]] = {
    "header length": _lie_length,
    "header length past the end": _lie_length_past_end,
    "not JSON": _lie_not_json,
    "missing dtype": _lie_no_dtype,
    "unknown dtype": _lie_unknown_dtype,
    "offsets past the end": _lie_past_end,
    "shape vs byte range": _lie_shape,
    "overlapping tensors": _lie_overlap,
    "metadata not an object": _lie_metadata,
    "wte as I64": _lie_wte_i64,
    "wte rank": _lie_wte_rank,
    "wpe shape": _lie_wpe_shape,
}


def refused(args: list[str], message: str) -> None:
    """Exit 6 with exactly this one line, as a table and with --json; nothing on stdout."""
    table = run_cli(*args)
    assert (table.exit_code, table.stdout) == (6, ""), table.output
    assert table.stderr.splitlines() == [f"gpt2emb: {message}"]
    as_json = run_cli(*args, "--json")
    assert (as_json.exit_code, as_json.stdout) == (6, ""), as_json.output
    assert as_json.stderr.count("\n") == 1
    assert json.loads(as_json.stderr) == {"error": {"type": "bad_model", "code": 6, "message": message}}


@pytest.mark.parametrize("where", ["folder", "hub"])
@pytest.mark.parametrize("kind", list(LIES))
def test_a_lying_header_is_one_line_exit_6(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, caches: dict[str, Path], kind: str, where: str
) -> None:
    header, data = honest(tiny)
    lied = copy.deepcopy(header)
    checkpoint = LIES[kind](lied, data)
    if where == "folder":
        model = str(folder_of(tiny, tmp_path / "liar", {"model.safetensors": checkpoint}))
        label = f"{model}/model.safetensors"
    else:
        serve(hub, tiny, "someone/liar", {"model.safetensors": checkpoint})
        model, label = "someone/liar", "someone/liar's model.safetensors"
    expected = _expected(kind, label, lied, data, len(checkpoint), len(tiny.vocab))
    refused(["neighbors", "cat", "-m", model], expected)
    assert nothing_cached(caches)
    if where == "hub":  # before any tensor is read: only the header's length and the header were fetched
        ranges = {r[2] for r in hub.requests if r[0] == "GET" and r[1].endswith("model.safetensors")}
        header_end = len(checkpoint) - len(data) - 1
        assert "bytes=0-7" in ranges and ranges <= {"bytes=0-7", f"bytes=8-{header_end}"}


@pytest.mark.parametrize("where", ["folder", "hub"])
def test_f16_and_bf16_embeddings_are_widened_beside_an_i64_buffer(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, where: str
) -> None:
    wte16 = tiny.wte.astype(np.float16)
    wpe_bf16 = (tiny.wpe.view(np.uint32) >> 16).astype(np.uint16)  # bfloat16 by truncation
    state = {**tiny.state(), "wte.weight": wte16, "wpe.weight": wpe_bf16}
    state["position_ids"] = np.arange(1024, dtype=np.int64)[None]
    checkpoint = st_file(*layout(state, {"wpe.weight": "BF16"}))
    if where == "folder":
        model = str(folder_of(tiny, tmp_path / "half", {"model.safetensors": checkpoint}))
    else:
        serve(hub, tiny, "someone/half", {"model.safetensors": checkpoint})
        model = "someone/half"
    m = build.open_model(registry.resolve(model))
    assert m.wte.dtype == m.wpe.dtype == np.float32
    np.testing.assert_array_equal(m.wte, wte16.astype(np.float32))  # widening is exact
    np.testing.assert_array_equal(m.wpe, (wpe_bf16.astype(np.uint32) << 16).view(np.float32))
    np.testing.assert_allclose(m.wpe, tiny.wpe, rtol=2**-7, atol=0)  # BF16 keeps 8 bits of mantissa
    assert run_json("neighbors", "cat", "-m", model)["items"][0]["neighbors"][0]["token"] == " cats"


# ---------------------------------------------------------------- sharded checkpoints


def shard_name(i: int) -> str:
    return f"model-{i:05d}-of-00003.safetensors"


def sharded(tiny: Tiny, extra: dict[str, np.ndarray] | None = None) -> tuple[dict[str, bytes], list[int]]:
    """An index and three shards: wte in the first, wpe in the third, the second holds neither (nor do the
    4 MB causal masks matter: only headers and the wte/wpe ranges may be read); and each shard's header
    size."""
    state = tiny.state(buffers=True)
    groups = [
        {k: v for k, v in state.items() if k == "wte.weight" or k.startswith("h.0.")},
        {**{k: v for k, v in state.items() if k.startswith("h.1.")}, **(extra or {})},
        {k: v for k, v in state.items() if k in ("wpe.weight", "ln_f.weight", "ln_f.bias")},
    ]
    assert sum(len(g) for g in groups) == len(state) + len(extra or {})
    files, header_sizes, weight_map = {}, [], {}
    for i, group in enumerate(groups, 1):
        header, data = layout(group)
        files[shard_name(i)] = st_file(header, data)
        header_sizes.append(len(files[shard_name(i)]) - len(data))
        weight_map.update({k: shard_name(i) for k in group})
    index = {
        "metadata": {"total_size": sum(v.nbytes for g in groups for v in g.values())},
        "weight_map": weight_map,
    }
    files["model.safetensors.index.json"] = json.dumps(index, indent=2).encode()
    return files, header_sizes


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
