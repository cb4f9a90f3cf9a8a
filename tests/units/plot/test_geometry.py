"""plot/geometry.py, geometry --figure: histograms of cosines against random directions. Pinned on known
answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from gpt2emb.plot import geometry


def test_a_table_past_2048_rows_is_counted_on_2048_drawn_at_random() -> None:
    rng = np.random.default_rng(5)
    wte, wpe = rng.normal(size=(3000, 8)), rng.normal(size=(3, 8))
    model = SimpleNamespace(wte=wte, wpe=wpe, shape=SimpleNamespace(position_table=True))
    found = geometry.histograms(cast(Any, SimpleNamespace(model=model)))
    assert list(found) == [
        "token pairs (2,048 drawn at random tokens)",
        "position pairs (all positions)",
        "token against position (2,048 drawn at random tokens)",
    ]
    assert [pairs for _, pairs in found.values()] == [2048 * 2047 // 2, 3, 2048 * 3]
    assert [int(counts.sum()) for counts, _ in found.values()] == [2048 * 2047 // 2, 3, 2048 * 3]
