"""What core/cache.py decides, pinned where a mutation run found it loose (issue 43, point 4): `cache list`
lists every entry, not only the outdated ones, and says so in its JSON."""

from __future__ import annotations

from conftest import run_json
from fakehub import FakeHub


def test_cache_list_is_not_a_list_of_the_outdated(hub: FakeHub) -> None:
    run_json("neighbors", "cat")
    listed = run_json("cache", "list")
    assert listed["action"] == "list" and listed["outdated"] is False
    assert [e["outdated"] for e in listed["entries"]] == [False]
    cleared = run_json("cache", "clear")
    assert cleared["action"] == "clear" and cleared["outdated"] is False and len(cleared["entries"]) == 1
