"""checkpoint.py pinned where a mutation run (scripts/mutate.py) found it loose: the width of every dtype
safetensors defines (from numpy's item sizes, and from the format's names where numpy has no such type),
header entries whose shape or offsets are not sizes, and the error paths no other test reaches: a tensor two
shards both hold, a config.json that is not JSON, a model without a tokenizer."""

from __future__ import annotations

import contextlib
import errno
import json
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tokenizers import AddedToken, Tokenizer

from gpt2emb import registry
from gpt2emb.errors import BadModel, NotCached
from gpt2emb.registry import Shape
from gpt2emb.report import QuietReporter
from gpt2emb.store import checkpoint, formats, tokenizer_files
from gpt2emb.store import hub as hub_module
from gpt2emb.store.hub import ReadRange
from test_checkpoint import FIX, folder_of, refused, serve, shard_name, sharded, st_file

from conftest import COMMIT, run_cli
from fakehub import FakeHub
from tinymodel import Tiny, safetensors_bytes, torch_bin, vocab_and_merges

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


# ---------------------------------------------------------------- error paths of whole models


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


def _cut_at_80(reason: str) -> str:
    return reason if len(reason) <= 80 else reason[:80] + "..."


def _json_error(text: bytes) -> str:
    """What Python's json module says of a text that is not JSON."""
    try:
        json.loads(text)
    except ValueError as e:
        return str(e)
    raise AssertionError("the text is JSON")


def _bad_configs(tiny: Tiny) -> dict[str, tuple[bytes, str]]:
    good = json.dumps(tiny.config).encode()
    # an error far down, its message long: a name that is not a string (Python 3.13 says a comma before the
    # closing brace is a trailing comma, in fewer words)
    cut = good[:-1] + b"," + b"\n" * 100_000 + b"1}"
    nan = good[:-1] + b', "initializer_range": NaN}'
    latin1 = good[:-1] + ', "author": "Fran\u00e7ois"}'.encode("latin-1")
    deep = b"[" * 100_000 + b"]" * 100_000
    assert len(_json_error(cut)) > 81
    at = latin1.index(b"\xe7") + 1  # bytes count from 1
    return {
        "not JSON": (cut, f"it is not valid JSON ({_cut_at_80(_json_error(cut))})"),
        "NaN": (nan, "it is not valid JSON (NaN is not a JSON number)"),
        "not UTF-8": (latin1, f"it is not UTF-8 text (byte {at})"),
        "deep": (deep, "it nests deeper than any JSON a model ships"),
    }


@pytest.mark.parametrize("damage", ["not JSON", "NaN", "not UTF-8", "deep"])
def test_a_config_that_is_not_json(tiny: Tiny, tmp_path: Path, damage: str) -> None:
    data, what = _bad_configs(tiny)[damage]
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    (folder / "config.json").write_bytes(data)
    refused(["neighbors", "cat", "-m", str(folder)], f"{folder}/config.json is damaged: {what}{FIX}")


def test_a_model_without_a_tokenizer(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    (folder / "tokenizer.json").unlink()
    refused(
        ["neighbors", "cat", "-m", str(folder)],
        f"{folder} has no tokenizer (tokenizer.json, or vocab.json with merges.txt)",
    )


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


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rows_are_read_by_ranges_block_by_block(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: type[np.floating[Any]]
) -> None:
    """An untied output layer's rows, read in blocks of 7 rows (the block size made small), equal the
    table's own rows widened by numpy, each block holding the rows it says."""
    head = (tiny.wte * 3).astype(dtype)
    files = {"model.safetensors": safetensors_bytes({**tiny.state(), "lm_head.weight": head})}
    folder = folder_of(tiny, tmp_path / "untied", files)
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    row_bytes = head.shape[1] * head.itemsize
    monkeypatch.setattr(checkpoint, "_BLOCK_BYTES", 7 * row_bytes)
    runs = [range(0, 1), range(5, 40), range(100, 107), range(len(head) - 9, len(head))]
    got = list(checkpoint.read_rows(ref, info, "lm_head.weight", runs, QuietReporter()))
    assert [rows for rows, _ in got] == [
        range(a, min(r.stop, a + 7)) for r in runs for a in range(r.start, r.stop, 7)
    ]
    for rows, block in got:
        assert block.dtype == np.float32
        np.testing.assert_array_equal(block, head[rows.start : rows.stop].astype(np.float32))


# ---------------------------------------------------------------- reading bytes; where the weights are


def not_cached_offline(repo: str) -> str:
    return (
        f"{repo} is not cached and HF_HUB_OFFLINE is set: run once with the network to fetch it, "
        "or try the tiny example model (python docs/examples/tiny_gpt2.py, then -m ./tiny-gpt2)"
    )


class Counted:
    """A progress task that adds up what it is told."""

    def __init__(self) -> None:
        self.done = 0

    def advance(self, n: int) -> None:
        self.done += n


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
        assert checkpoint.source_file(ref, COMMIT, name) is None
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
        checkpoint.embeddings(ref, info, QuietReporter())
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
        checkpoint.embeddings(ref, info, QuietReporter())
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


@pytest.mark.parametrize("config", [None, b"[]", b'"gpt2"', b"5"], ids=["none", "list", "string", "number"])
def test_a_config_that_is_missing_or_no_object(tiny: Tiny, tmp_path: Path, config: bytes | None) -> None:
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    if config is None:
        (folder / "config.json").unlink()
        said = f"{folder} has no config.json: it is not a transformers model"
    else:
        (folder / "config.json").write_bytes(config)
        said = f"{folder}/config.json is damaged: it is not a JSON object{FIX}"
    with pytest.raises(BadModel) as e:
        checkpoint.read_info(registry.resolve(str(folder)), "local")
    assert e.value.message == said


# ---------------------------------------------------------------- tables, tokenizers, pickles


class Recording:
    """A reporter that keeps each progress line's label, total and bytes advanced."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, int, Counted]] = []

    def note(self, message: str) -> None:
        pass

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Counted]:
        task = Counted()
        self.lines.append((label, total, task))
        yield task


@pytest.mark.parametrize("where", ["folder", "hub"])
def test_reading_the_tables_reports_their_bytes(hub: FakeHub, tiny: Tiny, tmp_path: Path, where: str) -> None:
    files = {"model.safetensors": safetensors_bytes(tiny.state())}
    if where == "folder":
        model, verb = str(folder_of(tiny, tmp_path / "model", files)), "reading"
    else:
        serve(hub, tiny, "someone/model", dict(files))
        model, verb = "someone/model", "fetching"
    ref = registry.resolve(model)
    reporter = Recording()
    tables = checkpoint.embeddings(ref, checkpoint.read_info(ref, COMMIT), reporter)
    np.testing.assert_array_equal(tables.wte, tiny.wte)
    total = tiny.wte.nbytes + tiny.wpe.nbytes
    assert [(label, n, task.done) for label, n, task in reporter.lines] == [
        (f"{verb} {model} embeddings", total, total)
    ]


def test_a_model_without_a_position_table_has_no_position_rows(tmp_path: Path) -> None:
    """A rotary model (Llama) learned no row per position: its wpe has none, its wte is read as stored."""
    wte = np.random.default_rng(0).standard_normal((50, 32)).astype(np.float32)
    config = {
        "model_type": "llama",
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "vocab_size": 50,
        "max_position_embeddings": 128,
    }
    folder = tmp_path / "rotary"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(safetensors_bytes({"model.embed_tokens.weight": wte}))
    ref = registry.resolve(str(folder))
    tables = checkpoint.embeddings(ref, checkpoint.read_info(ref, "local"), QuietReporter())
    assert tables.wpe.shape == (0, 32) and tables.wpe.dtype == np.float32
    np.testing.assert_array_equal(tables.wte, wte)


def test_token_type_rows_must_be_a_table_of_rows_of_d() -> None:
    shape = Shape(vocab_size=10, d_model=4, n_positions=8, n_layer=1, n_head=1)
    checkpoint.check_shape("m", "types", "tt", (2, 4), shape)  # any number of rows
    checkpoint.check_shape("m", "types", "tt", (0, 4), shape)
    for got, want in (((4,), [-1, 4]), ((2, 3), [2, 4]), ((1, 2, 4), [-1, 4])):
        with pytest.raises(BadModel) as e:
            checkpoint.check_shape("m", "types", "tt", got, shape)
        assert e.value.message == f"m disagrees with its config: tt is {list(got)}, config.json says {want}"


def with_added_token(tiny: Tiny, folder: Path) -> int:
    """tiny's tokenizer.json in folder with an added token "<|x|>" past its vocabulary; the token's id."""
    tok = Tokenizer.from_str(tiny.tokenizer.to_str())
    tok.add_tokens([AddedToken("<|x|>", special=True)])
    (folder / "tokenizer.json").write_text(tok.to_str())
    x = tok.token_to_id("<|x|>")
    assert x is not None
    return x


def test_an_added_token_must_name_a_row(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {})
    x = with_added_token(tiny, folder)
    ref = registry.resolve(str(folder))
    assert tokenizer_files.tokenizer(ref, "local", x + 1)[1]["added_tokens"][-1]["id"] == x  # the last row
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", x)
    assert e.value.message == (
        f"{folder}/tokenizer.json gives the token <|x|> the id {x}, but wte has rows 0 to {x - 1}: the "
        "tokenizer and the table disagree; save the model and its tokenizer again"
    )


def test_a_tokenizer_that_cannot_be_read(tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = folder_of(tiny, tmp_path / "model", {})
    ref = registry.resolve(str(folder))
    text = tiny.tokenizer.to_str().encode()
    cut = text.index(b'"vocab"')
    (folder / "tokenizer.json").write_bytes(text[:cut] + b"\xe9" + text[cut:])
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", 1000)
    assert (
        e.value.message == f"{folder}/tokenizer.json is damaged: it is not UTF-8 text (byte {cut + 1}){FIX}"
    )
    read_bytes = Path.read_bytes

    def failing(self: Path) -> bytes:
        if self.name == "tokenizer.json":
            raise OSError(errno.EIO, "Input/output error")
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", failing)
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", 1000)
    assert e.value.message == f"cannot read {folder}/tokenizer.json: Input/output error"


def test_a_tokenizer_from_vocab_and_merges_is_gpt2s(tiny: Tiny, tmp_path: Path) -> None:
    """Without tokenizer.json, vocab.json with merges.txt make GPT-2's tokenizer: byte-level, no space put
    before a text; either file alone makes none, and a vocab.json the library cannot read is damage."""
    vocab, merges = vocab_and_merges(tiny)
    folder = folder_of(tiny, tmp_path / "model", {"vocab.json": vocab, "merges.txt": merges})
    (folder / "tokenizer.json").unlink()
    ref = registry.resolve(str(folder))
    made = Tokenizer.from_str(tokenizer_files.tokenizer(ref, "local", len(tiny.vocab))[0])
    for text in ("king", " king", "kingdom of cats", "é"):
        assert made.encode(text).ids == tiny.tokenizer.encode(text).ids, text
    (folder / "vocab.json").write_bytes(b"{")
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(ref, "local", len(tiny.vocab))
    assert e.value.message.startswith(
        f"{folder}/vocab.json with {folder}/merges.txt is damaged: the tokenizers library cannot read them ("
    )
    for alone in ("vocab.json", "merges.txt"):
        (folder / alone).rename(tmp_path / alone)
        with pytest.raises(BadModel) as e:
            tokenizer_files.tokenizer(ref, "local", len(tiny.vocab))
        assert e.value.message == f"{folder} has no tokenizer (tokenizer.json, or vocab.json with merges.txt)"
        (tmp_path / alone).rename(folder / alone)


def test_a_pickle_checked_and_gone(tiny: Tiny, tmp_path: Path) -> None:
    """A pytorch_model.bin's tables are checked against the config once loaded; one removed after its
    config was read is named."""
    state = {"wte.weight": tiny.wte, "wpe.weight": tiny.wpe[:512]}
    folder = folder_of(tiny, tmp_path / "pickle", {"pytorch_model.bin": torch_bin(state)})
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    with pytest.raises(BadModel) as e:
        checkpoint.embeddings(ref, info, QuietReporter())
    assert e.value.message == (
        f"{folder} disagrees with its config: wpe.weight is [512, 32], config.json says [1024, 32]"
    )
    (folder / "pytorch_model.bin").unlink()
    with pytest.raises(BadModel) as e:
        checkpoint.embeddings(ref, info, QuietReporter())
    assert e.value.message == f"{folder} has no pytorch_model.bin"


# ---------------------------------------------------------------- the whole checkpoint, to run the model


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
    assert checkpoint.weight_files(info) == ["model.safetensors.index.json", *shards]
    assert checkpoint.missing_weights(ref, info) == {name: len(files[name]) for name in shards}
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(NotCached) as e:
        checkpoint.missing_weights(ref, info)
    assert e.value.message == (
        f"this runs the whole of someone/sharded, and its weights ({', '.join(shards)}) are not in the "
        "Hugging Face cache while HF_HUB_OFFLINE is set: run once with the network to fetch them"
    )
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    folder = checkpoint.weights_folder(ref, info)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["config.json", "model.safetensors.index.json", *shards]
    )
    for name in shards:
        assert (folder / name).read_bytes() == files[name]
    assert checkpoint.missing_weights(ref, info) == {}
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert checkpoint.missing_weights(ref, info) == {}
    assert checkpoint.weights_folder(ref, info) == folder


def test_a_folder_model_is_its_own_weights_folder(tiny: Tiny, tmp_path: Path) -> None:
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    assert checkpoint.weight_files(info) == ["model.safetensors"]
    assert checkpoint.missing_weights(ref, info) == {}
    assert checkpoint.weights_folder(ref, info) == folder


def test_weights_the_hub_no_longer_serves(hub: FakeHub, tiny: Tiny) -> None:
    serve(hub, tiny, "someone/model", {"model.safetensors": safetensors_bytes(tiny.state())})
    ref = registry.resolve("someone/model")
    info = checkpoint.read_info(ref, COMMIT)
    serve(hub, tiny, "someone/model", {})  # the same commit, its weights gone
    said = f"the Hub no longer serves model.safetensors of someone/model at commit {COMMIT[:12]}: the commit "
    said += "may be gone"
    with pytest.raises(BadModel) as e:
        checkpoint.missing_weights(ref, info)
    assert e.value.message == said
    with pytest.raises(BadModel) as e:
        checkpoint.weights_folder(ref, info)
    assert e.value.message == said


@pytest.mark.parametrize(
    ("dtype", "shape"),
    [("F64", None), ("I32", None), ("F32", "3-D")],
    ids=["float64", "int32", "three-dimensional"],
)
def test_rows_are_read_only_from_a_table_of_float_rows(
    tiny: Tiny, tmp_path: Path, dtype: str, shape: str | None
) -> None:
    """An output layer stored otherwise than as a 2-D table of F32, F16 or BF16 rows is refused by name before
    a byte of it is read: either fault alone is enough."""
    rows = tiny.wte.astype({"F64": np.float64, "I32": np.int32, "F32": np.float32}[dtype])
    if shape == "3-D":
        rows = rows.reshape(len(rows), 2, -1)
    state = {**tiny.state(), "lm_head.weight": rows}
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(state)})
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    with pytest.raises(BadModel) as e:
        next(checkpoint.read_rows(ref, info, "lm_head.weight", [range(2)], QuietReporter()))
    assert e.value.message == (
        f"{folder}/model.safetensors stores lm_head.weight as {dtype} {list(rows.shape)}; gpt2emb reads a "
        "table of rows stored as F32, F16 or BF16"
    )


def test_a_tokenizer_without_ids_names_every_kind_that_has_them(tiny: Tiny, tmp_path: Path) -> None:
    """The kinds of the tokenizers library whose vocabulary is a JSON object of piece -> id: BPE, WordPiece
    and WordLevel (Unigram's is a list of [piece, score])."""
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(tiny.state())})
    parsed = json.loads((folder / "tokenizer.json").read_text())
    pieces = sorted(parsed["model"]["vocab"].items(), key=lambda p: p[1])
    parsed["model"] = {"type": "Unigram", "unk_id": 0, "vocab": [[piece, -float(i)] for piece, i in pieces]}
    (folder / "tokenizer.json").write_text(json.dumps(parsed))
    with pytest.raises(BadModel) as e:
        tokenizer_files.tokenizer(registry.resolve(str(folder)), "local", len(tiny.wte))
    assert e.value.message == (
        f"{folder}/tokenizer.json holds a Unigram tokenizer; gpt2emb reads BPE, WordPiece and WordLevel "
        "tokenizers, whose vocabulary maps each piece to its id: use a model with one of those"
    )


# ---------------------------------------------------------------- found loose by the seed-13 run (issue 43)


def test_a_pickle_that_cannot_be_read_gives_the_systems_reason(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = {"wte.weight": tiny.wte, "wpe.weight": tiny.wpe}
    folder = folder_of(tiny, tmp_path / "pickle", {"pytorch_model.bin": torch_bin(state)})
    path = folder / "pytorch_model.bin"
    real = Path.open

    def refused(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:  # as a file this user may not read
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refused)
    with pytest.raises(BadModel) as e:
        checkpoint.read_info(registry.resolve(str(folder)), "local")
    assert e.value.message == f"cannot read {path}: Permission denied"


def test_a_record_this_version_wrote_is_read_without_the_network(hub: FakeHub) -> None:
    """info/<commit>.json of format 3 (what this version writes): read as it is, never fetched again, so that
    a cache this gpt2emb filled keeps working offline; a later format would be one bump away from it."""
    from gpt2emb.store import entries, revisions

    ref = registry.resolve("gpt2")
    first = revisions.checkpoint_info(ref)
    record = entries.repo_dir(ref) / entries.RECORDS / f"{COMMIT}.json"
    raw = json.loads(record.read_bytes())
    raw["format"] = 3
    raw[entries.SELF_CHECK] = entries.record_digest(raw)
    record.write_text(json.dumps(raw))
    hub.requests.clear()
    hub.fault = lambda method, path: "drop"
    assert revisions.checkpoint_info(ref, COMMIT) == first
    assert hub.requests == [] and json.loads(record.read_bytes())["format"] == 3


def test_an_interrupted_first_use_online_keeps_what_arrived(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Online, a Hub model's tables are fetched into a partial file beside its entries (store/partial.py), so
    that the next run resumes where this one broke off, as the message says."""
    from gpt2emb.store import partial

    monkeypatch.setattr(partial, "BLOCK", 4096)  # whole blocks of the tiny tables arrive before the cut
    gets = [0]

    def cut_the_tables(method: str, path: str) -> Any:
        if method == "GET" and path.split("?")[0].endswith("model.safetensors"):
            gets[0] += 1
            return "cut" if gets[0] == 3 else None  # after the two reads of the header
        return None

    hub.fault = cut_the_tables
    result = run_cli("vector", "cat", "--json")
    assert result.exit_code == 5 and "the next run resumes the download" in result.stderr
    assert [p.name.split(".")[0] for p in caches["cache"].rglob("*.partial")] == [COMMIT]


def test_a_checkpoint_the_hub_gives_no_etag_is_fetched_without_keeping(
    hub: FakeHub, caches: dict[str, Path], tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partial file is named by the file's ETag (another ETag: other bytes); where the server gives none,
    nothing is kept, and the first use goes on as any download."""
    monkeypatch.setattr(hub_module, "etag", lambda repo, filename, commit: None)  # a server without ETags
    result = run_cli("vector", "id:5", "--full", "--json")
    assert result.exit_code == 0, result.stderr
    row = json.loads(result.stdout)["items"][0]["vector"]
    np.testing.assert_array_equal(np.float32(row), tiny.wte[5])
    assert list(caches["cache"].rglob("*.partial")) == []
