"""What core/words.py decides for the word commands, pinned where a mutation run found it loose (issue 43,
point 4): the note of an answer shorter than -k (one token, two tokens, none when exactly k), the handle's
among, a str or a Path and nothing else that only looks like a path, and a word whose row is all zeros
refused by the commands that take its direction."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import gpt2emb
from gpt2emb.errors import UsageError
from gpt2emb.report import QuietReporter

from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files


def notes(tmp_path: Path, words: list[str], k: int) -> list[str]:
    listed = tmp_path / "few.txt"
    listed.write_text("".join(f"{w}\n" for w in words), encoding="utf-8")
    return list(run_json("neighbors", "cat", "-k", str(k), "--among", str(listed))["notes"])


def test_an_answer_shorter_than_k_says_how_many_tokens_were_left(hub: FakeHub, tmp_path: Path) -> None:
    one = [n for n in notes(tmp_path, ["dog"], 3) if "left to rank" in n]
    assert one == ["cat: only 1 token is left to rank, fewer than the 3 asked for (-k)"]
    two = [n for n in notes(tmp_path, ["dog", "kitten"], 3) if "left to rank" in n]
    assert two == ["cat: only 2 tokens are left to rank, fewer than the 3 asked for (-k)"]
    assert not [n for n in notes(tmp_path, ["dog", "kitten", "king"], 3) if "left to rank" in n]


class _Place(os.PathLike[str]):
    """A path-like object that is not a pathlib.Path: its str() is no file name."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __fspath__(self) -> str:
        return str(self.path)


def test_the_handle_s_among_is_a_str_or_a_path(hub: FakeHub, tmp_path: Path) -> None:
    listed = tmp_path / "few.txt"
    listed.write_text("dog\nkitten\n", encoding="utf-8")
    m = gpt2emb.open("gpt2", reporter=QuietReporter())
    for among in (listed, str(listed)):
        found = m.neighbors("cat", k=2, among=among).to_dict()["items"][0]["neighbors"]
        assert {n["token"] for n in found} == {" dog", " kitten"}
    with pytest.raises(UsageError, match=r"among is a file of words \(a str or a Path\), not <"):
        m.neighbors("cat", k=2, among=_Place(listed))  # type: ignore[arg-type]


def test_a_word_whose_row_is_all_zeros_has_no_direction(hub: FakeHub, tiny: Tiny) -> None:
    wte = tiny.wte.copy()
    wte[tiny.id("dog")] = 0.0
    hub.repos["someone/zero"] = Repo(COMMIT, hub_files(dataclasses.replace(tiny, wte=wte)))
    said = "the vector of 'dog' is all zeros: it has no direction, so it has no cosine with anything"
    for args in (["neighbors", "dog"], ["similarity", "cat", "dog"], ["analogy", "king", "dog", "woman"]):
        refused = run_cli(*args, "-m", "someone/zero")
        assert refused.exit_code == 2 and refused.stderr == f"gpt2emb: {said}\n", args
    assert run_json("vector", "dog", "-m", "someone/zero")["items"][0]["norm"] == 0  # its row, shown as it is
