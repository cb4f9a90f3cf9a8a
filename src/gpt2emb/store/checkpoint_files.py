"""Where a checkpoint's files lie (a local folder or the Hub), which hold the weights, and their headers.

A checkpoint's weights are in one model.safetensors, in shards that model.safetensors.index.json names, or in
one pytorch_model.bin. This module finds which, reads every safetensors header (locally or by byte ranges
from the Hub), checks each against the others, and merges them. checkpoint.py checks what they say against
the config.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from gpt2emb.errors import BadModel, NotCached
from gpt2emb.registry import ModelRef
from gpt2emb.store import hub
from gpt2emb.store.formats import TensorInfo, damaged, local_reader, model_file, parse_header, shown
from gpt2emb.store.hub import ReadRange

SINGLE, INDEX, PICKLE = "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"
WEIGHT_FILES = (SINGLE, PICKLE)


def source_file(ref: ModelRef, commit: str, filename: str) -> Path | None:
    """The file on this machine, fetched whole from the Hub first when the model is a Hub repo.

    None means the model has no such file. A weight file's download shows huggingface_hub's bar.
    """
    if ref.folder is not None:
        p = ref.folder / filename
        return p if model_file(p, str(p)) else None
    assert ref.repo is not None
    return hub.file(ref.repo, filename, commit, bar=filename in WEIGHT_FILES)


def local_files(folder: Path) -> list[str]:
    """Every file of a folder that may hold weights, shards included: what a new checkpoint changes."""
    return sorted({*WEIGHT_FILES, INDEX, *(p.name for p in folder.glob("*.safetensors"))})


def file_label(ref: ModelRef, filename: str) -> str:
    """The file as every message names it: its path in a folder, or the repo's file on the Hub."""
    return str(ref.folder / filename) if ref.folder is not None else f"{ref.repo}'s {filename}"


def local_file(ref: ModelRef, commit: str, filename: str) -> Path | None:
    """The file on this machine, in the model's folder or in the HF cache, or None. Nothing is fetched."""
    if ref.folder is not None:
        p = ref.folder / filename
        return p if model_file(p, str(p)) else None
    assert ref.repo is not None
    return hub.cached(ref.repo, filename, commit)


def file_size(ref: ModelRef, commit: str, filename: str) -> int | None:
    """The file's size in bytes, or None when the model has no such file.

    Offline, a file of a Hub repo that was never fetched has no size either.
    """
    path = local_file(ref, commit, filename)
    if path is not None:
        return path.stat().st_size
    if ref.repo is None or hub.offline():
        return None
    return hub.size(ref.repo, filename, commit)


def reader(ref: ModelRef, commit: str, filename: str) -> ReadRange:
    """A safetensors file read locally (folder or HF cache), or else by byte ranges from the Hub."""
    path = local_file(ref, commit, filename)
    if path is not None:
        return local_reader(path)
    if ref.repo is None:
        raise BadModel(f"{file_label(ref, filename)} is gone; the folder changed while it was read")
    if hub.offline():
        raise NotCached(hub.not_cached(ref.repo))
    return hub.range_reader(ref.repo, filename, commit)


def weights_of(ref: ModelRef, commit: str) -> tuple[str, dict[str, int], dict[str, str]]:
    """Which file holds the weights or indexes them, and the files that hold them with their sizes.

    The third part is the index's weight map, from each tensor to its shard. It is empty for a single file.
    model.safetensors wins over an index of shards, and both win over pytorch_model.bin.
    """
    size = file_size(ref, commit, SINGLE)
    if size is not None:
        return SINGLE, {SINGLE: size}, {}
    index = source_file(ref, commit, INDEX)
    if index is not None:
        weight_map = _weight_map(index, file_label(ref, INDEX))
        sizes = {}
        for shard in sorted(set(weight_map.values())):
            shard_size = file_size(ref, commit, shard)
            if shard_size is None:
                if ref.repo is not None and hub.offline():
                    raise NotCached(hub.not_cached(ref.repo))
                raise damaged(file_label(ref, INDEX), f"it names {shard}, which the model does not hold")
            sizes[shard] = shard_size
        return INDEX, sizes, weight_map
    size = file_size(ref, commit, PICKLE)
    if size is not None:
        return PICKLE, {PICKLE: size}, {}
    if ref.repo is not None and hub.offline():
        raise NotCached(hub.not_cached(ref.repo))
    where = str(ref.folder) if ref.folder is not None else ref.repo
    raise BadModel(
        f"{where} holds no model.safetensors or pytorch_model.bin (nor a {INDEX} of shards); "
        "save the model's weights there"
    )


# A shard is a file beside the index. A path that leads elsewhere is refused.
_SHARD = re.compile(r"[\w.-]+\.safetensors")


def _weight_map(index: Path, label: str) -> dict[str, str]:
    """The index's map from each tensor to its shard, checked to name only safetensors files beside it."""
    try:
        raw = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        raise damaged(label, "it is not JSON") from None
    weight_map = raw.get("weight_map") if isinstance(raw, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise damaged(label, "it has no weight_map (tensor name -> shard file)")
    for shard in weight_map.values():
        if not isinstance(shard, str) or not _SHARD.fullmatch(shard):
            raise damaged(label, f"it names the shard {shard!r}, which is not a .safetensors file beside it")
    return weight_map


def tensors_of(
    ref: ModelRef, commit: str, sizes: dict[str, int], weight_map: dict[str, str]
) -> dict[str, TensorInfo]:
    """Every shard's header, checked and merged into one dict from each tensor's name to where its bytes are.

    A tensor held by two shards is refused, and so is an index that puts a tensor where it is not.
    """
    tensors: dict[str, TensorInfo] = {}
    for filename, size in sizes.items():
        label = file_label(ref, filename)
        for key, t in parse_header(reader(ref, commit, filename), size, filename, label).items():
            if key in tensors:
                raise damaged(label, f"it holds tensor {shown(key)}, which {tensors[key].file} holds too")
            tensors[key] = t
    for key, shard in weight_map.items():
        found = tensors.get(key)
        if found is None or found.file != shard:
            raise damaged(
                file_label(ref, INDEX), f"it puts tensor {shown(key)} in {shard}, whose header lacks it"
            )
    return tensors
