"""What core/lab.py decides, pinned where a mutation run found it loose (issue 43, point 4): each part's
failure is named by its own number, whichever part fails, with a model given or not."""

from __future__ import annotations

from typing import Any

import pytest

from gpt2emb.errors import NetworkError

from conftest import run_cli
from fakehub import FakeHub

TARGETS = {
    1: "gpt2emb.core.vector.vector",
    2: "gpt2emb.core.neighbors.neighbors",
    3: "gpt2emb.core.analogy.analogy",
    4: "gpt2emb.core.sizes.sizes",  # no model given: the four GPT-2 sizes by their formula
    5: "gpt2emb.core.tying.tying",
}


@pytest.mark.parametrize("part", sorted(TARGETS))
def test_a_failing_part_is_named_by_its_number(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, part: int
) -> None:
    def fails(*_: Any, **__: Any) -> Any:
        raise NetworkError("the Hub did not answer")

    monkeypatch.setattr(TARGETS[part], fails)
    result = run_cli("lab")
    assert result.exit_code == 5, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"gpt2emb: part {part}: the Hub did not answer"
