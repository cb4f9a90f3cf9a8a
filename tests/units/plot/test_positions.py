"""plot/positions.py on known answers (issue 53): whether a quantity is flat is a bool, False where nothing
is finite to compare."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from gpt2emb.plot import positions


def test_nothing_finite_is_not_flat_and_the_answer_is_a_bool() -> None:
    for values in (np.array([np.nan, np.inf]), np.array([])):
        assert positions.flat(values) is False and positions.flat(values, scale=1.0) is False
    assert positions.flat(np.array([2.0, 2.0])) is True
