"""Checkpoints written by hand for the store's tests, and the reporters that count what they read.

layout() and st_file() write a safetensors file byte by byte, so that a test may make its header lie.
serve() and folder_of() put a checkpoint on the fake Hub or in a folder, and sharded() splits the tiny
model into an index and three shards. refused() checks a one-line refusal with exit 6."""

from __future__ import annotations

import contextlib
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from conftest import COMMIT, run_cli
from fakehub import Content, FakeHub, Repo
from tinymodel import Tiny, hub_files

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


def refused(args: list[str], message: str) -> None:
    """Exit 6 with exactly this one line, as a table and with --json; nothing on stdout."""
    table = run_cli(*args)
    assert (table.exit_code, table.stdout) == (6, ""), table.output
    assert table.stderr.splitlines() == [f"gpt2emb: {message}"]
    as_json = run_cli(*args, "--json")
    assert (as_json.exit_code, as_json.stdout) == (6, ""), as_json.output
    assert as_json.stderr.count("\n") == 1
    assert json.loads(as_json.stderr) == {"error": {"type": "bad_model", "code": 6, "message": message}}


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


class Counted:
    """A progress task that adds up what it is told."""

    def __init__(self) -> None:
        self.done = 0

    def advance(self, n: int) -> None:
        self.done += n


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
