"""`cache list, path, clear, verify` and `models` as a user meets them: entries listed, cleared and fetched
again; and as a person reads them at 80 and 120 columns: every model name and path whole on one line, so that
it can be copied. A table where one fits with them whole; else a record per entry, a long path on a line of
its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpt2emb import kept
from gpt2emb.store import build

from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local

LONG = "local-untied-model-with-a-rather-long-name-for-testing"


def whole_on_a_line(text: str, *wanted: str) -> list[str]:
    """Those of wanted that no line of text holds whole."""
    lines = text.splitlines()
    return [w for w in wanted if not any(w in line for line in lines)]


@pytest.fixture
def long_cache(tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Two folders cached (one of them under a long name) in a cache folder with a long path."""
    root = tmp_path / "cache-with-a-rather-long-directory-name" / "and-another-level-of-nesting" / "gpt2emb"
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(root))
    folders = [save_local(tiny, tmp_path / "models" / name) for name in ("short", LONG)]
    for folder in folders:
        assert run_cli("vector", "cat", "-m", str(folder)).exit_code == 0
    return folders


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("command", ["list", "verify"])
def test_names_and_paths_are_never_broken(
    long_cache: list[Path], monkeypatch: pytest.MonkeyPatch, width: int, command: str
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    doc = run_json("cache", command)
    shown = run_cli("cache", command)
    assert shown.exit_code == 0
    names = [e["name"] for e in doc["entries"]]
    assert sorted(names) == sorted(str(f) for f in long_cache)
    paths = [e["path"] for e in doc["entries"]] if command == "list" else []
    assert whole_on_a_line(shown.stdout, doc["root"], *names, *paths) == []
    for e in doc["entries"]:  # each entry's commit shown, beside its name or under it
        assert e["commit"][:12] in shown.stdout


def test_a_table_where_it_fits(tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # wide enough for the test's own long paths, under xdist too
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(tmp_path / "c"))
    folder = save_local(tiny, tmp_path / "m")
    assert run_cli("vector", "cat", "-m", str(folder)).exit_code == 0
    shown = run_cli("cache", "list").stdout.splitlines()
    assert shown[2].split() == ["model", "commit", "size", "path"]  # a header, a rule, a row
    path = run_json("cache", "list")["entries"][0]["path"]
    assert shown[4].split()[0] == str(folder) and shown[4].split()[-1] == path


@pytest.mark.parametrize("width", [80, 120])
def test_a_damaged_entry_s_problem_and_an_outdated_entry_are_shown_whole(
    long_cache: list[Path], tiny: Tiny, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    from gpt2emb import registry

    monkeypatch.setenv("COLUMNS", str(width))
    m = build.open_model(registry.resolve(str(long_cache[1])))
    with (m.path / "wpe.npy").open("r+b") as f:  # a byte past the blocks every open checks
        f.seek(-8, 2)
        byte = f.read(1)
        f.seek(-8, 2)
        f.write(bytes([byte[0] ^ 1]))
    found = run_cli("cache", "verify", "--json")
    assert found.exit_code == 6  # damaged
    doc = json.loads(found.stdout)
    shown = run_cli("cache", "verify").stdout
    problem = next(e["problem"] for e in doc["entries"] if not e["ok"])
    assert " ".join(shown.split()).count(problem) == 1  # the problem whole, its words in order
    assert whole_on_a_line(shown, str(long_cache[1]), *problem.split()) == []
    # an outdated entry: the commit and the word outdated, on one line in a record
    (long_cache[1] / "config.json").write_text((long_cache[1] / "config.json").read_text() + " ")
    assert run_cli("vector", "cat", "-m", str(long_cache[1])).exit_code == 0
    listed = run_json("cache", "list")
    old = next(e for e in listed["entries"] if e["outdated"])
    shown = run_cli("cache", "list").stdout
    assert whole_on_a_line(shown, old["path"], old["name"]) == []
    assert old["commit"][:12] in shown and "outdated" in shown
    assert kept.cache_root() == Path(listed["root"])


def test_models_and_cache_management(hub: FakeHub, caches: dict[str, Path]) -> None:
    before = run_json("models")
    names = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "distilgpt2", "roberta-base", "roberta-large"]
    assert [m["name"] for m in before["models"]] == names
    assert not any(m["cached"] for m in before["models"])
    assert run_json("cache", "list")["entries"] == []
    assert run_json("cache", "path")["path"] == str(caches["cache"])
    assert run_cli("cache", "path").stdout.strip() == str(caches["cache"])
    run_json("neighbors", "cat")
    listed = run_json("cache", "list")
    (entry,) = listed["entries"]
    assert entry["name"] == "gpt2" and entry["repo"] == "openai-community/gpt2" and entry["commit"] == COMMIT
    assert entry["bytes"] == sum(f.stat().st_size for f in Path(entry["path"]).iterdir())
    assert [m["cached"] for m in run_json("models")["models"]] == [True] + [False] * (len(names) - 1)
    assert "1 entry," in " ".join(run_cli("cache", "list").stdout.split())
    assert run_json("cache", "clear", "xl")["entries"] == []  # another model: nothing removed
    cleared = run_json("cache", "clear", "small")
    assert [e["commit"] for e in cleared["entries"]] == [COMMIT] and cleared["total_bytes"] == entry["bytes"]
    assert run_json("cache", "list")["entries"] == [] and not Path(entry["path"]).exists()
    run_json("neighbors", "cat")  # fetched again on the next use
    assert len(run_json("cache", "clear")["entries"]) == 1
