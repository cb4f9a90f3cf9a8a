"""What core/lab.py decides, pinned where a mutation run found it loose (issue 43, point 4): each part's
failure is named by its own number, whichever part fails; the page says the revision asked for, unless it is
the commit itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpt2emb.errors import NetworkError

from conftest import COMMIT, run_cli
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


def test_the_page_says_the_revision_asked_unless_it_is_the_commit(hub: FakeHub, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "lab.html"
    for revision, said in ((COMMIT, ""), ("main", " at revision <b>main</b>")):
        result = run_cli("lab", "-m", "openai-community/gpt2", "--revision", revision, "--html", str(target))
        assert result.exit_code == 0, result.output + result.stderr
        page = target.read_text(encoding="utf-8")
        assert f"the Hub repo openai-community/gpt2{said}, commit <code>{COMMIT}</code>" in page
