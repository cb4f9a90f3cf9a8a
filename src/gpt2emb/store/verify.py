"""cache verify: every file of an entry read against the SHA-256 recorded when it was built.

With --repair, a damaged entry is rebuilt from its source, or removed when that is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

from gpt2emb import registry
from gpt2emb.errors import Gpt2embError
from gpt2emb.registry import ModelRef
from gpt2emb.report import QuietReporter, Reporter, Task
from gpt2emb.store import checkpoint
from gpt2emb.store.build import build_entry
from gpt2emb.store.entries import (
    RECORDS,
    UNTRUSTED,
    OtherVersion,
    folder_size,
    live_folders,
    parents,
    read_manifest,
    remove_folder,
)
from gpt2emb.store.install import locked
from gpt2emb.store.manage import ListedEntry, entry_of, unchanged_file, unchanged_folder
from gpt2emb.store.revisions import check_record


@dataclass(frozen=True)
class Verified:
    """One entry read in full against its checksums by `cache verify`."""

    entry: ListedEntry
    damaged: tuple[str, ...]  # files that do not match their SHA-256
    problem: str  # what is wrong, in words, or "" when the entry is sound
    repaired: str = ""  # "rebuilt", or "removed" when its source is gone (the next use builds it anew)

    @property
    def ok(self) -> bool:
        return not self.problem or bool(self.repaired)


def verify(ref: ModelRef | None, repair: bool = False, reporter: Reporter | None = None) -> list[Verified]:
    """Read every file of every entry, or of one model's, against the SHA-256 recorded when it was built.

    With repair, rebuild each entry that is damaged or was written by another version.
    """
    reporter = reporter or QuietReporter()
    folders = [entry for parent in parents(ref) for entry in live_folders(parent)]
    sizes = {f: folder_size(f) for f in folders}
    with reporter.progress("verifying the cache", sum(sizes.values())) as task:
        checked = [_verify_entry(f, sizes[f], task) for f in folders]
    checked += [v for parent in parents(ref) for v in _verify_records(parent, checked)]
    if repair:
        checked = [_repair(v, reporter) if v.problem else v for v in checked]
    return checked


def _verify_records(parent: Path, checked: list[Verified]) -> list[Verified]:
    """The records of a model's checkpoints that do not check, each a row of its own.

    A record is info/<commit>.json, what an entry is built from. Its row is named as the entry of its commit.
    """
    names = {v.entry.commit: v.entry for v in checked if v.entry.path.parent == parent}
    found: list[Verified] = []
    try:
        records = sorted(p for p in (parent / RECORDS).glob("*.json") if not p.name.startswith("."))
    except OSError:  # no records
        return found
    for record in records:
        commit = record.name.removesuffix(".json")
        try:
            raw = json.loads(record.read_bytes())
            if isinstance(raw, dict) and raw.get("format") != checkpoint.INFO_FORMAT:
                continue  # an older gpt2emb's record is never trusted, and is read from the model again
            check_record(raw, commit)
            continue
        except (*UNTRUSTED, RecursionError) as e:
            problem = f"{RECORDS}/{record.name} cannot be trusted ({e})"
        size = record.stat().st_size if record.is_file() else 0
        entry = names.get(commit) or entry_of(parent / commit, None, size)
        found.append(Verified(replace(entry, path=record, size=size), (f"{RECORDS}/{record.name}",), problem))
    return found


def _verify_entry(path: Path, size: int, task: Task) -> Verified:
    try:
        manifest = read_manifest(path)
        task.advance((path / "manifest.json").stat().st_size)
    except OtherVersion as e:
        return Verified(entry_of(path, None, size), (), str(e))
    except UNTRUSTED:
        return Verified(entry_of(path, None, size), ("manifest.json",), "manifest.json is damaged")
    damaged = tuple(f for f, digest in manifest["sha256"].items() if _sha256(path / f, task) != digest)
    verb = "does not match its checksum" if len(damaged) == 1 else "do not match their checksums"
    problem = f"{', '.join(damaged)} {verb}"
    return Verified(entry_of(path, manifest, size), damaged, problem if damaged else "")


def _sha256(path: Path, task: Task) -> str | None:
    h = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
                task.advance(len(chunk))
    except OSError:
        return None
    return h.hexdigest()


def _repair(damaged: Verified, reporter: Reporter) -> Verified:
    """Rebuild a damaged entry from its source at the same commit, beside it.

    The damaged one is kept if that fails, since offline it still answers from its sound rows. It is removed
    once the new one is in place.
    """
    entry = damaged.entry
    if entry.path.parent.name == RECORDS:  # a checkpoint's record is read from the model again when next used
        try:
            entry.path.unlink(missing_ok=True)
        except OSError as e:
            reporter.note(f"could not remove {entry.path}: {e.strerror or e}")
            return damaged
        return replace(damaged, repaired="removed")
    source = _source(entry)
    if source is None:
        reason = remove_folder(entry.path, whole=False)
        if reason:
            reporter.note(f"could not remove the cache entry of {entry.name} ({entry.commit[:12]}): {reason}")
            return damaged
        return replace(damaged, repaired="removed")
    with locked(entry.path.parent, entry.commit):
        try:
            if source.static:  # read from its file again, which is the one it was read from
                from gpt2emb.store import static

                static.build_static(source, entry.commit, entry.path.parent, reporter)
            else:
                # Not checkpoint_info, which records the commit as the one "main" means: this may be older.
                build_entry(source, checkpoint.read_info(source, entry.commit), entry.path.parent, reporter)
        except (Gpt2embError, OSError) as e:
            reporter.note(f"could not rebuild the cache entry of {entry.name} ({entry.commit[:12]}): {e}")
            return damaged
    return replace(damaged, repaired="rebuilt")


def _source(entry: ListedEntry) -> ModelRef | None:
    """Where an entry can be rebuilt from: its Hub repo at its commit, or its folder or file if unchanged."""
    if entry.repo is not None:
        spec = registry.find(entry.repo)
        return ModelRef(spec.name if spec else entry.repo, repo=entry.repo, spec=spec)
    with contextlib.suppress(*UNTRUSTED):
        manifest = json.loads((entry.path / "manifest.json").read_text())
        if manifest.get("file"):
            file = unchanged_file(manifest)
            return None if file is None else ModelRef(entry.name, file=file, encoding=manifest["encoding"])
        folder = unchanged_folder(manifest)
        if folder is not None:
            return ModelRef(entry.name, folder=folder)
    return None
