"""store/hub.py: the Hub's answers through huggingface_hub, and the commit ids it gives.

An answer that huggingface_hub refuses is told as unusable, and a commit id the Hub gives that is no commit
name of ours is refused, on a first use and on `cache refresh`."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny


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


def test_a_commit_id_that_is_no_name_of_ours_is_refused_on_a_first_use(
    hub: FakeHub, caches: dict[str, Path]
) -> None:
    # huggingface_hub takes "-x" (a folder in its snapshots); a name starting with "-" is no commit of ours
    hub.repos["someone/odd"] = Repo("-x", hub.repos["openai-community/gpt2"].files)
    result = run_cli("vector", "cat", "-m", "someone/odd")
    assert result.exit_code == 6 and result.stdout == ""
    assert result.stderr == "gpt2emb: the Hub gave someone/odd a commit id that is not one ('-x')\n"


def test_a_commit_id_that_is_no_name_of_ours_is_refused_by_refresh(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    run_json("tying")  # records main's commit
    repo = hub.repos["openai-community/gpt2"]
    repo.push("a/b", repo.files)  # the Hub now says main is at a path
    result = run_cli("cache", "refresh", "small")
    assert result.exit_code == 6
    assert result.stderr == (
        "gpt2emb: the Hub gave openai-community/gpt2 a commit id that is not one ('a/b')\n"
    )
