"""The file formats a checkpoint comes in, read strictly from any byte source: JSON (no NaN or Infinity),
a safetensors header checked against its file, and tensors' bytes widened to float32."""

from __future__ import annotations

import errno
import itertools
import json
import math
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb.errors import BadModel
from gpt2emb.report import Task
from gpt2emb.store.hub import ReadRange


@dataclass(frozen=True)
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]
    start: int  # absolute byte offsets in its file
    end: int
    file: str  # model.safetensors, or the shard that holds it


# ---------------------------------------------------------------- JSON, strictly


def _no_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def parse_json(text: str | bytes, label: str) -> Any:
    """A JSON file a model ships, parsed strictly (no NaN or Infinity, which Python's json would take); a
    file that is not JSON is damaged, named with what is wrong."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except UnicodeDecodeError as e:
        raise damaged(label, f"it is not UTF-8 text (byte {e.start + 1})") from None
    except RecursionError:
        raise damaged(label, "it nests deeper than any JSON a model ships") from None
    except ValueError as e:  # JSONDecodeError, and the constants refused above
        reason = str(e) if len(str(e)) <= 80 else str(e)[:80] + "..."
        raise damaged(label, f"it is not valid JSON ({reason})") from None


def read_json(path: Path, label: str) -> Any:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise BadModel(f"cannot read {label}: {e.strerror or e}") from None
    return parse_json(data, label)


# ---------------------------------------------------------------- reading safetensors over any byte source

# Every dtype safetensors (0.8) defines, with its width in bits: F4 and F6 pack several values in a byte.
_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
    "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}  # fmt: skip
EMBEDDING_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2"}  # BF16 is widened by hand below
_MAX_HEADER = 100_000_000  # safetensors' own limit


def model_file(path: Path, label: str) -> bool:
    """Whether a model folder holds this file: True for a file (or a link to one), False when nothing is
    there; BadModel when something that is no file is (a folder, a FIFO, a link that loops or leads nowhere):
    that is no missing file, and saying so would send the user looking for one. PermissionError (a folder
    that may not be searched) is left to the one boundary, which names the path."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if not path.is_symlink():
            return False
        raise BadModel(f"{label} is a symbolic link to {os.readlink(path)}, which does not exist") from None
    except NotADirectoryError:
        return False
    except OSError as e:
        if e.errno != errno.ELOOP:
            raise
        raise BadModel(f"{label} is a symbolic link that loops (it leads back to itself)") from None
    if stat.S_ISREG(mode):
        return True
    what = "a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "no file"
    raise BadModel(f"{label} is {what}, not a file; put the model's file there")


def damaged(label: str, what: str) -> BadModel:
    return BadModel(f"{label} is damaged: {what}; save the checkpoint again or use another model")


def shown(key: str) -> str:
    """A tensor name from a header as a message shows it: a lying header may hold any text there."""
    return key if key.isprintable() and len(key) <= 100 else repr(key[:100])


def _is_count(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def parse_header(read: ReadRange, size: int, filename: str, label: str) -> dict[str, TensorInfo]:
    """The tensors of a safetensors file of `size` bytes, each checked against the file before any is read."""
    if size < 8:
        raise damaged(label, f"it is {size} bytes long, too short for a safetensors header")
    (n,) = struct.unpack("<Q", read(0, 8, None))
    if not 2 <= n <= _MAX_HEADER:
        raise damaged(label, f"its header length ({n:,} bytes) is not one safetensors allows (2 to 100 MB)")
    if n > size - 8:
        raise damaged(label, f"its header length says {n:,} bytes, but only {size - 8:,} follow it")
    try:
        header = json.loads(read(8, n, None))
    except (ValueError, RecursionError):  # RecursionError: a header of a million nested brackets
        raise damaged(label, "its header is not JSON") from None
    if not isinstance(header, dict):
        raise damaged(label, "its header is not a JSON object")
    base, tensors = 8 + n, {}
    for key, v in header.items():
        if key == "__metadata__":
            if not (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())):
                raise damaged(label, "its header's __metadata__ is not a JSON object of strings")
            continue
        name = f"tensor {shown(key)}"
        v = v if isinstance(v, dict) else {}
        dtype, shape, offsets = v.get("dtype"), v.get("shape"), v.get("data_offsets")
        if dtype is None:
            raise damaged(label, f"its header gives {name} no dtype")
        if not isinstance(dtype, str) or dtype not in _BITS:
            raise damaged(
                label, f"its header gives {name} the dtype {dtype!r}, which safetensors does not define"
            )
        if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
            raise damaged(label, f"its header gives {name} no shape (a list of sizes)")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)):
            raise damaged(label, f"its header gives {name} no data_offsets (two byte offsets)")
        a, b = offsets
        if a > b or base + b > size:
            raise damaged(
                label,
                f"{name}'s data_offsets [{a}, {b}] are not a byte range inside the file "
                f"({size - base:,} bytes of data after the header)",
            )
        bits = math.prod(shape) * _BITS[dtype]
        if bits != 8 * (b - a):
            need = bits // 8 if bits % 8 == 0 else bits / 8
            raise damaged(
                label,
                f"{name} is {dtype} {shape}, which takes {need:,} bytes, but its data_offsets [{a}, {b}] "
                f"hold {b - a:,}",
            )
        tensors[key] = TensorInfo(dtype, tuple(shape), base + a, base + b, filename)
    spans = sorted(((t.start, t.end, k) for k, t in tensors.items() if t.end > t.start), key=lambda s: s[:2])
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:  # two tensors on the same bytes: writing one would change the other
            ranges = [tensors[first].start - base, tensors[first].end - base]
            raise damaged(label, f"tensors {shown(first)} and {shown(second)} share bytes {ranges}")
    # the format leaves no byte outside a tensor (as the safetensors library checks): data shifted by a
    # byte, or bytes added, would otherwise be read as numbers
    covered = sum(end - start for start, end, _ in spans)
    if covered != size - base:
        raise damaged(
            label,
            f"its tensors hold {covered:,} bytes of the {size - base:,} after its header; a safetensors file "
            "has no bytes outside its tensors",
        )
    return tensors


def find_key(tensors: dict[str, TensorInfo], keys: tuple[str, ...], name: str) -> str:
    for key in keys:
        if key in tensors:
            return key
    raise BadModel(f"{name}'s checkpoint has no {keys[0]} tensor: it is not a checkpoint of its model type")


def read_tensor(read: ReadRange, info: TensorInfo, task: Task | None) -> np.ndarray:
    return widened_rows(read(info.start, info.end - info.start, task), info.dtype).reshape(info.shape)


def widened_rows(data: bytearray | memoryview, dtype: str) -> np.ndarray:
    """Stored numbers as float32 (F32: the downloaded buffer itself)."""
    raw = np.frombuffer(data, dtype=EMBEDDING_DTYPES[dtype])
    if dtype == "BF16":
        raw = (raw.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(invalid="ignore"):  # a signalling NaN stays a NaN, which the rows' checks report
        return raw.astype(np.float32, copy=False)


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
