"""store/formats.py: strict JSON and safetensors headers, checked before any tensor is trusted.

Every dtype safetensors defines takes its width, files the safetensors library writes are read as it wrote
them, and header entries whose shape or offsets are not sizes are refused. The smallest and the longest
headers allowed are read, other lies are told in their own words, and a local read counts its bytes."""

from __future__ import annotations

import errno
import json
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb.errors import BadModel
from gpt2emb.store import formats
from gpt2emb.store.hub import ReadRange

from checkpoints import FIX, Counted, st_file
from tinymodel import safetensors_bytes

# Every dtype of safetensors 0.8, with the numpy type of the same width where numpy has one.
NUMPY = {
    "BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16, "F16": np.float16,
    "I32": np.int32, "U32": np.uint32, "F32": np.float32, "C64": np.complex64, "F64": np.float64,
    "I64": np.int64, "U64": np.uint64,
}  # fmt: skip


PACKED = ["F4", "F6_E2M3", "F6_E3M2", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "BF16"]


def width(dtype: str) -> int:
    """Bits per value: numpy's item size where numpy has the type, else the number the format's name starts
    with (F6_E2M3: six bits, an exponent of 2 and a mantissa of 3; BF16: sixteen)."""
    if dtype in NUMPY:
        return 8 * np.dtype(NUMPY[dtype]).itemsize
    found = re.match(r"[A-Z]+(\d+)", dtype)
    assert found is not None
    return int(found.group(1))


def reader(data: bytes) -> ReadRange:
    def read(start: int, length: int, task: object) -> bytearray:
        return bytearray(data[start : start + length])

    return read


def header_of(entries: dict[str, Any], data: bytes = b"") -> bytes:
    return st_file(json.dumps(entries).encode(), data)


def parsed(raw: bytes) -> dict[str, formats.TensorInfo]:
    return formats.parse_header(reader(raw), len(raw), "model.safetensors", "x.safetensors")


def refusal(raw: bytes) -> str:
    with pytest.raises(BadModel) as e:
        parsed(raw)
    message = e.value.message
    assert message.startswith("x.safetensors is damaged: ") and message.endswith(FIX)
    return message.removeprefix("x.safetensors is damaged: ").removesuffix(FIX)


@pytest.mark.parametrize("dtype", [*NUMPY, *PACKED])
def test_every_dtype_takes_its_width(dtype: str) -> None:
    """Eight values take exactly `width` bytes (eight of six bits are six bytes); a byte more or less is a lie
    about the shape. (After 3 bytes of another tensor: offsets count from the end of the header.)"""
    nbytes = width(dtype)  # 8 values x width bits / 8
    pad = {"pad": {"dtype": "U8", "shape": [3], "data_offsets": [0, 3]}}
    t = {"dtype": dtype, "shape": [2, 4], "data_offsets": [3, 3 + nbytes]}
    raw = header_of({**pad, "t": t}, bytes(3 + nbytes))
    info = parsed(raw)["t"]
    assert (info.dtype, info.shape, info.end - info.start, info.end) == (dtype, (2, 4), nbytes, len(raw))
    for lie in (nbytes - 1, nbytes + 1):
        t = {"dtype": dtype, "shape": [2, 4], "data_offsets": [3, 3 + lie]}
        assert refusal(header_of({**pad, "t": t}, bytes(3 + lie))) == (
            f"tensor t is {dtype} [2, 4], which takes {nbytes:,} bytes, but its data_offsets [3, {3 + lie}] "
            f"hold {lie}"
        )


def test_a_part_of_a_byte_is_named_as_such() -> None:
    raw = header_of({"t": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}, bytes(2))
    assert refusal(raw) == "tensor t is F4 [3], which takes 1.5 bytes, but its data_offsets [0, 2] hold 2"
    raw = header_of({"t": {"dtype": "F6_E3M2", "shape": [5], "data_offsets": [0, 4]}}, bytes(4))
    assert (
        refusal(raw) == "tensor t is F6_E3M2 [5], which takes 3.75 bytes, but its data_offsets [0, 4] hold 4"
    )


@pytest.mark.parametrize("dtype", list(NUMPY))
def test_files_the_safetensors_library_writes_are_read_as_it_wrote_them(dtype: str) -> None:
    array: np.ndarray = np.arange(24).reshape(2, 3, 4).astype(NUMPY[dtype])
    raw = safetensors_bytes({"a": array, "b": array[:1]})
    (n,) = struct.unpack("<Q", raw[:8])
    tensors = parsed(raw)
    assert {k: (t.dtype, t.shape) for k, t in tensors.items()} == {
        "a": (dtype, (2, 3, 4)),
        "b": (dtype, (1, 3, 4)),
    }
    for key, want in (("a", array), ("b", array[:1])):
        t = tensors[key]
        assert t.end - t.start == want.nbytes and t.start >= 8 + n
        assert raw[t.start : t.end] == want.tobytes()


SHAPES_NOT_SIZES: list[Any] = [5, "[2, 4]", None, [2, -4], [2, 4.0], [True, 8], [[2], 4]]


@pytest.mark.parametrize("shape", SHAPES_NOT_SIZES, ids=repr)
def test_a_shape_that_is_not_a_list_of_sizes(shape: Any) -> None:
    raw = header_of({"t": {"dtype": "U8", "shape": shape, "data_offsets": [0, 8]}}, bytes(8))
    assert refusal(raw) == "its header gives tensor t no shape (a list of sizes)"


@pytest.mark.parametrize("offsets", [[0], [0, 4, 8], [-4, 4], [0, 8.0], [False, 8], "0, 8", None], ids=repr)
def test_offsets_that_are_not_two_byte_offsets(offsets: Any) -> None:
    raw = header_of({"t": {"dtype": "U8", "shape": [8], "data_offsets": offsets}}, bytes(8))
    assert refusal(raw) == "its header gives tensor t no data_offsets (two byte offsets)"


def test_empty_tensors_and_a_scalar_are_sizes_too() -> None:
    """A dimension of 0 is a size (an empty tensor takes no byte, so it shares none, wherever its offsets
    point), and a scalar (shape []) is one value."""
    entries = {
        "empty": {"dtype": "F32", "shape": [0, 4], "data_offsets": [0, 0]},
        "scalar": {"dtype": "I64", "shape": [], "data_offsets": [0, 8]},
        "inside": {"dtype": "U8", "shape": [0], "data_offsets": [4, 4]},
    }
    tensors = parsed(header_of(entries, bytes(8)))
    assert {k: (t.shape, t.end - t.start) for k, t in tensors.items()} == {
        "empty": ((0, 4), 0),
        "scalar": ((), 8),
        "inside": ((0,), 0),
    }


def test_the_smallest_files() -> None:
    """Under 8 bytes there is no header length; 8 bytes hold one but no header; a file of no tensors (as the
    safetensors library writes it) is a header alone, and holds none."""
    for size in (0, 7):
        assert refusal(bytes(size)) == f"it is {size} bytes long, too short for a safetensors header"
    assert refusal(struct.pack("<Q", 2)) == "its header length says 2 bytes, but only 0 follow it"
    assert (
        refusal(struct.pack("<Q", 1) + b"{")
        == "its header length (1 bytes) is not one safetensors allows (2 to 100 MB)"
    )
    assert parsed(st_file(b"{}", b"")) == {}
    assert parsed(safetensors_bytes({})) == {}


def test_the_longest_header_safetensors_allows() -> None:
    """100,000,000 bytes is allowed (it is then checked against the file's size), one more is not."""
    limit = 100_000_000

    def length_only(n: int, size: int) -> ReadRange:
        return lambda start, length, task: bytearray(struct.pack("<Q", n)[start : start + length])

    with pytest.raises(
        BadModel, match=f"its header length says {limit:,} bytes, but only {limit - 1:,} follow"
    ):
        formats.parse_header(length_only(limit, 8 + limit - 1), 8 + limit - 1, "m", "x.safetensors")
    with pytest.raises(BadModel, match=rf"its header length \({limit + 1:,} bytes\) is not one safetensors"):
        formats.parse_header(length_only(limit + 1, 8 + limit + 1), 8 + limit + 1, "m", "x.safetensors")


METADATA = "__metadata__ is not a JSON object of strings"


OTHER_LIES = {
    "a list": (b"[]", "its header is not a JSON object"),
    "metadata of a number": (b'{"__metadata__": {"format": 5}}', f"its header's {METADATA}"),
    "metadata a list": (b'{"__metadata__": ["pt"]}', f"its header's {METADATA}"),
    "tensor a number": (b'{"t": 5}', "its header gives tensor t no dtype"),
    "dtype a number": (
        b'{"t": {"dtype": 5, "shape": [], "data_offsets": [0, 0]}}',
        "its header gives tensor t the dtype 5, which safetensors does not define",
    ),
    "offsets reversed": (
        b'{"t": {"dtype": "U8", "shape": [4], "data_offsets": [4, 0]}}',
        "tensor t's data_offsets [4, 0] are not a byte range inside the file (8 bytes of data after the "
        "header)",
    ),
    "bytes past the tensors": (
        b'{"t": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}',
        "its tensors hold 4 bytes of the 8 after its header; a safetensors file has no bytes outside its "
        "tensors",
    ),
}


@pytest.mark.parametrize("lie", list(OTHER_LIES))
def test_headers_that_lie_otherwise(lie: str) -> None:
    header, said = OTHER_LIES[lie]
    assert refusal(st_file(header, bytes(8))) == said


NAMES = {
    "k" * 100: "k" * 100,
    "é" * 100: "é" * 100,  # characters, not bytes
    "k" * 101: "'" + "k" * 100 + "'",
    "é" * 101: "'" + "é" * 100 + "'",
    "tab\there": "'tab\\there'",
}


@pytest.mark.parametrize("key", list(NAMES), ids=["100", "100 é", "101", "101 é", "tab"])
def test_a_tensor_name_is_shown_whole_up_to_100_printable_characters(key: str) -> None:
    """A header may hold any text as a name: a name of 100 printable characters or fewer is shown as it is,
    any other as the repr of its first 100."""
    raw = header_of({key: {"dtype": "F33", "shape": [], "data_offsets": [0, 0]}})
    said = f"its header gives tensor {NAMES[key]} the dtype 'F33', which safetensors does not define"
    assert refusal(raw) == said


def test_a_local_read_counts_its_bytes_and_refuses_a_short_file(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(bytes(range(100)))
    read = formats.local_reader(path)
    task = Counted()
    assert read(10, 20, task) == bytes(range(10, 30)) and read(90, 10, task) == bytes(range(90, 100))
    assert task.done == 30
    with pytest.raises(BadModel) as e:
        read(95, 10, task)  # the file changed since its header was read
    assert e.value.message == f"{path} is shorter than its header says; the file is truncated"


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (OSError(errno.EIO, "Input/output error"), "Input/output error"),
        (OSError("no reason given"), "no reason given"),
    ],
)
def test_a_config_that_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, said: str
) -> None:
    """The system's reason (strerror) where it gives one, else what the error says."""
    path = tmp_path / "config.json"
    path.write_text("{}")
    read_bytes = Path.read_bytes

    def failing(self: Path) -> bytes:
        if self == path:
            raise error
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", failing)
    with pytest.raises(BadModel) as e:
        formats.read_json(path, "the config")
    assert e.value.message == f"cannot read the config: {said}"
