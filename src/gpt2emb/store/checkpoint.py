"""What a checkpoint holds: its config, its safetensors header (checked), and its embedding tables.

Which tensors those are is the model family's to say (families/): the token table (wte), the position
table (wpe, kept from the row of position 0 on; 0 rows for a family without one), and where the family has
them, token-type rows and the layer norm applied before the first block. Rows of any other table (an untied
output layer) are read by byte ranges too.

A checkpoint is a local folder or a Hub repo at one commit; nothing here caches anything (build.py and
revisions.py do). Its tokenizer is read by tokenizer_files.py, the bytes of its files by formats.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb import families
from gpt2emb.errors import BadModel, NotCached
from gpt2emb.families import Family
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.report import Reporter, Task
from gpt2emb.store import hub
from gpt2emb.store.formats import (
    EMBEDDING_DTYPES,
    TensorInfo,
    damaged,
    find_key,
    local_reader,
    model_file,
    parse_header,
    read_json,
    read_tensor,
    shown,
    widened_rows,
)
from gpt2emb.store.hub import ReadRange

SINGLE, INDEX, PICKLE = "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"
WEIGHT_FILES = (SINGLE, PICKLE)


@dataclass(frozen=True)
class CheckpointInfo:
    """What a model's config and checkpoint header say, without reading any weights."""

    name: str
    repo: str | None
    commit: str
    config: dict[str, Any]
    weights_file: str  # model.safetensors, model.safetensors.index.json or pytorch_model.bin
    tensors: dict[str, TensorInfo]  # every shard's, merged; empty for a pickle: its keys need loading it


# ---------------------------------------------------------------- config


def shape_of(config: dict[str, Any], name: str) -> Shape:
    return families.shape_of(config, name)


@dataclass(frozen=True)
class Tables:
    """A model's embedding tables in float32, as its entry stores them."""

    wte: np.ndarray
    wpe: np.ndarray  # the rows of positions 0 to n_positions - 1 (past the family's offset); none if no table
    types: np.ndarray | None = None  # token-type rows
    norm: np.ndarray | None = None  # the layer norm's weight and bias, 2 x d


def wanted(family: Family) -> dict[str, tuple[str, ...]]:
    """The tensors an entry is made of, by the name the entry gives them: their names in a checkpoint."""
    found = {"wte": family.token_table}
    if family.position_table:
        found["wpe"] = family.position_table
    if family.type_table:
        found["types"] = family.type_table
    if family.norm:
        found["norm_weight"], found["norm_bias"] = family.norm_names
    return found


# ---------------------------------------------------------------- where the weights are: a folder or the Hub


def source_file(ref: ModelRef, commit: str, filename: str) -> Path | None:
    if ref.folder is not None:
        p = ref.folder / filename
        return p if model_file(p, str(p)) else None
    assert ref.repo is not None
    return hub.file(ref.repo, filename, commit, bar=filename in WEIGHT_FILES)


def local_files(folder: Path) -> list[str]:
    """Every file of a folder that may hold weights, shards included: what a new checkpoint changes."""
    return sorted({*WEIGHT_FILES, INDEX, *(p.name for p in folder.glob("*.safetensors"))})


def file_label(ref: ModelRef, filename: str) -> str:
    return str(ref.folder / filename) if ref.folder is not None else f"{ref.repo}'s {filename}"


def _local(ref: ModelRef, commit: str, filename: str) -> Path | None:
    """The file on this machine: in the model's folder, or in the HF cache when it was downloaded whole."""
    if ref.folder is not None:
        p = ref.folder / filename
        return p if model_file(p, str(p)) else None
    assert ref.repo is not None
    return hub.cached(ref.repo, filename, commit)


def _size(ref: ModelRef, commit: str, filename: str) -> int | None:
    """The file's size in bytes; None when the model has no such file (offline: when it was never fetched)."""
    path = _local(ref, commit, filename)
    if path is not None:
        return path.stat().st_size
    if ref.repo is None or hub.offline():
        return None
    return hub.size(ref.repo, filename, commit)


def _reader(ref: ModelRef, commit: str, filename: str) -> ReadRange:
    """A safetensors file read locally (folder or HF cache), else by ranges from the Hub."""
    path = _local(ref, commit, filename)
    if path is not None:
        return local_reader(path)
    if ref.repo is None:
        raise BadModel(f"{file_label(ref, filename)} is gone; the folder changed while it was read")
    if hub.offline():
        raise NotCached(hub.not_cached(ref.repo))
    return hub.range_reader(ref.repo, filename, commit)


def _weights(ref: ModelRef, commit: str) -> tuple[str, dict[str, int], dict[str, str]]:
    """The file that holds or indexes the weights, the files that hold them with their sizes (the headers of
    safetensors files are read), and the index's weight map (tensor -> shard; empty for one file)."""
    size = _size(ref, commit, SINGLE)
    if size is not None:
        return SINGLE, {SINGLE: size}, {}
    index = source_file(ref, commit, INDEX)
    if index is not None:
        weight_map = _weight_map(index, file_label(ref, INDEX))
        sizes = {}
        for shard in sorted(set(weight_map.values())):
            shard_size = _size(ref, commit, shard)
            if shard_size is None:
                if ref.repo is not None and hub.offline():
                    raise NotCached(hub.not_cached(ref.repo))
                raise damaged(file_label(ref, INDEX), f"it names {shard}, which the model does not hold")
            sizes[shard] = shard_size
        return INDEX, sizes, weight_map
    size = _size(ref, commit, PICKLE)
    if size is not None:
        return PICKLE, {PICKLE: size}, {}
    if ref.repo is not None and hub.offline():
        raise NotCached(hub.not_cached(ref.repo))
    where = str(ref.folder) if ref.folder is not None else ref.repo
    raise BadModel(
        f"{where} holds no model.safetensors or pytorch_model.bin (nor a {INDEX} of shards); "
        "save the model's weights there"
    )


_SHARD = re.compile(r"[\w.-]+\.safetensors")  # a file beside the index, never a path elsewhere


def _weight_map(index: Path, label: str) -> dict[str, str]:
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


def _tensors(
    ref: ModelRef, commit: str, sizes: dict[str, int], weight_map: dict[str, str]
) -> dict[str, TensorInfo]:
    """Every shard's header, checked and merged into one dict (tensor name -> where its bytes are)."""
    tensors: dict[str, TensorInfo] = {}
    for filename, size in sizes.items():
        label = file_label(ref, filename)
        for key, t in parse_header(_reader(ref, commit, filename), size, filename, label).items():
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


# ---------------------------------------------------------------- checkpoint info (config + headers)


# The version of an info file (revisions.checkpoint_info's record of read_info): bump it whenever read_info
# checks more, so that an info file an older gpt2emb wrote, which may hold what is refused now, is read again.
# 3: the record checks itself (a CRC-32 of its fields, as a manifest does), and names only files beside it.
INFO_FORMAT = 3


def read_info(ref: ModelRef, commit: str) -> CheckpointInfo:
    """The config and every header, checked against each other and against the files' sizes."""
    config_path = source_file(ref, commit, "config.json")
    if config_path is None:
        raise BadModel(f"{ref.name} has no config.json: it is not a transformers model")
    label = config_label(ref)
    config = read_json(config_path, label)
    if not isinstance(config, dict):
        raise damaged(label, "it is not a JSON object")
    family = families.of_config(config, ref.name)
    families.check_config(family, config, label)
    shape = family.shape(config, ref.name)
    weights_file, sizes, weight_map = _weights(ref, commit)
    if weights_file == PICKLE:
        _check_zip(ref, commit)
    tensors = _tensors(ref, commit, sizes, weight_map) if weights_file != PICKLE else {}
    for name, keys in wanted(family).items() if weights_file != PICKLE else ():  # before anything is cached
        key = find_key(tensors, keys, ref.name)
        t = tensors[key]
        if t.dtype not in EMBEDDING_DTYPES:
            raise BadModel(
                f"{file_label(ref, t.file)} stores {key} as {t.dtype}; gpt2emb reads embeddings stored as "
                "F32, F16 or BF16: save the model in one of those"
            )
        check_shape(file_label(ref, t.file), name, key, t.shape, shape)
    layers = layers_in(tensors)
    n_layer = f"{label} says {_present(config, family.n_layer)} = {shape.n_layer}"
    if layers is not None and layers != shape.n_layer:
        raise BadModel(
            f"{n_layer}, but the checkpoint holds {layers} blocks: the config and the weights disagree; "
            "save the model again"
        )
    # where no tensor names a block (a pickle's keys are not read), the bytes still bound them: a config
    # whose model could not fit in the files would have transformers build every block it lacks (minutes
    # for a hundred thousand)
    least, size = families.least_params(config, shape), sum(sizes.values())
    if layers is None and least > 8 * size:
        where = (
            file_label(ref, next(iter(sizes)))
            if len(sizes) == 1
            else f"the shards of {file_label(ref, INDEX)}"
        )
        raise BadModel(
            f"{n_layer} and {_present(config, family.d_model)} = {shape.d_model}, a model of at least "
            f"{least:,} parameters, but {where} holds {size:,} bytes, too few for them even at one bit "
            "each: the config and the weights disagree; save the model again"
        )
    return CheckpointInfo(ref.name, ref.repo, commit, config, weights_file, tensors)


def config_label(ref: ModelRef) -> str:
    """The model's config.json as every message names it."""
    return file_label(ref, "config.json")


def _present(config: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The config field that gives a number, of the family's names for it (the first present wins)."""
    return next(k for k in keys if k in config)


_ZIP = b"PK\x03\x04"  # torch.save's format since torch 1.6: a zip archive


def _check_zip(ref: ModelRef, commit: str) -> None:
    """A pytorch_model.bin on this machine is torch's zip archive: the only format its weights-only loader
    maps (mmap), and so the only one gpt2emb reads, named before its size is trusted. (One on the Hub is
    downloaded whole when its weights are read, and checked then.)"""
    path = _local(ref, commit, PICKLE)
    if path is None:
        return
    try:
        with path.open("rb") as f:
            start = f.read(len(_ZIP))
    except OSError as e:
        raise BadModel(f"cannot read {file_label(ref, PICKLE)}: {e.strerror or e}") from None
    if start != _ZIP:
        from gpt2emb.heavy import UNSAFE

        raise BadModel(
            f"{file_label(ref, PICKLE)} {UNSAFE}: it is not a zip archive, the format torch.save writes; "
            "save the model again (as safetensors, or with a torch of 1.6 or later)"
        )


def layers_in(tensors: dict[str, TensorInfo]) -> int | None:
    """How many blocks a checkpoint's tensors hold (None: its header names none, as a checkpoint of the
    embeddings alone, or a pickle's unread keys)."""
    return families.blocks_in(tensors)


def check_shape(where: str, name: str, key: str, got: tuple[int, ...], shape: Shape) -> None:
    """Each table has the shape the config gives it: wte vocab_size x d, wpe (offset + n_positions) x d,
    token types any number of rows x d, the layer norm's weight and bias d."""
    d = shape.d_model
    want = {"wte": [shape.vocab_size, d], "wpe": [shape.position_offset + shape.n_positions, d]}.get(name)
    if want is None:
        want = [got[0] if len(got) == 2 else -1, d] if name == "types" else [d]
    if list(got) != want:
        raise BadModel(f"{where} disagrees with its config: {key} is {list(got)}, config.json says {want}")


# ---------------------------------------------------------------- building an entry


def embeddings(
    ref: ModelRef,
    info: CheckpointInfo,
    reporter: Reporter,
    keep: Path | None = None,
    land: Path | None = None,
) -> Tables:
    """The embedding tables widened to float32: only their byte ranges are read, from whichever shard holds
    each; wpe from the row of position 0 on. keep: the folder where a download from the Hub is kept as it
    arrives (partial.py), so that an interrupted one resumes. land: where a float32 wte fetched from the Hub
    goes as wte.npy (landing.py): the wte given is then that file, mapped."""
    family = families.of_config(info.config, ref.name)
    shape = family.shape(info.config, ref.name)
    keys = wanted(family)
    if info.weights_file == PICKLE:  # torch's weights-only loader reads it
        path = source_file(ref, info.commit, info.weights_file)
        if path is None:
            raise BadModel(f"{ref.name} has no {info.weights_file}")
        from gpt2emb import heavy

        arrays = heavy.load_bin_embeddings(path, keys, ref.name)
        for name, array in arrays.items():
            check_shape(ref.name, name, keys[name][0], array.shape, shape)
    else:
        tensors = {name: info.tensors[find_key(info.tensors, k, ref.name)] for name, k in keys.items()}
        total = sum(t.end - t.start for t in tensors.values())
        with reporter.progress(f"{_verb(ref)} {ref.name} embeddings", total) as task:
            arrays = {}
            for file in sorted({t.file for t in tensors.values()}):
                mine = {n: t for n, t in tensors.items() if t.file == file}
                if ref.repo is not None and _local(ref, info.commit, file) is None and not hub.offline():
                    arrays.update(_fetched(ref.repo, info.commit, file, mine, keep, task, land))
                else:
                    arrays.update(
                        (n, read_tensor(_reader(ref, info.commit, file), t, task)) for n, t in mine.items()
                    )
    start = shape.position_offset
    wpe = arrays.get("wpe", np.zeros((0, shape.d_model), np.float32))[start : start + shape.n_positions]
    norm = np.stack([arrays["norm_weight"], arrays["norm_bias"]]) if "norm_weight" in arrays else None
    return Tables(arrays["wte"], wpe, arrays.get("types"), norm)


def _fetched(
    repo: str,
    commit: str,
    file: str,
    tensors: dict[str, TensorInfo],
    keep: Path | None,
    task: Task,
    land: Path | None = None,
) -> dict[str, np.ndarray]:
    """Tensors of one file fetched from the Hub by their byte ranges, kept as they arrive where keep says;
    a float32 wte landed in the file at land (embeddings' doc)."""
    from gpt2emb.store import landing, partial

    spans = sorted({(t.start, t.end - t.start) for t in tensors.values()})
    tag = hub.etag(repo, file, commit) if keep is not None else None
    path = keep / partial.name_of(commit, tag) if keep is not None and tag else None
    fill = hub.range_filler(repo, file, commit)
    wte = tensors.get("wte")
    if land is None or wte is None or wte.dtype != "F32" or not landing.possible():
        return _rows_of(partial.fetch(fill, spans, path, task), spans, tensors)
    first = (wte.start, wte.end - wte.start)  # wte's bytes right after the header, the others behind them
    spans = [first, *(s for s in spans if s != first)]
    with landing.landed(land, wte.shape, sum(length for _, length in spans)) as into:
        others = {
            n: a.copy()
            for n, a in _rows_of(partial.fetch(fill, spans, path, task, into), spans, tensors).items()
            if n != "wte"
        }
    return {**others, "wte": np.load(land, mmap_mode="r")}


def _rows_of(
    data: memoryview, spans: list[tuple[int, int]], tensors: dict[str, TensorInfo]
) -> dict[str, np.ndarray]:
    """Each tensor's rows, from the bytes of the spans fetched one after another."""
    base, at = 0, {}
    for start, length in spans:
        at[start], base = base, base + length
    view = memoryview(data)
    return {
        n: widened_rows(view[at[t.start] : at[t.start] + t.end - t.start], t.dtype).reshape(t.shape)
        for n, t in tensors.items()
    }


def _verb(ref: ModelRef) -> str:
    """What a progress line says of bytes being read: a local folder is read, not fetched."""
    return "fetching" if ref.folder is None else "reading"


def output_key(info: CheckpointInfo, family: Family) -> str | None:
    """The checkpoint's tensor of the output layer, or None when it stores none (tied: it is wte)."""
    return next((k for k in info.tensors if k.endswith(family.output_names)), None)


_BLOCK_BYTES = 1 << 26  # one request and one float32 block of rows at a time: memory stays bounded


def read_rows(
    ref: ModelRef, info: CheckpointInfo, key: str, runs: list[range], reporter: Reporter
) -> Iterator[tuple[range, np.ndarray]]:
    """Rows of a 2-D tensor, widened to float32, by byte ranges: for each run of consecutive rows, its rows
    in blocks of at most 64 MB, each with the rows it holds."""
    t = info.tensors[key]
    if t.dtype not in EMBEDDING_DTYPES or len(t.shape) != 2:
        raise BadModel(
            f"{file_label(ref, t.file)} stores {key} as {t.dtype} {list(t.shape)}; gpt2emb reads a table of "
            "rows stored as F32, F16 or BF16"
        )
    row_bytes = (t.end - t.start) // max(1, t.shape[0])
    step = max(1, _BLOCK_BYTES // max(1, row_bytes))
    read = _reader(ref, info.commit, t.file)
    with reporter.progress(f"{_verb(ref)} {key} of {ref.name}", row_bytes * sum(map(len, runs))) as task:
        for run in runs:
            for start in range(run.start, run.stop, step):
                rows = range(start, min(run.stop, start + step))
                data = read(t.start + start * row_bytes, len(rows) * row_bytes, task)
                yield rows, widened_rows(data, t.dtype).reshape(len(rows), t.shape[1])


# ---------------------------------------------------------------- the whole checkpoint, to run the model


def _gone(ref: ModelRef, commit: str, filename: str) -> BadModel:
    return BadModel(
        f"the Hub no longer serves {filename} of {ref.repo} at commit {commit[:12]}: the commit may be gone"
    )


def weight_files(info: CheckpointInfo) -> list[str]:
    """Every file that transformers reads the model's weights from."""
    if info.weights_file == INDEX:
        return [INDEX, *sorted({t.file for t in info.tensors.values()})]
    return [info.weights_file]


def absent_weights(ref: ModelRef, info: CheckpointInfo) -> list[str]:
    """The weight files not on this machine yet. Offline, any is NotCached (gpt2emb's own cache holds only wte
    and wpe); online, the Hub is probed for them (hub.probe), which a command may ask before slow work."""
    if ref.folder is None and ref.repo is not None:
        missing = [f for f in weight_files(info) if hub.cached(ref.repo, f, info.commit) is None]
        if missing and hub.offline():
            raise NotCached(
                f"this runs the whole of {ref.name}, and its weights ({', '.join(missing)}) are not in the "
                "Hugging Face cache while HF_HUB_OFFLINE is set: run once with the network to fetch them"
            )
        if missing:  # told as what a first use of the whole model lacks, where the Hub cannot be reached
            hub.probe(ref.repo, missing[0], info.commit, f"the whole of {ref.name} ({', '.join(missing)})")
        return missing
    return []


def missing_weights(ref: ModelRef, info: CheckpointInfo) -> dict[str, int]:
    """The weight files not on this machine yet, with their sizes: what running the whole model fetches."""
    sizes = {}
    for f in absent_weights(ref, info):
        assert ref.repo is not None
        size = hub.size(ref.repo, f, info.commit)
        if size is None:
            raise _gone(ref, info.commit, f)
        sizes[f] = size
    return sizes


def weights_folder(ref: ModelRef, info: CheckpointInfo) -> Path:
    """A folder on this machine holding the config and every weight file: the model's own folder, or the HF
    cache's snapshot of the commit, into which whatever is missing is fetched (with huggingface_hub's bar)."""
    if ref.folder is not None:
        return ref.folder
    folder = None
    for f in ("config.json", *weight_files(info)):
        path = source_file(ref, info.commit, f)
        if path is None:
            raise _gone(ref, info.commit, f)
        folder = path.parent  # the same snapshot folder for every file of one commit
    assert folder is not None
    return folder
