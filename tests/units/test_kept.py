"""kept.py: no file gpt2emb writes (lab --html, --figure, positions --png, export -o) replaces what gpt2emb
reads: each file of a model folder, and anything in the cache, refused with one message whatever writes it
and whatever the file's extension; other files beside a model's are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local

# each option that writes a file, as a command line that names the model folder and the file
WRITERS = {
    "lab --html": lambda model, file: ["lab", "-m", model, "--html", file],
    "--figure": lambda model, file: ["neighbors", "cat", "-m", model, "-k", "2", "--figure", file],
    "sizes --figure": lambda model, file: ["sizes", "-m", model, "--figure", file],
    "positions --png": lambda model, file: ["positions", "--png", file, "-m", model],
    "export -o": lambda model, file: ["export", "--format", "word2vec", "-o", file, "-m", model],
}
# what a model folder holds when transformers' save_pretrained wrote it (the tiny model's three files, and
# the tokenizer's and generation's that transformers reads)
EXTRA = {
    "vocab.json": "{}",
    "merges.txt": "#version: 0.2\n",
    "tokenizer_config.json": "{}",
    "special_tokens_map.json": "{}",
    "added_tokens.json": "{}",
    "generation_config.json": "{}",
    "model.safetensors.index.json": "{}",
    "pytorch_model.bin": "",
}


@pytest.fixture(scope="module")
def model_files(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = save_local(tiny, tmp_path_factory.mktemp("saved") / "m")
    return {f.name: f.read_bytes() for f in folder.iterdir()} | {k: v.encode() for k, v in EXTRA.items()}


@pytest.fixture
def folder(model_files: dict[str, bytes], tmp_path: Path) -> Path:
    folder = tmp_path / "t4"
    folder.mkdir()
    for name, data in model_files.items():
        (folder / name).write_bytes(data)
    return folder


def refusal(folder: Path, name: str) -> str:
    said = f"would replace {name} of the model folder {folder}, "
    return said + "which the model is read from: give another name"


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_refuses_every_file_of_a_model_folder(folder: Path, writer: str) -> None:
    names = sorted(p.name for p in folder.iterdir())
    assert {"config.json", "model.safetensors", "tokenizer.json", *EXTRA} <= set(names)
    for name in names:
        before = (folder / name).read_bytes()
        result = run_cli(*WRITERS[writer](str(folder), str(folder / name)))
        assert result.exit_code == 2, (writer, name, result.stderr)
        said = " ".join(result.stderr.split())
        assert said.endswith(refusal(folder, name)), (writer, name, said)
        assert (folder / name).read_bytes() == before, (writer, name)


@pytest.mark.parametrize("writer", ["lab --html", "--figure", "export -o"])
def test_another_model_folder_is_kept_too_and_through_a_link(
    folder: Path, tmp_path: Path, tiny: Tiny, writer: str
) -> None:
    """The model of the run or another: a model folder's files are refused, through a link as well."""
    other = save_local(tiny, tmp_path / "other")
    (tmp_path / "link.html").symlink_to(folder / "model.safetensors")
    before = (folder / "model.safetensors").read_bytes()
    for file in (tmp_path / "link.html", folder / "model.safetensors"):
        result = run_cli(*WRITERS[writer](str(other), str(file)))
        assert result.exit_code == 2, result.stderr
        assert " ".join(result.stderr.split()).endswith(refusal(folder, "model.safetensors"))
    assert (folder / "model.safetensors").read_bytes() == before


def test_a_file_beside_a_model_s_own_is_written(folder: Path) -> None:
    for writer, name in (("--figure", "n.png"), ("lab --html", "page.html"), ("positions --png", "wpe.png")):
        result = run_cli(*WRITERS[writer](str(folder), str(folder / name)))
        assert result.exit_code == 0, (writer, result.stderr)
        assert (folder / name).stat().st_size > 0


@pytest.mark.parametrize("writer", WRITERS)
def test_nothing_in_the_cache_is_written(hub: FakeHub, caches: dict[str, Path], writer: str) -> None:
    assert run_cli("vector", "cat").exit_code == 0
    entry = Path(json.loads(run_cli("cache", "list", "--json").stdout)["entries"][0]["path"])
    root = caches["cache"]
    for file in (entry / "wte.npy", entry / "config.json", root / "page.png", entry.parent / "new.svg"):
        before = file.read_bytes() if file.exists() else None
        result = run_cli(*WRITERS[writer]("gpt2", str(file)))
        assert result.exit_code == 2, (writer, file, result.stderr)
        said = " ".join(result.stderr.split())
        assert said.endswith(
            f"is in gpt2emb's cache ({root.resolve()}), which gpt2emb reads from: give a path elsewhere"
        ), said
        assert (file.read_bytes() if file.exists() else None) == before
    assert run_cli("cache", "verify").exit_code == 0


@pytest.mark.parametrize(
    ("writer", "given", "meant"),
    [
        ("--figure", "x.png/", "x.png/figure.png"),
        ("lab --html", "x.html/", "x.html/lab.html"),
        ("positions --png", "x.png/", "x.png/wpe.png"),
        ("export -o", "x.txt/", "x.txt/vectors.txt"),
    ],
)
def test_a_path_ending_in_a_slash_is_a_folder_never_a_file(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str, given: str, meant: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli(*WRITERS[writer]("gpt2", given))
    assert result.exit_code == 2, result.stderr
    said = " ".join(result.stderr.split())
    assert f"{given} ends with a slash, which names a folder:" in said and meant in said, said
    assert not list(tmp_path.glob("x.*"))  # no file of the folder's name
