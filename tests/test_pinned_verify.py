"""store/verify.py (`cache verify`), pinned where a mutation run (scripts/mutate.py, seed 13) found its tests
loose: the words for one damaged file and for several, and the bytes counted for a record that is no file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpt2emb import registry
from gpt2emb.store import build, entries

from conftest import COMMIT, run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def verify_json() -> dict[str, Any]:
    result = run_cli("cache", "verify", "--json")
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_one_damaged_file_and_two_are_told_in_their_own_words(hub: FakeHub) -> None:
    m = build.open_model(registry.resolve("gpt2"))
    flip(m.path / "wte.npy", -3)
    (row,) = verify_json()["entries"]
    assert (row["ok"], row["damaged"], row["problem"]) == (
        False,
        ["wte.npy"],
        "wte.npy does not match its checksum",
    )
    flip(m.path / "wpe.npy", -3)
    (row,) = verify_json()["entries"]
    assert row["damaged"] == ["wpe.npy", "wte.npy"] or row["damaged"] == ["wte.npy", "wpe.npy"]
    assert row["problem"] == f"{', '.join(row['damaged'])} do not match their checksums"


def test_a_record_that_is_a_folder_is_a_row_of_no_bytes(hub: FakeHub) -> None:
    m = build.open_model(registry.resolve("gpt2"))
    record = m.path.parent / entries.RECORDS / f"{COMMIT}.json"
    assert record.is_file()
    record.unlink()
    record.mkdir()  # nothing a record can be read from: a row of its own, of 0 bytes
    doc = verify_json()
    assert [(r["path"], r["ok"]) for r in doc["entries"]] == [(str(m.path), True), (str(record), False)]
    assert doc["total_bytes"] == entries.folder_size(m.path)
    shutil.rmtree(record)


def test_a_repair_that_cannot_rebuild_says_which_entry_and_keeps_it(hub: FakeHub) -> None:
    m = build.open_model(registry.resolve("gpt2"))
    flip(m.path / "wte.npy", -3)
    hub.fault = lambda method, path: "drop"  # the Hub cannot be reached
    result = run_cli("cache", "verify", "--repair", "--json")
    (row,) = json.loads(result.stdout)["entries"]
    assert (row["ok"], row["repaired"]) == (False, "")
    assert f"could not rebuild the cache entry of gpt2 ({COMMIT[:12]}): " in result.stderr
    assert (m.path / "manifest.json").is_file()  # kept: offline, it still answers from its sound rows


def test_a_sourceless_entry_that_cannot_be_removed_is_no_entry_any_more(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its local folder gone, a damaged entry is removed; where its tables cannot be (on Windows, mapped by a
    process), the manifest went first: what stays is no entry, and the note says why."""
    folder = save_local(tiny, tmp_path / "model")
    m = build.open_model(registry.resolve(str(folder)))
    shutil.rmtree(folder)
    flip(m.path / "wte.npy", -3)
    real = os.unlink

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).suffix == ".npy":  # as Windows refuses a mapped file
            error = PermissionError(13, "The process cannot access the file", os.fspath(path))
            error.winerror = 32  # type: ignore[attr-defined]
            raise error
        real(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    result = run_cli("cache", "verify", "--repair", "--json")
    (row,) = json.loads(result.stdout)["entries"]
    assert (row["ok"], row["repaired"]) == (False, "")
    assert f"could not remove the cache entry of {row['name']} ({m.commit[:12]}): in use" in result.stderr
    assert not (m.path / "manifest.json").exists() and (m.path / "wte.npy").is_file()
    assert json.loads(run_cli("cache", "list", "--json").stdout)["entries"] == []
