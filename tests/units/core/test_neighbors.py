"""What core/neighbors.py decides, pinned where a mutation run found it loose (issue 43, point 4): with
--fold, every row shown is checked against its checksum before anything is printed, the forms folded into a
row as well as the row's head, and only the forms among the candidates; ranks count from 1."""

from __future__ import annotations

from pathlib import Path

import gpt2emb
from gpt2emb.report import QuietReporter

from conftest import run_json
from fakehub import FakeHub
from tinymodel import Tiny


def test_a_folded_row_s_every_form_is_checked_before_it_is_shown(hub: FakeHub) -> None:
    m = gpt2emb.open("gpt2", reporter=QuietReporter())
    item = m.neighbors("kitten", k=3, fold=True).to_dict()["items"][0]
    shown = {f["id"] for n in item["neighbors"] for f in n["forms"]}
    heads = {n["id"] for n in item["neighbors"]}
    assert shown - heads  # a form that is not its row's head: " cats" under " cat"
    checked = set(m.model.sound["wte"].nonzero()[0].tolist())  # the rows check_rows found sound
    assert shown | {t["id"] for t in item["tokens"]} <= checked


def test_ranks_count_from_1(hub: FakeHub) -> None:
    doc = run_json("neighbors", "king", "cat", "-k", "4")
    for item in doc["items"]:
        assert [n["rank"] for n in item["neighbors"]] == [1, 2, 3, 4]
    folded = run_json("neighbors", "kitten", "-k", "3", "--fold")["items"][0]["neighbors"]
    assert [n["rank"] for n in folded] == [1, 2, 3]


def test_a_folded_row_lists_only_the_forms_among_the_candidates(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    """kitten's nearest word is cat (" cat", " cats"): with --among naming " cat" alone, its row lists " cat"
    alone."""
    item = run_json("neighbors", "kitten", "-k", "1", "--fold")["items"][0]
    assert {f["id"] for f in item["neighbors"][0]["forms"]} >= {tiny.id("cat"), tiny.id("cats")}
    listed = tmp_path / "few.txt"
    listed.write_text("cat\ndog\n", encoding="utf-8")
    among = run_json("neighbors", "kitten", "-k", "1", "--fold", "--among", str(listed))["items"][0]
    assert [f["id"] for f in among["neighbors"][0]["forms"]] == [tiny.id("cat")]
