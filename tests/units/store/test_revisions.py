"""store/revisions.py: which commit a name means, and the record of each commit's checkpoint.

A local folder without a config.json is told, a record that cannot be put in place leaves no file behind,
and a record this version wrote is read without the network."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpt2emb import registry
from gpt2emb.store import entries, revisions

from conftest import COMMIT, run_cli
from fakehub import FakeHub
from tinymodel import Tiny, hub_files, save_local


def test_a_folder_without_a_config_is_told_what_a_local_model_is(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "model")
    (folder / "config.json").unlink()
    result = run_cli("vector", "cat", "-m", str(folder))
    assert result.exit_code == 6 and result.stdout == ""
    assert result.stderr == (
        f"gpt2emb: {folder} has no config.json: a local model is a folder saved by save_pretrained\n"
    )


def test_a_record_that_cannot_be_put_in_place_leaves_no_file(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header and the commit of main are written beside their place, then renamed into it; where the
    rename fails (a full disk, a folder another process holds), the written copy goes too, and the header
    still answers."""

    ref = registry.resolve("gpt2")
    ours, real = entries.repo_dir(ref), os.replace

    def refused(src: Any, dst: Any) -> None:
        if ours in Path(dst).parents:  # the Hub client's own files still land in the HF cache
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", refused)
    info = revisions.checkpoint_info(ref)
    assert info.commit == COMMIT
    assert [p for p in entries.repo_dir(ref).rglob("*") if p.is_file()] == []


def _edited(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The record with these fields changed, its checksum made to match: only the fields can refuse it."""
    edited = {**record, **changes}
    edited[entries.SELF_CHECK] = entries.record_digest(edited)
    return edited


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: _edited(r, format=r["format"] + 1),  # a later gpt2emb's, its checksum sound
        lambda r: [r],  # no object
        lambda r: _edited(r, commit="f" * 40),  # another commit's record under this commit's name
        lambda r: _edited(r, tensors=[]),
        lambda r: _edited(r, tensors=None),
    ],
    ids=["later-format", "list", "other-commit", "tensors-list", "tensors-null"],
)
def test_a_record_that_cannot_be_trusted_is_read_again_from_the_model(hub: FakeHub, edit: Any) -> None:
    ref = registry.resolve("gpt2")
    first = revisions.checkpoint_info(ref)
    record = entries.repo_dir(ref) / entries.RECORDS / f"{COMMIT}.json"
    sound = json.loads(record.read_bytes())
    record.write_text(json.dumps(edit(sound)))
    again = revisions.checkpoint_info(ref, COMMIT)
    assert again == first and again.commit == COMMIT
    assert json.loads(record.read_bytes()) == sound  # written anew, as the model gives it


def test_a_refresh_whose_build_fails_leaves_the_branch_where_it_was(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    """cache refresh records a moved branch's new commit once that commit's entry is built: when the build
    fails after the header was read, main still names the commit whose entry answers."""
    newer = "c" * 40
    run_cli("vector", "cat", "--json")  # main's entry, at COMMIT
    hub.repos["openai-community/gpt2"].push(newer, hub_files(tiny))  # main moves on the Hub
    hub.fault = lambda method, path: "drop" if newer in path and "tokenizer" in path else None
    doc = json.loads(run_cli("cache", "refresh", "--json").stdout)
    assert doc["revisions"] == [] and [f["model"] for f in doc["failed"]] == ["gpt2"]
    refs = entries.repo_dir(registry.resolve("gpt2")) / "refs"
    assert {p.name: p.read_text() for p in refs.iterdir()} == {"main": COMMIT}


def test_a_record_this_version_wrote_is_read_without_the_network(hub: FakeHub) -> None:
    """info/<commit>.json of format 3 (what this version writes): read as it is, never fetched again, so that
    a cache this gpt2emb filled keeps working offline; a later format would be one bump away from it."""
    from gpt2emb.store import entries, revisions

    ref = registry.resolve("gpt2")
    first = revisions.checkpoint_info(ref)
    record = entries.repo_dir(ref) / entries.RECORDS / f"{COMMIT}.json"
    raw = json.loads(record.read_bytes())
    raw["format"] = 3
    raw[entries.SELF_CHECK] = entries.record_digest(raw)
    record.write_text(json.dumps(raw))
    hub.requests.clear()
    hub.fault = lambda method, path: "drop"
    assert revisions.checkpoint_info(ref, COMMIT) == first
    assert hub.requests == [] and json.loads(record.read_bytes())["format"] == 3
