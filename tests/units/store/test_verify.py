"""store/verify.py (`cache verify`): damage anywhere in a cache entry is found, told and repaired.

`cache verify` reads every byte against the SHA-256 written with the entry, and a command checks the rows it
shows against the per-row CRC-32 table before printing them. The damage here is outside the 16 blocks that
the sampled checksum reads on every open, so only these checks can find it (the big entry: tests/bigentry.py).
The words for one damaged file and for several, and the bytes counted for a record that is no file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import registry
from gpt2emb.core.cache import cache_verify
from gpt2emb.errors import DamagedEntry
from gpt2emb.store import build, entries

from bigentry import BIG, POS, TWIN, flip_byte, overwrite, row_offset
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


def cli(*args: str) -> Any:
    return run_cli(*args, "-m", BIG, "--json")


def answer(*args: str) -> Any:
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # nothing noticed on open: the damage is outside the sampled blocks
    return json.loads(result.stdout)


def refused(*args: str) -> str:
    result = cli(*args)
    assert result.exit_code == 6, result.stdout + result.stderr
    assert result.stdout == ""  # nothing of the answer is printed
    error = json.loads(result.stderr)["error"]
    assert error["type"] == "damaged_cache"
    return str(error["message"])


def verify(*args: str, code: int = 0) -> dict[str, Any]:
    result = run_cli("cache", "verify", *args, "--json")
    assert result.exit_code == code, result.stdout + result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_checksums_are_those_of_the_bytes_written(big: entries.OpenedEntry) -> None:
    manifest = json.loads((big.path / "manifest.json").read_text())
    assert manifest["format"] == entries.FORMAT
    files = sorted(p.name for p in big.path.iterdir() if p.name != "manifest.json")
    assert sorted(manifest["sha256"]) == files
    for name, digest in manifest["sha256"].items():
        assert hashlib.sha256((big.path / name).read_bytes()).hexdigest() == digest
    for rows, table in ((big.wte, big.wte_crc), (big.wpe, big.wpe_crc)):
        assert table.dtype == np.uint32 and len(table) == len(rows)
        for i in (0, len(rows) // 2, len(rows) - 1):
            assert int(table[i]) == zlib.crc32(np.ascontiguousarray(rows[i]).tobytes())


def test_a_sound_cache_verifies(big: entries.OpenedEntry) -> None:
    doc = verify()
    assert [(e["name"], e["commit"], e["ok"], e["damaged"]) for e in doc["entries"]] == [
        (BIG, COMMIT, True, [])
    ]
    assert doc["total_bytes"] == sum(p.stat().st_size for p in big.path.iterdir())
    assert answer("neighbors", "cat", "-k", "1")["items"][0]["neighbors"][0]["id"] == TWIN


WTE_SHOWN = [
    ("neighbors", "cat", "-k", "1"),  # a neighbour
    ("analogy", "dog", "dog", "cat", "-k", "1"),  # an analogy result
    ("analogy", f"id:{TWIN}", "man", "woman", "-k", "1"),  # an analogy input
    ("vector", f"id:{TWIN}"),  # the query's row
    ("neighbors", f"id:{TWIN}", "-k", "1"),
    ("similarity", "cat", f"id:{TWIN}"),
    ("geometry",),  # every row is used
]


WTE_NOT_SHOWN = [
    ("neighbors", "king", "-k", "3"),
    ("analogy", "king", "man", "woman", "-k", "3"),
    ("vector", "cat"),
]


WPE_SHOWN = [
    ("positions", "0", str(POS)),
    ("positions", "--heatmap", "--cells", "4"),
    ("input", " king" * (POS + 1)),  # h0 down to position POS
    ("geometry",),
]


WPE_NOT_SHOWN = [("positions", "0", "1", "2"), ("input", " king" * POS)]


def damage_wte_byte(m: entries.OpenedEntry) -> None:
    flip_byte(m, "wte", TWIN)


def damage_wte_row(m: entries.OpenedEntry) -> None:  # the case: a row negated in place
    overwrite(m, "wte.npy", row_offset(m, "wte", TWIN), (-np.asarray(m.wte[TWIN])).tobytes())


def damage_wpe_byte(m: entries.OpenedEntry) -> None:
    flip_byte(m, "wpe", POS)


def damage_wpe_row(m: entries.OpenedEntry) -> None:  # another position's row in its place
    overwrite(m, "wpe.npy", row_offset(m, "wpe", POS), np.asarray(m.wpe[0]).tobytes())


@pytest.mark.parametrize(
    ("damage", "file", "shown", "not_shown"),
    [
        (damage_wte_byte, "wte.npy", WTE_SHOWN, WTE_NOT_SHOWN),
        (damage_wte_row, "wte.npy", WTE_SHOWN[2:], WTE_NOT_SHOWN),
        (damage_wpe_byte, "wpe.npy", WPE_SHOWN, WPE_NOT_SHOWN),
        (damage_wpe_row, "wpe.npy", WPE_SHOWN, WPE_NOT_SHOWN),
    ],
)
# a norm damaged is found on open (every byte of wte_norm.npy is checked): tests/test_whole_checks.py
def test_damage_is_found_refused_and_repaired(
    big: entries.OpenedEntry,
    damage: Any,
    file: str,
    shown: list[tuple[str, ...]],
    not_shown: list[tuple[str, ...]],
) -> None:
    damage(big)
    for args in shown:
        message = refused(*args)
        assert message.startswith(f"the cache entry of {BIG} ({COMMIT[:12]}) is damaged: ")
        assert message.endswith("; run gpt2emb cache verify --repair")
        assert file in message
    for args in not_shown:
        answer(*args)

    found = verify(code=6)
    assert [(e["ok"], e["damaged"], e["repaired"]) for e in found["entries"]] == [(False, [file], "")]
    result = run_cli("cache", "verify")
    assert result.exit_code == 6
    assert "damaged" in result.stdout and file in result.stdout
    assert result.stderr.strip() == (
        f"gpt2emb: damaged in the cache: {BIG} ({COMMIT[:12]}); run gpt2emb cache verify --repair"
    )

    repaired = verify(BIG, "--repair")
    assert [(e["ok"], e["damaged"], e["repaired"]) for e in repaired["entries"]] == [
        (True, [file], "rebuilt")
    ]
    assert verify()["entries"][0]["ok"]
    for args in shown + not_shown:
        answer(*args)
    assert answer("neighbors", "cat", "-k", "1")["items"][0]["neighbors"][0]["id"] == TWIN


def test_a_row_neither_used_nor_shown_is_left_to_cache_verify(big: entries.OpenedEntry) -> None:
    """The twin negated is no longer near cat: cat's answer does not show it, so it answers (without it)."""
    damage_wte_row(big)
    assert answer("neighbors", "cat", "-k", "1")["items"][0]["neighbors"][0]["token"] == " cats"
    assert verify(code=6)["entries"][0]["damaged"] == ["wte.npy"]


def test_each_opened_entry_keeps_its_own_sound_rows(big: entries.OpenedEntry) -> None:
    """The rows one handle found sound are its own: an entry opened after the damage checks the row again (an
    OpenedEntry is a NamedTuple, whose default would be one dict shared by every entry)."""
    big.check_rows(tokens=[TWIN])
    damage_wte_byte(big)
    big.check_rows(tokens=[TWIN])  # found sound once, by this handle: not read again
    again = build.open_model(registry.resolve(BIG))
    with pytest.raises(DamagedEntry, match=f"row {TWIN} of wte.npy does not match its checksum"):
        again.check_rows(tokens=[TWIN])


def test_a_changed_manifest_is_noticed_on_open(big: entries.OpenedEntry) -> None:
    text = (big.path / "manifest.json").read_text()
    assert '"tied": true' in text
    (big.path / "manifest.json").write_text(text.replace('"tied": true', '"tied": false'))
    assert verify(code=6)["entries"][0]["damaged"] == ["manifest.json"]
    result = cli("neighbors", "cat", "-k", "1")
    assert result.exit_code == 0
    assert "manifest.json is damaged" in json.loads(result.stderr)["note"]
    assert verify()["entries"][0]["ok"]


def as_format_3(m: entries.OpenedEntry) -> None:
    """Rewrite an entry's manifest as gpt2emb of format 3 wrote it (its files are the same): its checks on
    open SHA-256s, made here from their definition, not by entries.py."""
    manifest = json.loads((m.path / "manifest.json").read_text())
    del manifest[entries.SELF_CHECK]
    manifest["format"] = 3
    for name in manifest["files"]:
        path = m.path / name
        size = path.stat().st_size
        h = hashlib.sha256(str(size).encode())
        with path.open("rb") as f:
            for i in range(16):
                f.seek(max(0, (size - 4096) * i // 15))
                h.update(f.read(4096))
        manifest["files"][name] = h.hexdigest()[:32]
    manifest["sha256_self"] = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()
    (m.path / "manifest.json").write_text(json.dumps(manifest, indent=1))


def test_an_entry_of_format_3_is_read_as_it_is(big: entries.OpenedEntry) -> None:
    """An upgrade fetches nothing again: format 3's entry (the same files, SHA-256 checks on open) answers
    offline, and its checks still find a damaged manifest or a swapped file."""
    as_format_3(big)  # then answered from the entry as it is (answer: no note, so nothing rebuilt or fetched)
    assert answer("neighbors", "cat", "-k", "1")["items"][0]["neighbors"][0]["id"] == TWIN
    assert json.loads((big.path / "manifest.json").read_text())["format"] == 3  # read, not rewritten
    manifest = (big.path / "manifest.json").read_text()
    (big.path / "manifest.json").write_text(manifest.replace('"tied": true', '"tied": false'))
    assert verify(code=6)["entries"][0]["damaged"] == ["manifest.json"]
    (big.path / "manifest.json").write_text(manifest)
    pieces = big.path / "pieces.txt"
    pieces.write_bytes(pieces.read_bytes()[::-1])  # the same size, other bytes: a swapped file
    result = cli("neighbors", "cat", "-k", "1")
    assert "(pieces.txt is damaged: it does not match its checksum); rebuilding it" in result.stderr
    assert json.loads((big.path / "manifest.json").read_text())["format"] == entries.FORMAT  # rebuilt


def test_an_entry_of_an_older_version_is_rebuilt(big: entries.OpenedEntry) -> None:
    manifest = json.loads((big.path / "manifest.json").read_text())
    (big.path / "manifest.json").write_text(json.dumps({**manifest, "format": 2}))
    entry = verify(code=6)["entries"][0]
    assert (entry["ok"], entry["damaged"], entry["problem"]) == (
        False,
        [],
        "it was written by another version of gpt2emb",
    )
    assert verify("--repair")["entries"][0]["repaired"] == "rebuilt"
    assert json.loads((big.path / "manifest.json").read_text())["format"] == entries.FORMAT


def test_a_repair_that_cannot_fetch_keeps_the_damaged_entry(big: entries.OpenedEntry, hub: FakeHub) -> None:
    damage_wpe_byte(big)
    hub.fault = lambda method, path: "drop"
    result = run_cli("cache", "verify", "--repair")
    assert result.exit_code == 6
    assert "could not rebuild the cache entry of test/big" in result.stderr
    assert "see the notes above, then run gpt2emb cache verify --repair" in result.stderr
    answer("positions", "0", "1")  # offline, its sound rows still answer
    refused("positions", str(POS))
    hub.fault = None
    assert verify("--repair")["entries"][0]["repaired"] == "rebuilt"


def test_verify_one_model_reads_every_byte_with_progress(
    big: entries.OpenedEntry, hub: FakeHub, tiny: Tiny
) -> None:
    build.open_model(registry.resolve("gpt2"))

    class Progress:
        def __init__(self) -> None:
            self.bars: list[tuple[str, int]] = []
            self.done = 0

        def note(self, message: str) -> None:
            raise AssertionError(message)

        def progress(self, label: str, total: int) -> Any:
            self.bars.append((label, total))
            outer = self

            class Bar:
                def __enter__(self) -> Bar:
                    return self

                def __exit__(self, *exc: object) -> None:
                    pass

                def advance(self, n: int) -> None:
                    outer.done += n

            return Bar()

    seen = Progress()
    result = cache_verify("gpt2", reporter=seen)
    assert [e.name for e in result.entries] == ["gpt2"]
    assert seen.bars == [("verifying the cache", result.total_bytes)]
    assert seen.done == result.total_bytes
    assert [e.name for e in cache_verify(None).entries] == ["gpt2", BIG]


def test_a_local_folder_entry_is_rebuilt_from_the_folder_or_removed_when_it_changed(
    tiny: Tiny, tmp_path: Path
) -> None:
    folder = save_local(tiny, tmp_path / "model")
    m = build.open_model(registry.resolve(str(folder)))
    damage_wpe_byte(m)
    assert run_cli("positions", str(POS), "-m", str(folder)).exit_code == 6
    assert verify("--repair")["entries"][0]["repaired"] == "rebuilt"
    assert run_cli("positions", str(POS), "-m", str(folder)).exit_code == 0

    damage_wpe_byte(m)
    os.utime(folder / "config.json", ns=(0, 0))  # the folder changed: the entry can no longer be made again
    (entry,) = verify("--repair")["entries"]
    assert (entry["ok"], entry["damaged"], entry["repaired"]) == (True, ["wpe.npy"], "removed")
    assert not m.path.exists()
    assert verify()["entries"] == []


def test_verifying_a_model_that_is_not_cached_says_so(hub: FakeHub) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0  # gpt2 is cached, xl is not
    result = run_cli("cache", "verify", "xl")
    assert result.exit_code == 4 and result.stdout == ""
    assert result.stderr.strip() == (
        "gpt2emb: gpt2-xl is not cached, so there is nothing of it to verify (gpt2emb cache list)"
    )


def test_the_rows_checked_are_the_distinct_ids_in_order() -> None:
    """check_rows checks each row once, in id order: the ids np.unique would give (it is not used: it
    imports numpy.ma on every warm run)."""
    rng = np.random.default_rng(3)
    for ids in ([], [5], [7, 7, 7], rng.integers(-3, 50, 200).tolist(), list(range(10, 0, -1))):
        given = np.array(ids, dtype=np.int64)
        assert np.array_equal(entries._distinct(given), np.unique(given)), ids
