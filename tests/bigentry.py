"""The big entry that the store's damage tests share: the tiny model with 32,768 rows.

The damage these tests make is outside the 16 blocks that the sampled checksum reads on every open, so only
cache verify and the per-row checks can find it. The tiny model's own wte is covered whole by those blocks.
The fixtures big_files and big live in tests/conftest.py.
"""

import json

from gpt2emb.store import entries

BIG = "test/big"
ROWS = 32_768
TWIN = ROWS // 2  # a row planted as a near copy of " cat": the first neighbour of cat
POS = 500  # a position row in the middle of wpe


def overwrite(m: entries.OpenedEntry, name: str, offset: int, data: bytes) -> None:
    """Change bytes of an entry's file in place, and check that the sampled checksum cannot see it."""
    path = m.path / name
    size = path.stat().st_size
    for i in range(16):  # the blocks _fingerprint reads
        start = max(0, (size - 4096) * i // 15)
        assert offset + len(data) <= start or offset >= start + 4096, "damage inside a sampled block"
    with path.open("r+b") as f:
        f.seek(offset)
        before = f.read(len(data))
        assert before != data
        f.seek(offset)
        f.write(data)
    manifest = json.loads((m.path / "manifest.json").read_text())
    assert entries.file_fingerprint(path) == manifest["files"][name]


def row_offset(m: entries.OpenedEntry, array: str, row: int) -> int:
    a = getattr(m, array)
    row_bytes = a.itemsize * (a.shape[1] if a.ndim == 2 else 1)
    header = (m.path / f"{array}.npy").stat().st_size - row_bytes * a.shape[0]
    return int(header + row * row_bytes)


def flip_byte(m: entries.OpenedEntry, array: str, row: int) -> None:
    """One byte in the middle of a row: the lowest byte of a float32, so the value moves by ~1e-7."""
    offset = row_offset(m, array, row) + 4 * (getattr(m, array).shape[-1] // 2)
    old = (m.path / f"{array}.npy").read_bytes()[offset]
    overwrite(m, f"{array}.npy", offset, bytes([old ^ 0x01]))
