"""What a checkpoint holds: its config, its safetensors header (checked), and the wte/wpe tensors.

A checkpoint is a local folder or a Hub repo at one commit; nothing here caches anything (cache.py does).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb import hub
from gpt2emb.errors import BadModel, NotCached
from gpt2emb.hub import ReadRange
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.report import Reporter, Task

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
WTE_KEYS = ("wte.weight", "transformer.wte.weight")
WPE_KEYS = ("wpe.weight", "transformer.wpe.weight")


@dataclass(frozen=True)
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]
    start: int  # absolute byte offsets in the weights file
    end: int


@dataclass(frozen=True)
class CheckpointInfo:
    """What a model's config and checkpoint header say, without reading any weights."""

    name: str
    repo: str | None
    commit: str
    config: dict[str, Any]
    weights_file: str
    tensors: dict[str, TensorInfo]  # empty for a pickle checkpoint: its keys are not known without loading it


# ---------------------------------------------------------------- config


def shape_of(config: dict[str, Any], name: str) -> Shape:
    model_type = config.get("model_type")
    if model_type != "gpt2":
        raise BadModel(
            f"{name} is not a GPT-2 model (its config says model_type={model_type!r}); use a GPT-2 model"
        )
    try:
        return Shape(
            vocab_size=int(config["vocab_size"]),
            d_model=int(config["n_embd"]),
            n_positions=int(config["n_positions"]),
            n_layer=int(config["n_layer"]),
            n_head=int(config["n_head"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise BadModel(
            f"{name}'s config.json lacks a GPT-2 field ({e}); the model folder looks damaged"
        ) from None


# ---------------------------------------------------------------- reading safetensors over any byte source

_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F64": "<f8"}


def parse_header(read: ReadRange, name: str) -> dict[str, TensorInfo]:
    (n,) = struct.unpack("<Q", read(0, 8, None))
    if not 2 <= n <= 100_000_000:
        raise BadModel(f"{name}'s model.safetensors has no valid header; the file is damaged")
    try:
        header = json.loads(read(8, n, None))
    except ValueError:
        raise BadModel(f"{name}'s model.safetensors header is not JSON; the file is damaged") from None
    base = 8 + n
    return {
        key: TensorInfo(
            v["dtype"], tuple(v["shape"]), base + v["data_offsets"][0], base + v["data_offsets"][1]
        )
        for key, v in header.items()
        if key != "__metadata__"
    }


def find_key(tensors: dict[str, TensorInfo], keys: tuple[str, ...], name: str) -> str:
    for key in keys:
        if key in tensors:
            return key
    raise BadModel(f"{name}'s checkpoint has no {keys[0]} tensor; it is not a GPT-2 checkpoint")


def read_tensor(read: ReadRange, info: TensorInfo, task: Task | None) -> np.ndarray:
    if info.dtype not in _DTYPES:
        raise BadModel(f"embeddings stored as {info.dtype} are not supported (F32, F16, BF16 are)")
    raw = np.frombuffer(read(info.start, info.end - info.start, task), dtype=_DTYPES[info.dtype])
    if info.dtype == "BF16":
        raw = (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32, copy=False).reshape(info.shape)  # F32: the downloaded buffer itself


def local_reader(path: Path) -> ReadRange:
    def read(start: int, length: int, task: Task | None) -> bytearray:
        data = bytearray(length)
        with path.open("rb") as f:
            f.seek(start)
            got = f.readinto(data)
        if got != length:
            raise BadModel(f"{path} is shorter than its header says; the file is truncated")
        if task:
            task.advance(length)
        return data

    return read


# ---------------------------------------------------------------- checkpoint info (config + header)


def source_file(ref: ModelRef, commit: str, filename: str) -> Path | None:
    if ref.folder is not None:
        p = ref.folder / filename
        return p if p.is_file() else None
    assert ref.repo is not None
    return hub.file(ref.repo, filename, commit, bar=filename in WEIGHT_FILES)


def _weights_reader(ref: ModelRef, commit: str) -> tuple[str, ReadRange | None]:
    """Where the weights are: a safetensors file read locally or by ranges, or else a pickle checkpoint."""
    if ref.folder is not None:
        for filename in WEIGHT_FILES:
            if (ref.folder / filename).is_file():
                reader = local_reader(ref.folder / filename) if filename.endswith(".safetensors") else None
                return filename, reader
        raise BadModel(
            f"{ref.folder} holds no model.safetensors or pytorch_model.bin; save the model's weights there"
        )
    assert ref.repo is not None
    cached = hub.cached(ref.repo, "model.safetensors", commit) is not None
    if not cached and hub.offline():
        raise NotCached(hub.not_cached(ref.repo))
    if cached or hub.has(ref.repo, "model.safetensors", commit):
        return "model.safetensors", _safetensors_reader(ref, commit)
    if hub.has(ref.repo, "pytorch_model.bin", commit):
        return "pytorch_model.bin", None
    raise BadModel(f"{ref.repo} has no model.safetensors or pytorch_model.bin; it holds no GPT-2 weights")


def _safetensors_reader(ref: ModelRef, commit: str) -> ReadRange:
    """model.safetensors from the folder, or the HF cache when it is there, else by ranges from the Hub."""
    if ref.folder is not None:
        return local_reader(ref.folder / "model.safetensors")
    assert ref.repo is not None
    cached = hub.cached(ref.repo, "model.safetensors", commit)
    if cached is not None:
        return local_reader(cached)
    if hub.offline():
        raise NotCached(hub.not_cached(ref.repo))
    return hub.range_reader(ref.repo, "model.safetensors", commit)


def info_to_json(info: CheckpointInfo) -> dict[str, Any]:
    return {
        "commit": info.commit,
        "config": info.config,
        "weights_file": info.weights_file,
        "tensors": {k: [t.dtype, list(t.shape), t.start, t.end] for k, t in info.tensors.items()},
    }


def info_from_json(ref: ModelRef, raw: dict[str, Any]) -> CheckpointInfo:
    tensors = {k: TensorInfo(d, tuple(s), a, b) for k, (d, s, a, b) in raw["tensors"].items()}
    return CheckpointInfo(ref.name, ref.repo, raw["commit"], raw["config"], raw["weights_file"], tensors)


def read_info(ref: ModelRef, commit: str) -> CheckpointInfo:
    config_path = source_file(ref, commit, "config.json")
    if config_path is None:
        raise BadModel(f"{ref.name} has no config.json: it is not a transformers model")
    try:
        config = json.loads(config_path.read_text())
    except (OSError, ValueError):
        raise BadModel(f"{ref.name}'s config.json is not valid JSON") from None
    if not isinstance(config, dict):
        raise BadModel(f"{ref.name}'s config.json is not a JSON object")
    shape = shape_of(config, ref.name)
    weights_file, reader = _weights_reader(ref, commit)
    tensors = parse_header(reader, ref.name) if reader is not None else {}
    if tensors:  # checked before anything is cached
        wte, wpe = (tensors[find_key(tensors, keys, ref.name)].shape for keys in (WTE_KEYS, WPE_KEYS))
        check_shapes(ref.name, shape, wte, wpe)
    return CheckpointInfo(ref.name, ref.repo, commit, config, weights_file, tensors)


def check_shapes(name: str, shape: Shape, wte: tuple[int, ...], wpe: tuple[int, ...]) -> None:
    if wte != (shape.vocab_size, shape.d_model) or wpe != (shape.n_positions, shape.d_model):
        raise BadModel(
            f"{name}'s checkpoint disagrees with its config: wte is {list(wte)} and wpe {list(wpe)}, the "
            f"config says [{shape.vocab_size}, {shape.d_model}] and [{shape.n_positions}, {shape.d_model}]"
        )


# ---------------------------------------------------------------- building an entry


def tokenizer_json(ref: ModelRef, commit: str) -> str:
    path = source_file(ref, commit, "tokenizer.json")
    if path is not None:
        return path.read_text(encoding="utf-8")
    vocab, merges = source_file(ref, commit, "vocab.json"), source_file(ref, commit, "merges.txt")
    if vocab is None or merges is None:
        raise BadModel(f"{ref.name} has no tokenizer (tokenizer.json, or vocab.json with merges.txt)")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text: str = tok.to_str()
    return text


def embeddings(ref: ModelRef, info: CheckpointInfo, reporter: Reporter) -> tuple[np.ndarray, np.ndarray]:
    if not info.tensors:  # a pickle checkpoint: torch's weights-only loader reads it
        path = source_file(ref, info.commit, info.weights_file)
        if path is None:
            raise BadModel(f"{ref.name} has no {info.weights_file}")
        from gpt2emb import heavy

        return heavy.load_bin_embeddings(path, WTE_KEYS, WPE_KEYS, ref.name)
    reader = _safetensors_reader(ref, info.commit)
    wte_info = info.tensors[find_key(info.tensors, WTE_KEYS, ref.name)]
    wpe_info = info.tensors[find_key(info.tensors, WPE_KEYS, ref.name)]
    total = (wte_info.end - wte_info.start) + (wpe_info.end - wpe_info.start)
    with reporter.progress(f"fetching {ref.name} embeddings", total) as task:
        return read_tensor(reader, wte_info, task), read_tensor(reader, wpe_info, task)
