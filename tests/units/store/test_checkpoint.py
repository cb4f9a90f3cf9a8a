"""store/checkpoint.py: a checkpoint's config and headers, checked against each other by read_info.

Headers that lie are each refused with one line naming the file, exit 6, before any tensor is read. A config
that is not JSON, not an object or missing is refused, and so is a table of the wrong shape. A pickle is
checked to be torch's zip archive, and one that cannot be read gives the system's reason."""

from __future__ import annotations

import copy
import errno
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpt2emb import registry
from gpt2emb.errors import BadModel
from gpt2emb.registry import Shape
from gpt2emb.report import QuietReporter
from gpt2emb.store import checkpoint, table_rows

from checkpoints import FIX, Header, folder_of, honest, nothing_cached, refused, serve, st_file
from fakehub import FakeHub
from tinymodel import Tiny, safetensors_bytes, torch_bin


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


def test_token_type_rows_must_be_a_table_of_rows_of_d() -> None:
    shape = Shape(vocab_size=10, d_model=4, n_positions=8, n_layer=1, n_head=1)
    checkpoint.check_shape("m", "types", "tt", (2, 4), shape)  # any number of rows
    checkpoint.check_shape("m", "types", "tt", (0, 4), shape)
    for got, want in (((4,), [-1, 4]), ((2, 3), [2, 4]), ((1, 2, 4), [-1, 4])):
        with pytest.raises(BadModel) as e:
            checkpoint.check_shape("m", "types", "tt", got, shape)
        assert e.value.message == f"m disagrees with its config: tt is {list(got)}, config.json says {want}"


def test_a_pickle_checked_and_gone(tiny: Tiny, tmp_path: Path) -> None:
    """A pytorch_model.bin's tables are checked against the config once loaded; one removed after its
    config was read is named."""
    state = {"wte.weight": tiny.wte, "wpe.weight": tiny.wpe[:512]}
    folder = folder_of(tiny, tmp_path / "pickle", {"pytorch_model.bin": torch_bin(state)})
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    with pytest.raises(BadModel) as e:
        table_rows.embeddings(ref, info, QuietReporter())
    assert e.value.message == (
        f"{folder} disagrees with its config: wpe.weight is [512, 32], config.json says [1024, 32]"
    )
    (folder / "pytorch_model.bin").unlink()
    with pytest.raises(BadModel) as e:
        table_rows.embeddings(ref, info, QuietReporter())
    assert e.value.message == f"{folder} has no pytorch_model.bin"


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


def test_the_files_bound_the_blocks_at_one_bit_a_parameter(tiny: Tiny, tmp_path: Path) -> None:
    """Where no tensor names a block, a config is refused once its model has more parameters than the
    weight file has bits. One block fewer fits, and is read."""
    data = safetensors_bytes({"transformer.wte.weight": tiny.wte, "transformer.wpe.weight": tiny.wpe})
    vocab, d = tiny.wte.shape
    over = (8 * len(data) - vocab * d) // (2 * d * d) + 1  # the fewest blocks that cannot fit
    for n_layer in (over - 1, over):
        folder = folder_of(tiny, tmp_path / str(n_layer), {"model.safetensors": data})
        (folder / "config.json").write_text(json.dumps({**tiny.config, "n_layer": n_layer}))
        ref = registry.resolve(str(folder))
        if n_layer < over:
            assert checkpoint.read_info(ref, "local").config["n_layer"] == n_layer
            continue
        with pytest.raises(BadModel) as e:
            checkpoint.read_info(ref, "local")
        least = vocab * d + n_layer * 2 * d * d
        assert f"a model of at least {least:,} parameters" in e.value.message
        assert f"{folder}/model.safetensors holds {len(data):,} bytes" in e.value.message
