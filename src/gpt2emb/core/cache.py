"""The cache commands: list, clear, refresh, verify and path."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from gpt2emb import limits, registry
from gpt2emb.errors import (
    NotCached,
    UnknownModel,
)
from gpt2emb.kept import cache_root
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.cache import (
    CacheEntry,
    CachePath,
    CacheResult,
    KeptEntry,
    PartialFile,
    RefreshResult,
    VerifiedEntry,
    VerifyResult,
)
from gpt2emb.store import entries, manage, verify


def _cache_result(
    action: str, found: list[manage.ListedEntry], kept: Iterable[manage.Kept] = (), outdated: bool = False
) -> CacheResult:
    rows = tuple(CacheEntry(e.name, e.repo, e.commit, str(e.path), e.size, e.outdated) for e in found)
    held = tuple(
        KeptEntry(k.entry.name, k.entry.repo, k.entry.commit, str(k.entry.path), k.reason) for k in kept
    )
    return CacheResult(action, str(cache_root()), rows, sum(e.size for e in found), held, outdated)


def _cached(model: str) -> ModelRef:
    """A model as the cache commands name it: a local folder that is gone still names its entries."""
    try:
        return registry.resolve(model)
    except UnknownModel:
        path = limits.user_path(model)
        gone = ModelRef(model, folder=path.resolve())
        if entries.has_entries(gone):
            return gone
        raise


def cache_list() -> CacheResult:
    listed = _cache_result("list", manage.entries())
    kept = tuple(PartialFile(e.name, e.repo, e.commit, str(e.path), e.size) for e in manage.partials())
    return replace(listed, partial=kept)


def cache_clear(model: str | None, outdated: bool = False) -> CacheResult:
    """Remove what can be removed; what cannot (in use) is in `kept`, whole. outdated: only the entries of
    local folders whose files have changed since, or are gone."""
    return _cache_result("clear", *manage.clear(_cached(model) if model else None, outdated), outdated)


def cache_refresh(model: str | None, reporter: Reporter | None = None) -> RefreshResult:
    done, failed = manage.refresh(registry.resolve(model) if model else None, reporter)
    return RefreshResult(str(cache_root()), tuple(done), tuple(failed))


def cache_verify(model: str | None, repair: bool = False, reporter: Reporter | None = None) -> VerifyResult:
    """Every byte of every cached entry (or one model's) against its checksums; with repair, rebuild."""
    ref = _cached(model) if model else None
    found = verify.verify(ref, repair, reporter)
    if ref is not None and not found:  # "nothing cached" would read as if the whole cache were empty
        raise NotCached(f"{ref.name} is not cached, so there is nothing of it to verify (gpt2emb cache list)")
    rows = tuple(
        VerifiedEntry(
            v.entry.name,
            v.entry.repo,
            v.entry.commit,
            str(v.entry.path),
            v.ok,
            v.damaged,
            v.problem,
            v.repaired,
        )
        for v in found
    )
    return VerifyResult(str(cache_root()), repair, rows, sum(v.entry.size for v in found))


def cache_path() -> CachePath:
    return CachePath(str(cache_root()))
