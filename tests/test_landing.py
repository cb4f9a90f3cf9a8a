"""store/landing.py: a first use fetches a float32 wte straight into the entry's wte.npy, which is then the
file np.save would write of it, byte for byte; the ranges fetched behind it are copied out before the file is
cut to wte's end; a download that fails inside says its own error; a file in the way is not written
through."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpt2emb
from gpt2emb.store import landing

from conftest import FUZZ, run_cli
from fakehub import FakeHub
from tinymodel import Tiny


def saved(array: np.ndarray) -> bytes:
    f = io.BytesIO()
    np.save(f, array, allow_pickle=False)
    return f.getvalue()


@FUZZ
@given(st.lists(st.integers(1, 40), min_size=1, max_size=3))
def test_the_header_is_the_one_np_save_writes(shape: list[int]) -> None:
    array = np.zeros(shape, np.float32)
    assert saved(array) == landing.header(tuple(shape)) + array.tobytes()


def test_a_first_use_s_wte_npy_is_np_save_s_file_of_the_table(
    hub: FakeHub, caches: dict[str, Path], tiny: Tiny
) -> None:
    gpt2emb.open("gpt2")
    [manifest] = caches["cache"].rglob("manifest.json")
    written = (manifest.parent / "wte.npy").read_bytes()
    assert written == saved(np.ascontiguousarray(tiny.wte, np.float32))  # landed, then cut to wte's end
    assert json.loads(manifest.read_text())["sha256"]["wte.npy"] == hashlib.sha256(written).hexdigest()
    np.testing.assert_array_equal(  # wpe came behind wte in the landing file, and was copied out whole
        np.load(manifest.parent / "wpe.npy"), np.ascontiguousarray(tiny.wpe, np.float32)
    )
    assert run_cli("cache", "verify").exit_code == 0


def test_the_bytes_behind_wte_are_cut_off_and_the_buffer_released(tmp_path: Path) -> None:
    path = tmp_path / "wte.npy"
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    with landing.landed(path, (3, 4), rows.nbytes + 8) as into:
        into[: rows.nbytes] = rows.tobytes()
        into[rows.nbytes :] = b"behind!!"
        behind = bytes(into[rows.nbytes :])  # copied out before the block ends
    assert behind == b"behind!!"
    with pytest.raises(ValueError, match="released"):
        into[0]
    np.testing.assert_array_equal(np.load(path), rows)
    assert path.read_bytes() == saved(rows)


def test_a_failure_inside_is_raised_as_it_is_while_views_of_the_buffer_live(tmp_path: Path) -> None:
    held = []
    with (
        pytest.raises(ConnectionError, match="dropped"),
        landing.landed(tmp_path / "wte.npy", (3, 4), 48) as into,
    ):
        held.append(np.frombuffer(into, np.uint8))  # as a failed download's frames may hold
        raise ConnectionError("the connection dropped")
    assert held[0].size == 48


def test_a_file_in_the_way_is_not_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"mine")
    (tmp_path / "wte.npy").symlink_to(target)
    with pytest.raises(FileExistsError), landing.landed(tmp_path / "wte.npy", (3, 4), 48):
        pass
    assert target.read_bytes() == b"mine"
