"""--revision (a branch, tag or commit id of a Hub model) and `cache refresh`, through the CLI.

The fake repo openai-community/gpt2 has main (COMMIT, the tiny model), a branch `retrained` (BRANCH: kitten is
no longer like cat) and a tag `v1` on main's commit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import gpt2emb
from gpt2emb.report import QuietReporter

from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, save_local

BRANCH = "b" * 40
NEWER = "c" * 40
REPO = "openai-community/gpt2"


def changed(tiny: Tiny, seed: int) -> Tiny:
    """The tiny model with kitten moved away from cat and the first position row scaled."""
    other = Tiny(tiny.tokenizer, tiny.config, tiny.wte.copy(), tiny.wpe.copy(), tiny.blocks)
    other.wte[tiny.id("kitten")] = np.random.default_rng(seed).normal(0, 1, tiny.wte.shape[1])
    other.wpe[0] *= 3
    return other


@pytest.fixture
def branch(hub: FakeHub, tiny: Tiny) -> Tiny:
    retrained = changed(tiny, 1)
    hub.repos[REPO].push(BRANCH, hub_files(retrained), branch="retrained")
    hub.repos[REPO].refs["v1"] = COMMIT
    return retrained


def neighbors(*args: str) -> list[str]:
    doc = run_json("neighbors", "cat", "-k", "5", *args)
    return [n["token"] for n in doc["items"][0]["neighbors"]]


def asked(hub: FakeHub) -> set[str]:
    """The revisions named in the Hub paths requested."""
    return {path.split("/resolve/")[1].split("/")[0] for _, path, _ in hub.requests if "/resolve/" in path}


def refs(caches: dict[str, Path]) -> dict[str, str]:
    folder = caches["cache"] / "hub" / "openai-community--gpt2" / "refs"
    return {p.name: p.read_text() for p in sorted(folder.glob("*"))} if folder.is_dir() else {}


def entries(caches: dict[str, Path]) -> list[str]:
    return sorted(p.parent.name for p in caches["cache"].rglob("manifest.json"))


def test_a_branch_and_a_commit(hub: FakeHub, branch: Tiny, caches: dict[str, Path]) -> None:
    assert " kitten" in neighbors()
    on_branch = run_json("neighbors", "cat", "-k", "5", "--revision", "retrained")
    assert on_branch["model"] == "gpt2@retrained"
    assert " kitten" not in [n["token"] for n in on_branch["items"][0]["neighbors"]]
    assert refs(caches) == {"main": COMMIT, "retrained": BRANCH}
    assert entries(caches) == sorted([COMMIT, BRANCH])

    # a whole commit id is itself: it opens the branch's entry without asking anyone, not even the HF cache
    shutil.rmtree(caches["hf"])
    hub.requests.clear()
    hub.fault = lambda method, path: "drop"
    by_commit = run_json("neighbors", "cat", "-k", "5", "--revision", BRANCH)
    assert by_commit["model"] == f"gpt2@{BRANCH}" and by_commit["items"] == on_branch["items"]
    assert hub.requests == []
    assert refs(caches) == {"main": COMMIT, "retrained": BRANCH}  # a commit id is never recorded as a ref
    hub.fault = None

    assert neighbors("--revision", "v1") == neighbors()  # a tag
    assert neighbors("--revision", "main") == neighbors()


def test_a_commit_id_on_first_use_asks_no_ref(hub: FakeHub, branch: Tiny, caches: dict[str, Path]) -> None:
    assert " kitten" not in neighbors("--revision", BRANCH)
    assert asked(hub) == {BRANCH}  # never main or a branch: files are fetched at that commit
    assert refs(caches) == {} and entries(caches) == [BRANCH]


@pytest.mark.parametrize(
    "command",
    [
        ["vector", "kitten", "--full"],
        ["neighbors", "cat"],
        ["analogy", "king", "man", "woman"],
        ["similarity", "cat", "kitten"],
        ["positions", "0", "1"],
        ["tying"],
    ],
)
def test_every_weight_command_reads_the_revision(hub: FakeHub, branch: Tiny, command: list[str]) -> None:
    doc = run_json(*command, "--revision", "retrained")
    assert doc["model"] == "gpt2@retrained"
    if command[0] == "vector":
        np.testing.assert_allclose(doc["items"][0]["vector"], branch.wte[branch.id("kitten")], rtol=1e-6)
    if command[0] == "positions":
        assert doc["norms"][0] == pytest.approx(float(np.linalg.norm(branch.wpe[0])), rel=1e-5)
    assert asked(hub) >= {"retrained", BRANCH} and "main" not in asked(hub)


def test_revision_is_for_hub_models_only(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    folder = str(save_local(tiny, tmp_path / "model"))
    for args in (["-m", folder], ["-m", "gpt2", "-m", folder]):  # checked before gpt2 is fetched
        result = run_cli("neighbors", "cat", *args, "--revision", "v1")
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f"gpt2emb: --revision is for Hub models, and {folder} is a local folder: leave it out"
        )
    assert run_cli("tying", "-m", folder, "--revision", "main").exit_code == 2
    assert hub.requests == []


@pytest.mark.parametrize("revision", ["../../x", "a b", "-x", "x/", ".hidden", "a\nb", ""])
def test_a_revision_that_is_no_name(hub: FakeHub, revision: str, caches: dict[str, Path]) -> None:
    result = run_cli("vector", "cat", "--revision", revision)
    assert result.exit_code == 2 and "is not a branch, tag or commit id" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and hub.requests == []
    assert not caches["cache"].exists()


def test_a_revision_the_repo_lacks(hub: FakeHub, caches: dict[str, Path]) -> None:
    result = run_cli("vector", "cat", "--revision", "nope")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"gpt2emb: {REPO} has no revision nope: give one of its branches, tags or commit ids"
    )
    assert entries(caches) == [] and refs(caches) == {}


def test_offline_a_revision_not_cached_is_exit_4(
    hub: FakeHub, branch: Tiny, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    neighbors("--revision", "retrained")
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    hub.requests.clear()
    assert " kitten" not in neighbors("--revision", "retrained")  # cached: works offline
    assert " kitten" not in neighbors("--revision", BRANCH)
    for revision, said in [("v1", f"{REPO} at revision v1"), (NEWER, f"{REPO} at commit {NEWER}")]:
        result = run_cli("neighbors", "cat", "--revision", revision)
        assert result.exit_code == 4, result.output
        assert result.stderr.strip() == (
            f"gpt2emb: {said} is not cached and HF_HUB_OFFLINE is set: run once with the network to fetch "
            "it, or try the tiny example model (python docs/examples/tiny_gpt2.py, then -m ./tiny-gpt2)"
        )
    assert hub.requests == []


# ---------------------------------------------------------------- cache refresh


def test_main_is_looked_up_once_until_refresh(
    hub: FakeHub, tiny: Tiny, branch: Tiny, caches: dict[str, Path]
) -> None:
    assert " kitten" in neighbors()
    neighbors("--revision", "retrained")
    newer = changed(tiny, 2)
    hub.repos[REPO].push(NEWER, hub_files(newer))  # main moves on the Hub
    hub.requests.clear()
    assert " kitten" in neighbors()  # still the recorded commit: no request at all
    assert hub.requests == []

    doc = run_json("cache", "refresh")
    assert doc["revisions"] == [
        {"model": "gpt2", "repo": REPO, "revision": "main", "old_commit": COMMIT, "new_commit": NEWER,
         "rebuilt": True},
        {"model": "gpt2", "repo": REPO, "revision": "retrained", "old_commit": BRANCH, "new_commit": BRANCH,
         "rebuilt": False},
    ]  # fmt: skip
    assert refs(caches) == {"main": NEWER, "retrained": BRANCH}
    assert entries(caches) == sorted([COMMIT, BRANCH, NEWER])  # the old commit's entry stays
    hub.requests.clear()
    assert " kitten" not in neighbors()  # main is now the newer commit, built by the refresh
    assert hub.requests == []
    assert " kitten" in neighbors("--revision", COMMIT)  # the old commit is still there by its id

    again = run_json("cache", "refresh", "gpt2")
    assert [(r["new_commit"], r["rebuilt"]) for r in again["revisions"]] == [(NEWER, False), (BRANCH, False)]
    table = run_cli("cache", "refresh")
    assert table.exit_code == 0 and "2 revisions: 0 moved" in table.stdout and "up to date" in table.stdout


def test_refresh_without_an_entry_moves_the_ref_only(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    run_json("tying")  # reads the config and header: records main, builds no entry
    assert refs(caches) == {"main": COMMIT} and entries(caches) == []
    hub.repos[REPO].push(NEWER, hub_files(changed(tiny, 2)))
    doc = run_json("cache", "refresh", "small")
    assert [(r["old_commit"], r["new_commit"], r["rebuilt"]) for r in doc["revisions"]] == [
        (COMMIT, NEWER, False)
    ]
    assert refs(caches) == {"main": NEWER} and entries(caches) == []
    table = run_cli("cache", "refresh")
    assert "1 revision: 0 moved" in table.stdout


def test_refresh_only_the_model_named(hub: FakeHub, tiny: Tiny, caches: dict[str, Path]) -> None:
    hub.repos["someone/other"] = Repo("d" * 40, hub_files(tiny))
    neighbors()
    neighbors("-m", "someone/other")
    assert [r["repo"] for r in run_json("cache", "refresh")["revisions"]] == [
        "openai-community/gpt2",
        "someone/other",
    ]
    assert [r["repo"] for r in run_json("cache", "refresh", "someone/other")["revisions"]] == [
        "someone/other"
    ]
    empty = run_cli("cache", "refresh", "xl")
    assert empty.exit_code == 0 and empty.stdout.startswith("nothing to refresh")


def test_refresh_needs_the_hub(hub: FakeHub, caches: dict[str, Path], offline: None) -> None:
    caches["cache"].joinpath("hub", "openai-community--gpt2", "refs").mkdir(parents=True)
    caches["cache"].joinpath("hub", "openai-community--gpt2", "refs", "main").write_text(COMMIT)
    result = run_cli("cache", "refresh", "--json")
    message = f"asking the Hub which commit main of {REPO} is now needs the network: unset HF_HUB_OFFLINE"
    assert result.exit_code == 4  # offline, as everywhere else
    assert json.loads(result.stdout)["failed"] == [{"model": "gpt2", "message": message, "code": 4}]
    assert json.loads(result.stderr)["error"]["message"] == message


def test_refresh_asks_every_repo_even_when_one_is_gone(hub: FakeHub, caches: dict[str, Path]) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0
    gone = caches["cache"].joinpath("hub", "aaa--gone", "refs")  # sorts before gpt2
    gone.mkdir(parents=True)
    gone.joinpath("main").write_text("a" * 40)
    result = run_cli("cache", "refresh", "--json")
    doc = json.loads(result.stdout)
    assert [(r["model"], r["revision"]) for r in doc["revisions"]] == [("gpt2", "main")]  # still asked
    assert [f["model"] for f in doc["failed"]] == ["aaa/gone"] and result.exit_code == 3


def test_refresh_a_folder_is_usage(tiny: Tiny, tmp_path: Path) -> None:
    folder = str(save_local(tiny, tmp_path / "model"))
    result = run_cli("cache", "refresh", folder)
    assert result.exit_code == 2 and "is a local folder" in result.stderr


def test_refresh_when_the_hub_fails(hub: FakeHub, tiny: Tiny, caches: dict[str, Path]) -> None:
    neighbors()
    hub.repos[REPO].push(NEWER, hub_files(changed(tiny, 2)))
    hub.fault = lambda method, path: "500"
    result = run_cli("cache", "refresh")
    assert result.exit_code == 5
    assert result.stderr.startswith(
        f"gpt2emb: asking the Hub which commit main of {REPO} is now failed (HTTP 500"
    )
    assert refs(caches) == {"main": COMMIT} and entries(caches) == [COMMIT]


def test_refresh_a_branch_deleted_on_the_hub(hub: FakeHub, branch: Tiny, caches: dict[str, Path]) -> None:
    neighbors("--revision", "retrained")
    neighbors()
    del hub.repos[REPO].refs["retrained"]
    result = run_cli("cache", "refresh", "--json")
    assert result.exit_code == 0, result.output
    assert [r["revision"] for r in json.loads(result.stdout)["revisions"]] == ["main"]
    assert json.loads(result.stderr) == {
        "note": f"{REPO} has no retrained any more: gpt2@retrained stays at commit {BRANCH[:12]}"
    }
    assert refs(caches) == {"main": COMMIT, "retrained": BRANCH}
    assert " kitten" not in neighbors("--revision", "retrained")


def test_a_handle_opened_at_a_revision_runs_it_whole_there(hub: FakeHub, branch: Tiny) -> None:
    """tying and context from a handle opened with revision= read that revision, as --revision does."""
    m = gpt2emb.open("gpt2", revision="retrained", reporter=QuietReporter())
    assert m.tying().to_dict() == run_json("tying", "--revision", "retrained")
    sentences = ["the cat and king", "hello king is a man"]
    doc = run_json("context", "king", *sentences, "--revision", "retrained")
    assert m.context("king", sentences).to_dict() == doc
