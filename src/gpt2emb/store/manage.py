"""Looking after the cache: its entries listed, cleared (all, one model's, or the outdated), and
refreshed (each recorded branch or tag asked of the Hub again)."""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from gpt2emb import registry
from gpt2emb.errors import Gpt2embError, UsageError
from gpt2emb.kept import cache_root
from gpt2emb.registry import ModelRef
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results.cache import RefreshedRevision, RefreshFailure
from gpt2emb.store import hub
from gpt2emb.store.build import open_model
from gpt2emb.store.entries import (
    STATIC,
    UNTRUSTED,
    commit_of,
    folder_fingerprint,
    folder_size,
    generations,
    live_folder,
    live_folders,
    parents,
    remove_folder,
    repo_dir,
)
from gpt2emb.store.revisions import record_commit

# an entry as the cache commands show it (list, verify, clear): not built by a warm open


@dataclass(frozen=True)
class ListedEntry:
    name: str
    repo: str | None
    commit: str
    path: Path
    size: int  # bytes on disk
    outdated: bool = False  # a local folder's entry whose files have changed since it was built, or are gone


def entry_of(path: Path, manifest: dict[str, Any] | None, size: int) -> ListedEntry:
    """What an entry folder holds, from its manifest or, when that is damaged, from where it lies."""
    if manifest is not None:
        return ListedEntry(
            manifest["name"], manifest["repo"], manifest["commit"], path, size, _outdated(manifest)
        )
    repo = path.parent.name.replace("--", "/", 1) if path.parent.parent.name == "hub" else None
    spec = registry.find(repo) if repo is not None else None
    local = "a static file" if path.parent.parent.name == STATIC else "a local folder"
    name = spec.name if spec else repo or f"{local} ({path.parent.name})"
    return ListedEntry(name, repo, commit_of(path), path, size)


def unchanged_folder(manifest: dict[str, Any]) -> Path | None:
    """The local folder an entry was built from, while its files are those it was built from (else None:
    the entry is outdated; so is one of a gpt2emb from before manifests named their folder, never used now).
    OSError where the folder cannot be read."""
    if not manifest.get("folder"):
        return None
    folder = Path(manifest["folder"])
    return folder if folder.is_dir() and folder_fingerprint(folder) == manifest["commit"] else None


def _outdated(manifest: dict[str, Any]) -> bool:
    """Whether an entry is outdated: a local folder's or static file's whose files have changed or are gone
    (a Hub entry never is); not where that cannot be told (a folder that cannot be read): never removed on a
    guess."""
    if manifest["repo"] is not None:
        return False
    try:
        if manifest.get("file"):
            return unchanged_file(manifest) is None
        return unchanged_folder(manifest) is None
    except OSError:
        return False


def unchanged_file(manifest: dict[str, Any]) -> Path | None:
    """The static file an entry was read from, while it is the file it was read from (else None)."""
    from gpt2emb.store import static  # a static file's entry only

    file = Path(manifest["file"])
    same = file.is_file() and static.commit_of(file, str(manifest.get("encoding", ""))) == manifest["commit"]
    return file if same else None


def partials(ref: ModelRef | None = None) -> list[ListedEntry]:
    """Every download kept after an interruption (store/partial.py), by the model it is of: one model's, or
    every model's."""
    from gpt2emb.store import partial

    found = []
    for parent in parents(ref):
        for path in partial.found(parent):
            with contextlib.suppress(OSError):
                listed = entry_of(path, None, path.lstat().st_size)
                found.append(replace(listed, commit=partial.commit_of(path)))
    return found


def unfinished(ref: ModelRef | None = None) -> list[ListedEntry]:
    """The temporary folders of builds (`.<commit>.tmp-*`): one under way, or what a killed one left (a
    pre-allocated wte.npy, as large as the entry would be), by the model it is of."""
    found = []
    for parent in parents(ref):
        with contextlib.suppress(OSError):
            for path in sorted(parent.glob(".*.tmp-*")):
                if path.is_dir() and not path.is_symlink():
                    listed = entry_of(path, None, folder_size(path))
                    found.append(replace(listed, commit=path.name[1:].partition(".tmp-")[0]))
    return found


@dataclass(frozen=True)
class Kept:
    """An entry folder `cache clear` could not remove, and why ("in use": on Windows, a process maps it)."""

    entry: ListedEntry
    reason: str


def entries() -> list[ListedEntry]:
    """Every live entry in the cache, as its manifest describes it."""
    found = []
    for entry in (e for parent in parents(None) for e in live_folders(parent)):
        try:
            found.append(
                entry_of(entry, json.loads((entry / "manifest.json").read_text()), folder_size(entry))
            )
        except UNTRUSTED:
            continue  # being removed right now, or not ours
    return found


def clear(ref: ModelRef | None, outdated: bool = False) -> tuple[list[ListedEntry], list[Kept]]:
    """Remove the entries of one model (every commit of it), or the whole cache: returns the entry folders
    removed, and those that stay with the reason (an entry in use stays whole, and goes on answering).
    outdated: only the entries of local folders whose files have changed or are gone (and nothing else)."""
    from gpt2emb.store import partial

    removed, kept = [], []
    for parent in parents(ref):
        for commit, folders in generations(parent).items():
            live = live_folder(folders)
            if outdated and (live is None or not _describe(live).outdated):
                continue  # a commit's replaced copies go with its live entry, or with `cache clear`
            stays = False
            for folder in folders:  # replaced copies first: one that stays must not become the live one
                entry = _describe(folder)
                reason = remove_folder(folder, whole=folder == live)
                if reason:
                    kept.append(Kept(entry, reason))
                    stays = True
                else:
                    removed.append(entry)
            if outdated and not stays:  # its own records: the header read for it, the lock of its build
                for record in (parent / "info" / f"{commit}.json", parent / f"{commit}.lock"):
                    with contextlib.suppress(OSError):
                        record.unlink()
        if outdated and generations(parent):
            continue  # the model's other records (refs, locks) serve the entries that stay
        partial.remove_all(parent)  # interrupted downloads (whatever lies in their place)
        for child in parent.glob("*"):  # its refs, checkpoint headers, locks, killed builds: never mapped
            if child.is_dir() and (child.name in ("refs", "info") or child.name.startswith(".")):
                shutil.rmtree(child, ignore_errors=True)
            elif child.is_file():
                with contextlib.suppress(OSError):
                    child.unlink()
        with contextlib.suppress(OSError):
            parent.rmdir()  # not while it holds an entry that stays
    if ref is None and not outdated:
        for sub in ("hub", "local", STATIC):
            with contextlib.suppress(OSError):
                (cache_root() / sub).rmdir()
    return removed, kept


def _describe(folder: Path) -> ListedEntry:
    """An entry folder as its manifest describes it or, when it cannot, as where it lies does."""
    size = folder_size(folder)
    with contextlib.suppress(*UNTRUSTED):
        return entry_of(folder, json.loads((folder / "manifest.json").read_text()), size)
    return entry_of(folder, None, size)


def refresh(
    ref: ModelRef | None, reporter: Reporter | None = None
) -> tuple[list[RefreshedRevision], list[RefreshFailure]]:
    """Ask the Hub again what each recorded branch or tag of a model (or of every cached model) names.

    Where it moved, the new commit is recorded, and its entry built when the old commit had one; entries of
    old commits stay (a commit id asked with --revision still opens them) until `cache clear`. A repo that
    cannot be asked (gone, private, the Hub failing) is a failure of its own: the others are still asked."""
    if ref is not None and ref.repo is None:
        raise UsageError(f"{ref.name} is a local folder: its entry follows its files, nothing to refresh")
    folders = [repo_dir(ref)] if ref is not None else [p for p in parents(None) if p.parent.name == "hub"]
    done: list[RefreshedRevision] = []
    failed: list[RefreshFailure] = []
    for folder in folders:
        repo = folder.name.replace("--", "/", 1)
        spec = registry.find(repo)
        model = ModelRef(spec.name if spec else repo, repo=repo, spec=spec)
        try:
            done += _refresh_repo(folder, model, reporter)
        except Gpt2embError as e:
            failed.append(RefreshFailure(model.name, e.message, e.code))
    return done, failed


def _refresh_repo(folder: Path, model: ModelRef, reporter: Reporter | None) -> list[RefreshedRevision]:
    repo, done = folder.name.replace("--", "/", 1), []
    try:
        ref_files = sorted((folder / "refs").glob("[!.]*"))  # not a write in progress
    except OSError:  # a cache folder that cannot exist (its name too long): nothing recorded
        ref_files = []
    for ref_file in ref_files:
        at = registry.at_revision(model, unquote(ref_file.name))
        try:
            old = ref_file.read_text().strip()
        except OSError:
            continue  # removed by a `cache clear` running now
        try:
            new = hub.remote_commit(repo, at.revision)
        except UsageError:  # the branch or tag is gone from the Hub; its commit still opens
            note = f"{repo} has no {at.revision} any more: {at.name} stays at commit {old[:12]}"
            (reporter or QuietReporter()).note(note)
            continue
        built = {commit for commit, folders in generations(folder).items() if live_folder(folders)}
        rebuild = new != old and old in built and new not in built
        if rebuild:
            open_model(at, reporter, commit=new)  # records the new commit once its entry is built
        elif new != old:
            record_commit(at, new)
        done.append(RefreshedRevision(model.name, repo, at.revision, old, new, rebuild))
    return done
