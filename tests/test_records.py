"""A cache's records (info/<commit>.json: a checkpoint's config and headers, what an entry is built from) and
manifests are checked like the files they describe (issue 37, item 4): a damaged record is read from the
model again, `cache verify` finds and removes it, and no file name read from a record leaves its folder."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, run_json
from tinymodel import Tiny, save_local

SELF = "crc32_self"  # a record's key of its own checksum


@pytest.fixture
def folder(tiny: Tiny, tmp_path: Path) -> Path:
    return save_local(tiny, tmp_path / "tiny-gpt2")


def record_of(caches: dict[str, Path]) -> Path:
    (found,) = (caches["cache"] / "local").glob(f"*/{'info'}/*.json")
    return found


def neighbors(folder: Path) -> list[Any]:
    return [
        (n["id"], round(n["score"], 4))
        for n in run_json("neighbors", "cat", "-m", str(folder))["items"][0]["neighbors"]
    ]


def sealed(record: dict[str, Any]) -> str:
    """A record edited by hand, its checksum made to match (the CRC-32 of its other fields, sorted)."""
    body = json.dumps({k: v for k, v in record.items() if k != SELF}, sort_keys=True)
    record[SELF] = f"{zlib.crc32(body.encode()):08x}"
    return json.dumps(record)


def wte_span(record: dict[str, Any]) -> list[Any]:
    spans: list[Any] = record["tensors"]["transformer.wte.weight"]
    return spans


def test_a_record_with_an_offset_changed_is_read_again(
    folder: Path, caches: dict[str, Path], tiny: Tiny
) -> None:
    """The issue's reproducer: `sizes` records the headers; one digit of wte's offset flipped by hand, or the
    offset shifted by exactly one row, then `neighbors` (which builds the entry from the record)."""
    assert run_cli("sizes", "-m", str(folder)).exit_code == 0
    record = record_of(caches)
    sound = record.read_text()
    start, end = wte_span(json.loads(sound))[2:4]
    row = 4 * tiny.wte.shape[1]
    expected = None
    for changed in (start + 1, start + row):
        record.write_text(sound.replace(f"{start}, {end}", f"{changed}, {end - start + changed}"))
        assert wte_span(json.loads(record.read_text()))[2] == changed
        found = neighbors(folder)
        expected = expected or found
        assert found == expected
        assert found[0][0] == tiny.id("cats"), found  # the planted answer, not a row shifted by one
        verified = run_json("cache", "verify")  # the record was written anew, whole
        assert all(e["ok"] for e in verified["entries"]), verified
        run_cli("cache", "clear")
        assert run_cli("sizes", "-m", str(folder)).exit_code == 0


def test_cache_verify_finds_a_damaged_record_and_repair_removes_it(
    folder: Path, caches: dict[str, Path]
) -> None:
    assert run_cli("sizes", "-m", str(folder)).exit_code == 0  # a record, no entry
    record = record_of(caches)
    record.write_text(record.read_text().replace('"n_embd": 32', '"n_embd": 33'))
    result = run_cli("cache", "verify", "--json")
    assert result.exit_code == 6, result.stderr
    (row,) = json.loads(result.stdout)["entries"]
    assert row["damaged"] == [f"info/{record.name}"] and not row["ok"], row
    assert "does not match its checksum" in row["problem"]
    repaired = run_cli("cache", "verify", "--repair", "--json")
    assert repaired.exit_code == 0, repaired.stderr
    assert json.loads(repaired.stdout)["entries"][0]["repaired"] == "removed"
    assert not record.exists()
    assert run_cli("sizes", "-m", str(folder), "--json").exit_code == 0  # read from the model again


def test_a_record_naming_a_file_elsewhere_is_never_read(
    folder: Path, caches: dict[str, Path], tmp_path: Path
) -> None:
    """A file name such as ../../x written into a record, with its checksum made to match: the record is
    refused and read from the model again, and nothing outside the folder is opened."""
    assert run_cli("sizes", "-m", str(folder)).exit_code == 0
    record = record_of(caches)
    raw = json.loads(record.read_text())
    outside = tmp_path / "x"
    outside.write_bytes((folder / "model.safetensors").read_bytes())
    for span in raw["tensors"].values():
        span[-1] = "../x"
    record.write_text(sealed(raw))
    outside.chmod(0o000)  # read as root it would still open: its removal below shows it never was
    outside.unlink()
    doc = run_json("vector", "cat", "-m", str(folder))
    assert doc["items"][0]["tokens"][0]["id"] == 264
    assert json.loads(record.read_text())["tensors"]["transformer.wte.weight"][-1] == "model.safetensors"


def test_a_manifest_naming_a_file_elsewhere_is_not_trusted(folder: Path, caches: dict[str, Path]) -> None:
    assert run_cli("vector", "cat", "-m", str(folder)).exit_code == 0
    (manifest,) = (caches["cache"] / "local").glob("*/*/manifest.json")
    raw = json.loads(manifest.read_text())
    raw["files"]["../../../x"] = raw["files"].pop("pieces.txt")
    manifest.write_text(sealed(raw))
    result = run_cli("vector", "cat", "-m", str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    assert "names a file outside its entry" in result.stderr
    assert "../../../x" not in json.loads(manifest.read_text())["files"]


def test_a_record_of_an_older_gpt2emb_is_no_damage(folder: Path, caches: dict[str, Path]) -> None:
    """A record an older gpt2emb wrote (format 2, no checksum) is never trusted, only read again: cache
    verify does not call it damaged."""
    assert run_cli("vector", "cat", "-m", str(folder)).exit_code == 0
    record = record_of(caches)
    raw = json.loads(record.read_text())
    raw["format"] = 2
    del raw[SELF]
    record.write_text(json.dumps(raw))
    assert all(e["ok"] for e in run_json("cache", "verify")["entries"])
