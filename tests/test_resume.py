"""An interrupted first use resumes (store/partial.py): the bytes it fetched are kept beside the cache entries
in a partial file named by commit and ETag, the next first use fetches only the rest, and nothing partial is
ever used as an entry, whatever lies in the partial file's place."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpt2emb import registry
from gpt2emb.store import build, partial

from conftest import FUZZ, run_cli
from fakehub import FakeHub, Fault
from tinymodel import Tiny

CHECKPOINT = "model.safetensors"


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 4 KiB: the tiny model's 44 KB wte spans eleven of them, as gpt2's 154 MB spans 147 MiB."""
    monkeypatch.setattr(partial, "BLOCK", 4096)


def cut_table_read() -> Callable[[str, str], Fault]:
    """Cut the first read of wte's range short (after the two reads of the header): half of it arrives."""
    gets = [0]

    def fault(method: str, path: str) -> Fault:
        if method != "GET" or not path.split("?")[0].endswith(CHECKPOINT):
            return None
        gets[0] += 1
        return "cut" if gets[0] == 3 else None

    return fault


def answer() -> dict[str, object]:
    result = run_cli("neighbors", "cat", "-k", "5", "--json")
    assert result.exit_code == 0, result.output
    answer: dict[str, object] = json.loads(result.stdout)
    return answer


def partials(cache: Path) -> list[Path]:
    return sorted(cache.rglob(f"*{partial.SUFFIX}"))


def entries(cache: Path) -> list[Path]:
    return sorted(p.parent for p in cache.rglob("manifest.json"))


def test_an_interrupted_first_use_resumes_with_the_missing_bytes_only(
    hub: FakeHub, caches: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = answer()  # a clean first use: what it fetches of the checkpoint, and its answer
    once = hub.file_bytes[CHECKPOINT]
    shutil.rmtree(caches["cache"])
    shutil.rmtree(caches["hf"])
    hub.file_bytes.clear()

    hub.fault = cut_table_read()
    broken = run_cli("neighbors", "cat", "-k", "5", "--json")
    assert broken.exit_code == 5 and "resumes the download" in broken.stderr
    assert entries(caches["cache"]) == []  # nothing partial is an entry
    [kept] = partials(caches["cache"])
    assert kept.name.startswith(f"{hub.repos['openai-community/gpt2'].commit}.")
    interrupted = hub.file_bytes[CHECKPOINT]
    blocks = (kept.stat().st_size - partial._HEAD.size) // (4096 + partial._CRC.size)  # each with its CRC-32

    hub.fault = None
    hub.file_bytes.clear()
    assert answer() == clean
    resumed = hub.file_bytes[CHECKPOINT]
    print(f"checkpoint bytes: one first use {once:,}; interrupted {interrupted:,} + resumed {resumed:,}")
    assert interrupted + resumed <= 1.15 * once
    assert blocks >= 4 and resumed <= once - blocks * 4096  # what was kept was not fetched again
    assert partials(caches["cache"]) == [] and len(entries(caches["cache"])) == 1


def test_a_partial_file_of_another_etag_is_deleted(hub: FakeHub, caches: dict[str, Path], tiny: Tiny) -> None:
    hub.fault = cut_table_read()
    with pytest.raises(Exception, match="fetching it from the Hub failed"):
        build.open_model(registry.resolve("gpt2"))
    [kept] = partials(caches["cache"])
    stale = kept.with_name(f"{hub.repos['openai-community/gpt2'].commit}.0ther3tag{partial.SUFFIX}")
    kept.rename(stale)
    other_commit = kept.with_name(f"{'f' * 40}.abc{partial.SUFFIX}")
    other_commit.write_bytes(b"x" * 10)
    hub.fault = None
    m = build.open_model(registry.resolve("gpt2"))
    np.testing.assert_array_equal(m.wte, tiny.wte)
    assert partials(caches["cache"]) == []


def test_cache_clear_removes_partial_files(hub: FakeHub, caches: dict[str, Path]) -> None:
    hub.fault = cut_table_read()
    assert run_cli("neighbors", "cat", "--json").exit_code != 0
    [kept] = partials(caches["cache"])
    listed = run_cli("cache", "list", "--json")
    assert listed.exit_code == 0, listed.output
    shown = json.loads(listed.stdout)
    assert [e for e in shown["partial"]] == [
        {"name": "gpt2", "repo": "openai-community/gpt2", "commit": kept.name.split(".")[0],
         "path": str(kept), "size_bytes": kept.stat().st_size}
    ]  # fmt: skip
    table = run_cli("cache", "list")
    said = " ".join(table.stdout.split())
    assert "0 entries, 0.0 MB, and 1 partial download" in said and "0123456789ab, partial" in said, said
    cleared = run_cli("cache", "clear", "--json")
    assert cleared.exit_code == 0, cleared.output
    assert partials(caches["cache"]) == []


DAMAGE = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, 60_000)),  # shorter or longer than it was
    st.tuples(st.just("flip"), st.integers(0, 60_000)),  # a byte changed
    st.tuples(st.just("garbage"), st.integers(0, 60_000)),  # other bytes of any length
    st.tuples(st.just("symlink"), st.just(0)),  # a link to a file of the user's
    st.tuples(st.just("folder"), st.just(0)),  # a folder in its place
    st.tuples(st.just("empty"), st.just(0)),
)


class Rows:
    """The tiny model's rows, with a short repr (hypothesis prints the arguments of a failing example)."""

    def __init__(self, tiny: Tiny) -> None:
        self.wte, self.wpe = tiny.wte, tiny.wpe

    def __repr__(self) -> str:
        return "Rows(tiny)"


@pytest.fixture
def rows(tiny: Tiny) -> Rows:
    return Rows(tiny)


@FUZZ
@given(damage=DAMAGE)
def test_no_partial_file_is_ever_used_as_it_stands(
    hub: FakeHub, caches: dict[str, Path], rows: Rows, tmp_path: Path, damage: tuple[str, int]
) -> None:
    """Whatever lies where the partial file was kept, the next first use answers with the Hub's rows, leaves
    a linked file of the user's as it was, and removes the partial file."""
    for folder in caches.values():
        shutil.rmtree(folder, ignore_errors=True)
    hub.fault = cut_table_read()
    with pytest.raises(Exception, match="fetching it from the Hub failed"):
        build.open_model(registry.resolve("gpt2"))
    hub.fault = None
    [kept] = partials(caches["cache"])
    what, n = damage
    theirs = tmp_path / "theirs.bin"
    theirs.write_bytes(b"the user's own file")
    data = kept.read_bytes()
    if what == "cut":
        kept.write_bytes((data + os.urandom(n))[:n])
    elif what == "flip":
        flipped = bytearray(data)
        flipped[n % len(data)] ^= 0x40
        kept.write_bytes(bytes(flipped))
    elif what == "garbage":
        kept.write_bytes(os.urandom(n))
    elif what == "symlink":
        kept.unlink()
        kept.symlink_to(theirs)
    elif what == "folder":
        kept.unlink()
        (kept / "inside").mkdir(parents=True)
    else:
        kept.write_bytes(b"")
    m = build.open_model(registry.resolve("gpt2"))
    np.testing.assert_array_equal(m.wte, rows.wte)
    np.testing.assert_array_equal(m.wpe, rows.wpe)
    assert theirs.read_bytes() == b"the user's own file"
    assert partials(caches["cache"]) == []
