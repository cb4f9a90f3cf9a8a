"""What the open checks byte for byte: every file of an entry but wte and wpe, in a GPT-2-sized vocabulary
whose small files are larger than the 16 sampled blocks of the cheaper checksum cover."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from conftest import GPT2_VOCAB, run_process
from tinymodel import real_vocab_folder

Model = tuple[Path, dict[str, str]]  # the folder, and the environment naming its cache


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Model:
    """A GPT-2-shaped folder with GPT-2's real tokenizer (random 8-wide rows), and its cache built."""
    root = tmp_path_factory.mktemp("whole")
    folder = root / "model"
    folder.mkdir()
    real_vocab_folder(folder, GPT2_VOCAB, seed=5)
    return folder, {"GPT2EMB_CACHE_DIR": str(root / "cache")}


def between_samples(size: int) -> int:
    """An offset that none of the sampled checksum's 16 blocks of 4 KiB covers."""
    starts = [max(0, (size - 4096) * i // 15) for i in range(16)]
    return next(a + 4096 + 7 for a, b in itertools.pairwise(starts) if b - a > 4096 + 16)


@pytest.mark.parametrize("name", ["wte_norm.npy", "pieces.txt", "bpe.npy"])
def test_a_byte_no_sampled_block_covers_is_found_on_open(
    model: tuple[Path, dict[str, str]], name: str
) -> None:
    folder, env = model
    args = ["neighbors", "king", "-k", "5", "--json", "-m", str(folder)]
    first = run_process(*args, env=env)
    assert first.returncode == 0, first.stderr
    (manifest,) = Path(env["GPT2EMB_CACHE_DIR"]).rglob("manifest.json")
    path = manifest.parent / name
    data = bytearray(path.read_bytes())
    assert len(data) > 16 * 4096  # larger than the samples cover
    at = between_samples(len(data))
    data[at] ^= 0x5A
    path.write_bytes(bytes(data))
    again = run_process(*args, env=env)
    # found: the entry is rebuilt from the folder and the answer is the same (a damaged norm changed scores)
    assert again.returncode == 0, again.stderr
    assert f"{name} is damaged" in again.stderr and "rebuilding it" in again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)
