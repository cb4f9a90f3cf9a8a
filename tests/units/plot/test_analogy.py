"""plot/analogy.py, analogy --figure: the inputs, the point their sum reaches and the answers on their
principal plane. Pinned on known answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_json
from drawn import captured, drawn
from fakehub import FakeHub

pytest.importorskip("matplotlib")

from gpt2emb.quoting import quote


def test_an_input_ranked_among_the_answers_is_marked_with_a_star(hub: FakeHub, tmp_path: Path) -> None:
    """--keep-inputs: woman, an input, is the second answer (cosine 1/sqrt(2) with king - man + woman in the
    tiny model); its label, and its alone, ends in " *". Each answer's score is written to 3 decimals."""
    args = ("analogy", "king", "man", "woman", "-k", "4", "--keep-inputs")
    with captured() as figures:
        doc = run_json(*args, "--figure", str(tmp_path / "a.png"))
    texts = drawn(figures[0])["panels"][0]["texts"]
    assert texts[:3] == ['" king" (input)', '" man" (input)', '" woman" (input)']
    assert texts[3:5] == ['" queen" 1.000', '" woman" 0.707 *']
    assert [r["input"] for r in doc["results"]] == [False, True, False, False]
    assert texts[5:] == [f"{quote(r['token'])} {r['score']:.3f}" for r in doc["results"][2:]]
