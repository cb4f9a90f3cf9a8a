"""plot/analogy.py, analogy --figure: the inputs, the point their sum reaches and the answers on their
principal plane. Pinned on known answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkpoints import folder_of
from conftest import run_json
from drawn import captured, drawn
from fakehub import FakeHub
from tinymodel import Tiny, safetensors_bytes

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


def test_a_row_of_zeros_among_the_answers_is_drawn_as_one(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """3cosadd ranks unit rows, and so the figure draws them. A row of zeros (a padding row some models
    keep) has no direction: it is drawn as the zero vector it is, and every point stays finite. Every row
    but the inputs, queen and row 7 points against the sum, so the row of zeros (cosine 0) is the second
    answer."""
    import numpy as np

    words = [tiny.id(w) for w in ("king", "man", "woman", "queen")]
    unit = tiny.wte / np.linalg.norm(tiny.wte, axis=1, keepdims=True)
    wte = np.tile(-(unit[words[0]] - unit[words[1]] + unit[words[2]]), (len(tiny.wte), 1))
    wte[words] = tiny.wte[words]
    wte[7] = 0
    state = {**tiny.state(), "wte.weight": wte.astype(np.float32)}
    folder = folder_of(tiny, tmp_path / "m", {"model.safetensors": safetensors_bytes(state)})
    with captured() as figures:
        doc = run_json(
            "analogy", "king", "man", "woman", "-m", str(folder), "-k", "3", "--method", "3cosadd",
            "--figure", str(tmp_path / "a.png"),
        )  # fmt: skip
    assert [r["id"] for r in doc["results"]][:2] == [words[3], 7] and doc["results"][1]["score"] == 0
    points = np.concatenate([np.reshape(p, (-1, 2)) for p in drawn(figures[0])["panels"][0]["points"]])
    assert len(points) == 3 + 1 + 3 and np.isfinite(points).all()
