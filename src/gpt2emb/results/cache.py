"""Results of cache list, clear, verify, refresh and path.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document


@dataclass(frozen=True)
class CacheEntry(Document):
    name: str
    repo: str | None
    commit: str
    path: str
    bytes: int
    outdated: bool = False  # a local folder's entry whose files have changed since, or are gone


@dataclass(frozen=True)
class PartialFile(Document):
    """A download kept after an interruption (never used as an entry): the next first use resumes it."""

    name: str
    repo: str | None
    commit: str
    path: str
    size_bytes: int


@dataclass(frozen=True)
class Unfinished(Document):
    """A build's temporary folder: one under way, or what a killed one left; `cache clear` removes it."""

    name: str
    repo: str | None
    commit: str
    path: str
    size_bytes: int


@dataclass(frozen=True)
class KeptEntry(Document):
    name: str
    repo: str | None
    commit: str
    path: str
    reason: str  # why it could not be removed: "in use" (on Windows, a program has it open)


@dataclass(frozen=True)
class CacheResult(Document):
    """`cache list` (what is there) or `cache clear` (what was removed, and what could not be)."""

    action: str  # "list" or "clear"
    root: str
    entries: tuple[CacheEntry, ...]
    total_bytes: int
    kept: tuple[KeptEntry, ...] = ()  # clear: still there, whole
    outdated: bool = False  # clear --outdated: only the outdated entries were removed
    partial: tuple[PartialFile, ...] = ()  # interrupted downloads: kept (list), removed (clear)
    unfinished: tuple[Unfinished, ...] = ()  # builds' temporary folders: there (list), removed (clear)
    all_bytes: int = 0  # total_bytes, and the partial downloads' and unfinished builds' bytes


@dataclass(frozen=True)
class VerifiedEntry(Document):
    name: str
    repo: str | None
    commit: str
    path: str
    ok: bool  # sound; after --repair, sound now (rebuilt, or removed when its source is gone)
    damaged: tuple[str, ...]  # files that did not match the SHA-256 recorded when the entry was built
    problem: str  # what was wrong, in words; "" when nothing was
    repaired: str  # with --repair: "rebuilt", "removed" (the next use builds it anew), or ""


@dataclass(frozen=True)
class VerifyResult(Document):
    """`cache verify`: every byte of each entry read against its checksums."""

    root: str
    repair: bool
    entries: tuple[VerifiedEntry, ...]
    total_bytes: int  # read
    partial: tuple[PartialFile, ...] = ()  # interrupted downloads, which have nothing to verify yet


@dataclass(frozen=True)
class CachePath(Document):
    path: str


@dataclass(frozen=True)
class RefreshedRevision(Document):
    model: str
    repo: str
    revision: str  # a branch or tag; commit ids asked with --revision never move
    old_commit: str
    new_commit: str
    rebuilt: bool  # an entry of new_commit was built (the old commit had one)


@dataclass(frozen=True)
class RefreshResult(Document):
    """`cache refresh`: each recorded branch or tag asked of the Hub again."""

    root: str
    revisions: tuple[RefreshedRevision, ...]
    failed: tuple[RefreshFailure, ...] = ()  # repos that could not be asked; the others were refreshed


@dataclass(frozen=True)
class RefreshFailure(Document):
    model: str
    message: str
    code: int  # the exit code this failure alone would give
