"""Property (issue 37): any byte-level damage to any file of a cache entry, its checkpoint's record
(info/<commit>.json) and its manifest included, ends in exit 0 with the answer the sound cache gives, or in
exit 6 with one line; never a wrong answer, another exit code or a crash.

Each example damages one file of a cache built from the tiny model's folder (bytes overwritten, inserted,
cut off, one bit flipped, or one digit changed: a number in a record that still parses), in half of them
after removing the entry's folder (as `sizes` leaves a cache: the next command builds the entry from the
record), and runs commands whose answers read every kind of file: vector (a row of wte, the tokenizer's
files), neighbors (all of wte and its norms), positions (rows of wpe) and sizes (the record). Each command
gets the damaged cache afresh: an earlier command may have rebuilt it."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import FUZZ, run_cli
from tinymodel import Tiny, save_local

COMMANDS: tuple[tuple[str, ...], ...] = (
    ("vector", "cat", "--json"),
    ("neighbors", "cat", "-k", "5", "--json"),
    ("positions", "0", "1", "700", "1023", "--json"),
    ("sizes", "--json"),
)


@dataclass(frozen=True)
class Sound:
    folder: Path  # the model
    cache: Path  # its cache, as a first use leaves it
    files: tuple[str, ...]  # every file of it, relative to the cache, but the build's lock
    answers: dict[tuple[str, ...], object]  # each command's JSON from the sound cache


@pytest.fixture(scope="module")
def sound(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Sound:
    where = tmp_path_factory.mktemp("damaged-cache")
    folder = save_local(tiny, where / "tiny-gpt2")
    cache = where / "cache"
    before = os.environ.get("GPT2EMB_CACHE_DIR")
    os.environ["GPT2EMB_CACHE_DIR"] = str(cache)
    try:
        answers = {c: _answer(c, folder) for c in COMMANDS}
    finally:
        if before is not None:
            os.environ["GPT2EMB_CACHE_DIR"] = before
    files = tuple(
        sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file() and p.suffix != ".lock")
    )
    assert any("/info/" in f for f in files) and any(f.endswith("manifest.json") for f in files), files
    return Sound(folder, cache, files, answers)


def _answer(command: tuple[str, ...], folder: Path) -> object:
    result = run_cli(*command, "-m", str(folder))
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@dataclass(frozen=True)
class Damage:
    """What is done to one file of the cache (small, so that hypothesis shows it, not the file)."""

    file: str
    kind: str  # overwrite, insert, truncate, flip; digit: one ASCII digit made another (a number in a record)
    at: float  # where, as a share of the file
    payload: bytes = b""
    bit: int = 0
    records_only: bool = False  # the entry's folder removed first: the record is what it is built from

    def apply(self, cache: Path) -> None:
        path = cache / self.file
        if self.records_only:  # as `sizes` leaves a cache: the next command builds the entry from the record
            for manifest in list(cache.rglob("manifest.json")):
                shutil.rmtree(manifest.parent)
            if not path.exists():
                return
        data = path.read_bytes()
        i = min(int(self.at * len(data)), max(0, len(data) - 1))
        digits = [j for j, b in enumerate(data) if 0x30 <= b <= 0x39]
        if self.kind == "digit" and digits:
            j = digits[min(int(self.at * len(digits)), len(digits) - 1)]
            data = data[:j] + bytes([0x30 + (data[j] - 0x30 + 1 + self.bit) % 10]) + data[j + 1 :]
        elif self.kind == "truncate":
            data = data[:i]
        elif self.kind == "insert":
            data = data[:i] + self.payload + data[i:]
        elif self.kind == "flip" and data:
            data = data[:i] + bytes([data[i] ^ (1 << self.bit)]) + data[i + 1 :]
        else:
            data = data[:i] + self.payload + data[i + len(self.payload) :]
        path.write_bytes(data)


@st.composite
def damage(draw: st.DrawFn, files: tuple[str, ...]) -> Damage:
    # the records (the checkpoint's, the manifest) are a few small files among the arrays: drawn as often
    # as all the others together, so that the damage that still parses (a digit) meets them
    records = [f for f in files if f.endswith(".json") and ("/info/" in f or f.endswith("manifest.json"))]
    return Damage(
        draw(st.sampled_from(records) | st.sampled_from(files)),
        draw(st.sampled_from(["overwrite", "insert", "truncate", "flip", "digit"])),
        draw(st.floats(0, 1)),
        draw(st.binary(min_size=1, max_size=16)),
        draw(st.integers(0, 7)),
        draw(st.booleans()),
    )


def test_fuzz_damage_to_any_cache_file_gives_the_right_answer_or_exit_6(sound: Sound) -> None:
    seen: dict[int, int] = {}
    os.environ.pop("GPT2EMB_CACHE_DIR")  # each run sets its own; the test's is given back by its fixture

    @FUZZ
    @given(damage(sound.files))
    def run(damaged: Damage) -> None:
        for command in COMMANDS:
            with tempfile.TemporaryDirectory() as where:
                cache = Path(where) / "cache"
                shutil.copytree(sound.cache, cache)
                damaged.apply(cache)
                os.environ["GPT2EMB_CACHE_DIR"] = str(cache)
                result = run_cli(*command, "-m", str(sound.folder))
            said = result.stdout + result.stderr
            assert "Traceback" not in said and "internal error" not in said, (command, said)
            assert result.exit_code in (0, 6), (command, said)
            if result.exit_code == 0:
                assert json.loads(result.stdout) == sound.answers[command], (command, result.stdout)
            else:
                assert len(result.stderr.strip().splitlines()) == 1, result.stderr
            seen[result.exit_code] = seen.get(result.exit_code, 0) + 1

    run()
    # pytest -s shows the counts of a deep run
    print(f"damaged cache files: {sum(seen.values())} runs, by exit code {dict(sorted(seen.items()))}")
    assert seen.get(0, 0) > 0, seen
