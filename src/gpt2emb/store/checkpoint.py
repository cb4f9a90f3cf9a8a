"""What a checkpoint's config and safetensors headers say, checked against each other (read_info).

Which tensors a checkpoint must hold is the model family's to say (families/): the token table (wte), the
position table (wpe, none for a family without one), and where the family has them, token-type rows and the
layer norm applied before the first block. read_info checks that each is there, stored as a float type, in
the shape the config gives it, and that the weights are as many as the config says.

A checkpoint is a local folder or a Hub repo at one commit. Nothing here caches anything (build.py and
revisions.py do). Where its files lie is checkpoint_files.py's to say, the reading of its tables is
table_rows.py's, its tokenizer is read by tokenizer_files.py, and the bytes of its files by formats.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt2emb import families
from gpt2emb.errors import BadModel
from gpt2emb.families import Family
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.store.checkpoint_files import (
    INDEX,
    PICKLE,
    file_label,
    local_file,
    source_file,
    tensors_of,
    weights_of,
)
from gpt2emb.store.formats import EMBEDDING_DTYPES, TensorInfo, damaged, find_key, read_json


@dataclass(frozen=True)
class CheckpointInfo:
    """What a model's config and checkpoint header say, without reading any weights."""

    name: str
    repo: str | None
    commit: str
    config: dict[str, Any]
    weights_file: str  # model.safetensors, model.safetensors.index.json or pytorch_model.bin
    tensors: dict[str, TensorInfo]  # every shard's, merged; empty for a pickle: its keys need loading it


def shape_of(config: dict[str, Any], name: str) -> Shape:
    """The model's shape as its config gives it, read by its family's names for each number."""
    return families.shape_of(config, name)


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


def output_key(info: CheckpointInfo, family: Family) -> str | None:
    """The checkpoint's tensor of the output layer, or None when it stores none (a tied one is wte)."""
    return next((k for k in info.tensors if k.endswith(family.output_names)), None)


# The version of an info file, revisions.checkpoint_info's record of read_info. Bump it whenever read_info
# checks more, so that an info file an older gpt2emb wrote, which may hold what is refused now, is read again.
# Version 3 checks itself with a CRC-32 of its fields, as a manifest does, and names only files beside it.
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
    weights_file, sizes, weight_map = weights_of(ref, commit)
    if weights_file == PICKLE:
        _check_zip(ref, commit)
    tensors = tensors_of(ref, commit, sizes, weight_map) if weights_file != PICKLE else {}
    # The tables are checked before anything is cached.
    for name, keys in wanted(family).items() if weights_file != PICKLE else ():
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
    # Where no tensor names a block (a pickle's keys are not read), the bytes still bound them. A config
    # whose model could not fit in the files would have transformers build every block it lacks, which takes
    # minutes for a hundred thousand.
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


_ZIP = b"PK\x03\x04"  # torch.save has written a zip archive since torch 1.6


def _check_zip(ref: ModelRef, commit: str) -> None:
    """Check that a pytorch_model.bin on this machine is torch's zip archive, before its size is trusted.

    It is the only format that torch's weights-only loader maps (mmap), and so the only one gpt2emb reads.
    One on the Hub is downloaded whole when its weights are read, and checked then.
    """
    path = local_file(ref, commit, PICKLE)
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
    """How many blocks a checkpoint's tensors hold.

    None means its header names none, as for a checkpoint of the embeddings alone, or a pickle's unread keys.
    """
    return families.blocks_in(tensors)


def check_shape(where: str, name: str, key: str, got: tuple[int, ...], shape: Shape) -> None:
    """Check that a table has the shape the config gives it.

    wte is vocab_size x d, and wpe is (offset + n_positions) x d. Token types are any number of rows of d,
    and the layer norm's weight and bias are d each.
    """
    d = shape.d_model
    want = {"wte": [shape.vocab_size, d], "wpe": [shape.position_offset + shape.n_positions, d]}.get(name)
    if want is None:
        want = [got[0] if len(got) == 2 else -1, d] if name == "types" else [d]
    if list(got) != want:
        raise BadModel(f"{where} disagrees with its config: {key} is {list(got)}, config.json says {want}")
