"""store/writing.py: an entry's files written, and the SHA-256 of each taken as it is written."""

import hashlib
from pathlib import Path

import numpy as np
import pytest

from gpt2emb.store import writing


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.arange(12, dtype=np.float16).reshape(4, 3).T,  # not contiguous: written through np.save's copy
        np.zeros((0, 5), np.float32),
        np.arange(6, dtype=">f4"),
        np.arange(5, dtype=np.uint32),
        np.zeros((2, 0)),
    ],
    ids=["float32", "transposed", "no rows", "big-endian", "uint32", "no columns"],
)
def test_an_entry_s_array_file_is_np_save_s_and_its_checksum_is_of_its_bytes(
    array: np.ndarray, tmp_path: Path
) -> None:
    """An array written into an entry holds what np.save writes of it, and the SHA-256 given for it (the
    manifest's) is of the file's bytes, although the array's memory is hashed, not the file read back."""
    import io

    path = tmp_path / "a.npy"
    sha256 = writing.write(path, array)
    saved = io.BytesIO()
    np.save(saved, array, allow_pickle=False)
    assert path.read_bytes() == saved.getvalue()
    assert sha256 == hashlib.sha256(saved.getvalue()).hexdigest()


@pytest.mark.parametrize(
    "content", [b"abc", np.arange(8, dtype=np.float32)[::2]], ids=["bytes", "not contiguous"]
)
def test_a_write_the_system_refuses_is_raised_with_its_own_reason(
    content: bytes | np.ndarray, tmp_path: Path
) -> None:
    """Only a write cut short with no reason is said as a full disk: one the system refuses with a reason (a
    folder that is gone, here) is raised as it is."""
    import errno

    with pytest.raises(FileNotFoundError) as e:
        writing.write(tmp_path / "gone" / "a.npy", content)
    assert e.value.errno == errno.ENOENT
