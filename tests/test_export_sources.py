"""export -o never writes over what its model is read from: a local model folder's weights, config and
tokenizer, or the model's gpt2emb cache entry. Anything else in the folder may be written or replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local

W2V = ("export", "--format", "word2vec", "--limit", "2")


@pytest.fixture
def folder(tiny: Tiny, tmp_path: Path) -> Path:
    save_local(tiny, tmp_path / "model")
    return tmp_path / "model"


@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "tokenizer.json"])
def test_a_file_the_model_is_read_from_is_never_replaced(folder: Path, name: str) -> None:
    before = (folder / name).read_bytes()
    result = run_cli(*W2V, "-o", str(folder / name), "-m", str(folder))
    assert result.exit_code == 2, result.stderr
    assert f"would replace {name} of the model folder {folder}, which the model is read from" in " ".join(
        result.stderr.split()
    )
    assert (folder / name).read_bytes() == before


def test_the_same_file_through_a_link_is_refused_too(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "link.bin").symlink_to(folder / "model.safetensors")
    before = (folder / "model.safetensors").read_bytes()
    assert run_cli(*W2V, "-o", str(tmp_path / "link.bin"), "-m", str(folder)).exit_code == 2
    assert (folder / "model.safetensors").read_bytes() == before


def test_other_files_in_the_folder_are_written(folder: Path) -> None:
    for _ in range(2):  # written, then replaced
        result = run_cli(*W2V, "-o", str(folder / "vectors.txt"), "-m", str(folder), "--json")
        assert result.exit_code == 0, result.stderr
        assert (folder / "vectors.txt").read_text().splitlines()[0] == "2 32"
    projector = run_cli(
        "export", "--format", "projector", "--limit", "2", "-o", f"{folder}", "-m", f"{folder}"
    )
    assert projector.exit_code == 0, projector.stderr


def test_the_cache_entry_is_never_written(hub: FakeHub, caches: dict[str, Path]) -> None:
    assert run_cli("vector", "cat").exit_code == 0
    listed = json.loads(run_cli("cache", "list", "--json").stdout)
    entry = Path(listed["entries"][0]["path"])
    target = entry / "wte.npy"
    before = target.read_bytes()
    result = run_cli(*W2V, "-o", str(target))
    assert result.exit_code == 2
    assert "cache (" in result.stderr and "which gpt2emb reads from" in " ".join(result.stderr.split())
    assert target.read_bytes() == before
    assert run_cli("cache", "verify").exit_code == 0


@pytest.mark.parametrize("out", ["", "  "])
def test_an_empty_out_is_asked_for_by_name(folder: Path, out: str) -> None:
    result = run_cli(*W2V, "-o", out, "-m", str(folder))
    assert result.exit_code == 2
    assert (
        result.stderr.strip() == "gpt2emb: -o needs a path, such as vectors.txt (or a folder, for projector)"
    )
