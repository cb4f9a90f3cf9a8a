"""GPT2EMB_CACHE_DIR is a path the user gives, as an argument is: one that is not UTF-8 is refused as such
an argument is (exit 2, the byte named), since the cache folder is written into results (cache path, list)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import run_cli, run_process
from fakehub import FakeHub


@pytest.mark.skipif(sys.platform == "win32", reason="environment variables are UTF-16 there")
def test_a_cache_folder_not_in_utf8_is_refused_naming_the_byte(tmp_path: Path) -> None:
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9")  # Latin-1 é: byte 0xe9 is no UTF-8
    for args in (("cache", "path"), ("cache", "list", "--json"), ("vector", "king")):
        run = run_process(*args, env={"GPT2EMB_CACHE_DIR": name})
        assert run.returncode == 2, run.stderr
        said = run.stderr if "--json" not in args else json.loads(run.stderr)["error"]["message"]
        byte = len(str(tmp_path).encode()) + 5
        assert f"GPT2EMB_CACHE_DIR is not UTF-8 text (byte {byte})" in said
        assert run.stdout == ""
    assert os.listdir(tmp_path) == []  # no cache folder made


@pytest.mark.parametrize("where", ["dangling link", "unknown user"])
def test_a_cache_folder_named_oddly_answers_without_it_or_in_it(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A symbolic link to nothing: the fallback, with one note naming the link's target. ~nosuchuser: kept
    as typed, as a shell keeps it (a folder of that name under the current folder), never a RuntimeError."""
    monkeypatch.chdir(tmp_path)
    if where == "dangling link":
        (tmp_path / "link").symlink_to(tmp_path / "nothere")
        monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(tmp_path / "link"))
    else:
        monkeypatch.setenv("GPT2EMB_CACHE_DIR", "~nosuchuser-gpt2emb/cache")
    result = run_cli("neighbors", "cat", "-k", "1")
    assert result.exit_code == 0, result.stderr
    assert '" cats"' in result.stdout
    if where == "dangling link":
        assert result.stderr.count("working without it") == 1
        assert f"a symbolic link to {tmp_path / 'nothere'}, which does not exist" in " ".join(
            result.stderr.split()
        )
    else:
        assert result.stderr == ""
        assert (tmp_path / "~nosuchuser-gpt2emb" / "cache").is_dir()
        assert run_cli("cache", "path").stdout.strip() == "~nosuchuser-gpt2emb/cache"


def test_every_path_option_expands_home_alike(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """~ is the home folder in -o, --png, --among and --eval alike (the handle takes paths so, too)."""
    home, elsewhere = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    (home / "words.txt").write_text("dog\nking\n")
    (home / "pairs.tsv").write_text("cat\tdog\t1\nking\tqueen\t3\nman\twoman\t2\n")
    (home / "q.txt").write_text(": s\nking queen man woman\n")
    runs = [
        ("export", "--format", "word2vec", "--limit", "2", "-o", "~/v.txt"),
        ("positions", "--heatmap", "--png", "~/p.png"),
        ("neighbors", "cat", "-k", "1", "--among", "~/words.txt"),
        ("similarity", "--eval", "~/pairs.tsv"),
        ("analogy", "--eval", "~/q.txt"),
    ]
    for args in runs:
        result = run_cli(*args)
        assert result.exit_code == 0, (args, result.stderr)
    assert (home / "v.txt").is_file() and (home / "p.png").is_file()
    assert not (elsewhere / "~").exists()


def test_a_relative_cache_folder_keeps_the_entry_it_builds(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GPT2EMB_CACHE_DIR=cache: from Python 3.12, mkdtemp names its folder by an absolute path where the
    cache's is relative, and the build took its own folder for a killed build's leftover and removed it
    (every Python is made to answer as 3.12 does here)."""
    made = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: os.path.abspath(made(*a, **k)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", "cache")
    result = run_cli("neighbors", "cat", "-k", "1")
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    listed = json.loads(run_cli("cache", "list", "--json").stdout)
    assert [e["name"] for e in listed["entries"]] == ["gpt2"]
