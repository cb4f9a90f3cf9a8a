"""What core/analogy.py decides, pinned where a mutation run found it loose (issue 43, point 4): a line of
stdin that is not a question is named by its first 80 characters, then ...."""

from __future__ import annotations

from typing import Any

from conftest import run_cli
from fakehub import FakeHub


def test_a_long_line_that_is_no_question_is_named_by_its_first_80_characters(
    hub: FakeHub, stdin: Any
) -> None:
    line = "king " + "x" * 76  # 81 characters, two words: not A B C, and no sign
    assert len(line) == 81
    stdin(f"{line}\n".encode())
    bad = run_cli("analogy", "-")
    assert bad.exit_code == 7
    assert f'line 1: "{line[:80]}"... is not three words A B C' in bad.stderr
