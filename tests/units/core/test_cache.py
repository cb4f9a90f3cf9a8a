"""What core/cache.py decides, pinned where a mutation run found it loose (issue 43, point 4): `cache list`
lists every entry, not only the outdated ones, and says so in its JSON; a local folder that is gone still
names its own entries (and no other), and a name that is no model and no cached folder is refused, nothing
removed."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def test_cache_list_is_not_a_list_of_the_outdated(hub: FakeHub) -> None:
    run_json("neighbors", "cat")
    listed = run_json("cache", "list")
    assert listed["action"] == "list" and listed["outdated"] is False
    assert [e["outdated"] for e in listed["entries"]] == [False]
    cleared = run_json("cache", "clear")
    assert cleared["action"] == "clear" and cleared["outdated"] is False and len(cleared["entries"]) == 1


def test_a_gone_folder_names_its_own_entries_and_no_other(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    run_json("neighbors", "cat")  # gpt2's entry
    folder = save_local(tiny, tmp_path / "gone")
    run_json("neighbors", "cat", "-m", str(folder))
    shutil.rmtree(folder)
    cleared = run_json("cache", "clear", str(folder))
    assert [e["name"] for e in cleared["entries"]] == [str(folder)]
    assert [e["name"] for e in run_json("cache", "list")["entries"]] == ["gpt2"]
    for args in (["cache", "clear", "no-such-model"], ["cache", "verify", "no-such-model"]):
        refused = run_cli(*args)
        assert refused.exit_code == 3, args
        assert "no-such-model" in refused.stderr and "is not" in refused.stderr
    assert [e["name"] for e in run_json("cache", "list")["entries"]] == ["gpt2"]
