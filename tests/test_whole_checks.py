"""What the open checks byte for byte: every file of an entry but wte and wpe, in a GPT-2-sized vocabulary
whose small files are larger than the 16 sampled blocks of the cheaper checksum cover."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import GPT2_VOCAB, run_process
from tinymodel import gpt2_tensor_shapes, virtual_safetensors

Model = tuple[Path, dict[str, str]]  # the folder, and the environment naming its cache


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Model:
    """A GPT-2-shaped folder with GPT-2's real tokenizer (random 8-wide rows), and its cache built."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    root = tmp_path_factory.mktemp("whole")
    folder = root / "model"
    folder.mkdir()
    tok = Tokenizer(models.BPE.from_file(str(GPT2_VOCAB / "vocab.json"), str(GPT2_VOCAB / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    rng = np.random.default_rng(5)
    rows = {"wte.weight": rng.normal(size=(50257, 8)), "wpe.weight": rng.normal(size=(1024, 8))}
    checkpoint = virtual_safetensors(gpt2_tensor_shapes(50257, 8, 1024, 1), rows)
    with (folder / "model.safetensors").open("wb") as f:
        for offset, data in checkpoint.segments:
            f.seek(offset)
            f.write(data)
        f.truncate(checkpoint.size)
    config = {"model_type": "gpt2", "vocab_size": 50257, "n_embd": 8, "n_positions": 1024, "n_ctx": 1024,
              "n_layer": 1, "n_head": 2, "bos_token_id": 50256, "eos_token_id": 50256}  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
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
