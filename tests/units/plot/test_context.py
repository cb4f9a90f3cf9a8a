"""plot/context.py, context --figure: the cosine of the word's vectors in each pair of sentences, layer by
layer. Pinned on known answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_json
from drawn import captured
from fakehub import FakeHub

pytest.importorskip("matplotlib")

LONG = "the cat and king is a man and the cat"  # 37 characters


def test_a_sentence_is_named_in_the_legend_by_its_first_28_characters(hub: FakeHub, tmp_path: Path) -> None:
    with captured() as figures:
        run_json("context", "king", "the king", LONG, "--figure", str(tmp_path / "c.png"))
    legend = figures[0].axes[0].get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == [
        '1 vs 2: "the king" / "the cat and king is a man an"...'
    ]
