"""`vector WORD...`: a word's row of wte against the fixture's own, its norm, the table's --dims and
--full, and a word of white space quoted in its title."""

import numpy as np
import pytest

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


def test_vector(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("vector", "king", "id:5")
    king = doc["items"][0]
    assert king["vector"] == pytest.approx(tiny.wte[tiny.id("king")].tolist())
    assert king["norm"] == pytest.approx(float(np.linalg.norm(tiny.wte[tiny.id("king")])), rel=1e-6)
    assert doc["items"][1]["tokens"][0]["id"] == 5
    table = run_cli("vector", "king", "--dims", "3")
    assert "(29 more; --full)" in table.stdout
    assert f"{tiny.wte[tiny.id('king')][0]:+.4f}" in table.stdout
    assert "more; --full" not in run_cli("vector", "king", "--full").stdout


def test_a_word_of_white_space_is_quoted_in_its_title(hub: FakeHub) -> None:
    spaces = run_cli("vector", "--exact", "  ")
    assert spaces.exit_code == 0 and '\n"  " in gpt2: ' in "\n" + spaces.stdout
    assert "\nking in gpt2: " in "\n" + run_cli("vector", "king").stdout  # a plain word as typed
