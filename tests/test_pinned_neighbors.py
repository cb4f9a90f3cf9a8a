"""What core/neighbors.py decides, pinned where a mutation run found it loose (issue 43, point 4): with
--fold, every row shown is checked against its checksum before anything is printed, the forms folded into a
row as well as the row's head."""

from __future__ import annotations

import gpt2emb
from gpt2emb.report import QuietReporter

from fakehub import FakeHub


def test_a_folded_row_s_every_form_is_checked_before_it_is_shown(hub: FakeHub) -> None:
    m = gpt2emb.open("gpt2", reporter=QuietReporter())
    item = m.neighbors("kitten", k=3, fold=True).to_dict()["items"][0]
    shown = {f["id"] for n in item["neighbors"] for f in n["forms"]}
    heads = {n["id"] for n in item["neighbors"]}
    assert shown - heads  # a form that is not its row's head: " cats" under " cat"
    checked = set(m.model.sound["wte"].nonzero()[0].tolist())  # the rows check_rows found sound
    assert shown | {t["id"] for t in item["tokens"]} <= checked
