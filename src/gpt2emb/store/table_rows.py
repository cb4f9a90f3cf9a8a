"""Reading a checkpoint's tables by byte ranges: an entry's embedding tables, and any table's rows.

Only the bytes of the tables are read, from whichever file holds each, and widened to float32. A download
from the Hub may be kept as it arrives (partial.py), so that an interrupted one resumes, and a float32 wte
may land straight in the entry's file (landing.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpt2emb import families
from gpt2emb.errors import BadModel
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter, Task
from gpt2emb.store import hub
from gpt2emb.store.checkpoint import CheckpointInfo, check_shape, wanted
from gpt2emb.store.checkpoint_files import PICKLE, file_label, local_file, reader, source_file
from gpt2emb.store.formats import EMBEDDING_DTYPES, TensorInfo, find_key, read_tensor, widened_rows


@dataclass(frozen=True)
class Tables:
    """A model's embedding tables in float32, as its entry stores them."""

    wte: np.ndarray
    wpe: np.ndarray  # the rows of positions 0 to n_positions - 1 (past the family's offset); none if no table
    types: np.ndarray | None = None  # token-type rows
    norm: np.ndarray | None = None  # the layer norm's weight and bias, 2 x d


def embeddings(
    ref: ModelRef,
    info: CheckpointInfo,
    reporter: Reporter,
    keep: Path | None = None,
    land: Path | None = None,
) -> Tables:
    """The embedding tables widened to float32, wpe from the row of position 0 on.

    Only the tables' byte ranges are read, from whichever shard holds each. keep is the folder where a
    download from the Hub is kept as it arrives (partial.py), so that an interrupted one resumes. land is
    where a float32 wte fetched from the Hub goes as wte.npy (landing.py). The wte returned is then that
    file, mapped.
    """
    family = families.of_config(info.config, ref.name)
    shape = family.shape(info.config, ref.name)
    keys = wanted(family)
    if info.weights_file == PICKLE:  # torch's weights-only loader reads a pickle, never our own code
        path = source_file(ref, info.commit, info.weights_file)
        if path is None:
            raise BadModel(f"{ref.name} has no {info.weights_file}")
        from gpt2emb import heavy

        stored = heavy.load_bin_embeddings(path, keys, ref.name)
        for name, (key, array) in stored.items():
            check_shape(ref.name, name, key, array.shape, shape)
        arrays = {name: array for name, (_, array) in stored.items()}
    else:
        tensors = {name: info.tensors[find_key(info.tensors, k, ref.name)] for name, k in keys.items()}
        total = sum(t.end - t.start for t in tensors.values())
        with reporter.progress(f"{_verb(ref)} {ref.name} embeddings", total) as task:
            arrays = {}
            for file in sorted({t.file for t in tensors.values()}):
                mine = {n: t for n, t in tensors.items() if t.file == file}
                if ref.repo is not None and local_file(ref, info.commit, file) is None and not hub.offline():
                    arrays.update(_fetched(ref.repo, info.commit, file, mine, keep, task, land))
                else:
                    arrays.update(
                        (n, read_tensor(reader(ref, info.commit, file), t, task)) for n, t in mine.items()
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
    """The tensors of one file, fetched from the Hub by their byte ranges.

    The bytes are kept as they arrive where keep says. A float32 wte lands in the file at land, as
    embeddings' docstring says.
    """
    from gpt2emb.store import landing, partial

    spans = sorted({(t.start, t.end - t.start) for t in tensors.values()})
    tag = hub.etag(repo, file, commit) if keep is not None else None
    path = keep / partial.name_of(commit, tag) if keep is not None and tag else None
    fill = hub.range_filler(repo, file, commit)
    wte = tensors.get("wte")
    if land is None or wte is None or wte.dtype != "F32" or not landing.possible():
        return _rows_of(partial.fetch(fill, spans, path, task), spans, tensors)
    # wte's bytes go first, right after the header of the landing file, and the other tables' behind them.
    first = (wte.start, wte.end - wte.start)
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


# Rows are read one block at a time, one request each, so that memory stays bounded on a large table.
_BLOCK_BYTES = 1 << 26


def read_rows(
    ref: ModelRef, info: CheckpointInfo, key: str, runs: list[range], reporter: Reporter
) -> Iterator[tuple[range, np.ndarray]]:
    """Rows of a 2-D tensor, read by byte ranges and widened to float32.

    Each run of consecutive rows is read in blocks of at most 64 MB. Each block comes with the rows it holds.
    """
    t = info.tensors[key]
    if t.dtype not in EMBEDDING_DTYPES or len(t.shape) != 2:
        raise BadModel(
            f"{file_label(ref, t.file)} stores {key} as {t.dtype} {list(t.shape)}; gpt2emb reads a table of "
            "rows stored as F32, F16 or BF16"
        )
    row_bytes = (t.end - t.start) // max(1, t.shape[0])
    step = max(1, _BLOCK_BYTES // max(1, row_bytes))
    read = reader(ref, info.commit, t.file)
    with reporter.progress(f"{_verb(ref)} {key} of {ref.name}", row_bytes * sum(map(len, runs))) as task:
        for run in runs:
            for start in range(run.start, run.stop, step):
                rows = range(start, min(run.stop, start + step))
                data = read(t.start + start * row_bytes, len(rows) * row_bytes, task)
                yield rows, widened_rows(data, t.dtype).reshape(len(rows), t.shape[1])
