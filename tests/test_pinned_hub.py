"""store/hub.py, pinned where a mutation run (scripts/mutate.py, seed 13) found its tests loose: what an
answer of the Hub that huggingface_hub refuses is told as (tests/test_hardening.py checks the words "unusable
answer" alone, and is left out of the files a run of this module traces)."""

from __future__ import annotations

import re

from conftest import run_cli
from fakehub import FakeHub, Repo


def test_an_answer_the_hub_client_refuses_is_told_in_its_first_line_cut_at_200(hub: FakeHub) -> None:
    hub.repos["someone/sneaky"] = Repo("..", hub.repos["openai-community/gpt2"].files)  # a commit id: a path
    result = run_cli("vector", "cat", "-m", "someone/sneaky")
    assert result.exit_code == 5 and result.stdout == ""
    found = re.fullmatch(
        r"gpt2emb: someone/sneaky is not cached, and fetching it from the Hub failed "
        r"\(unusable answer: (.*)\); nothing partial is ever used, and the next run resumes the download: "
        r"check the network and run again\n",
        result.stderr,
        re.S,
    )
    assert found is not None, result.stderr
    reason = found[1]
    assert reason.startswith("Invalid pointer path") and "\n" not in reason and len(reason) == 200
