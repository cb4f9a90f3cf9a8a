"""`similarity WORD WORD...`: the cosine matrix against numpy on the fixture's own rows, the table's headers,
and one word refused."""

import numpy as np

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


def test_similarity(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("similarity", "cat", "cats", "dog")
    assert [i["word"] for i in doc["items"]] == ["cat", "cats", "dog"]
    rows = tiny.wte[[tiny.id("cat"), tiny.id("cats"), tiny.id("dog")]].astype(np.float64)
    unit = rows / np.linalg.norm(rows, axis=1)[:, None]
    np.testing.assert_allclose(np.array(doc["matrix"]), unit @ unit.T, atol=1e-6)
    assert doc["matrix"][0][1] > doc["matrix"][0][2]  # cat is closer to cats than to dog
    table = run_cli("similarity", "cat", "cats", "dog")
    assert table.exit_code == 0 and '" cats"' in table.stdout and "0.989" in table.stdout
    # a column is headed by the text its word's tokens spell, as the rows show them: cat is " cat", id:N is N
    ids = run_cli("similarity", "cat", f"id:{tiny.id('cat')}")
    assert ids.stdout.count('" cat"') == 4  # both headers and both rows
    one = run_cli("similarity", "cat")
    assert one.exit_code == 2 and "at least two words" in one.stderr
