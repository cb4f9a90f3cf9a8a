"""The views of cache list, clear, verify, refresh and path."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text

from gpt2emb.output.layout import (
    Listing,
    Words,
    mb,
)
from gpt2emb.output.views import view
from gpt2emb.results.cache import CachePath, CacheResult, RefreshResult, VerifyResult

_ENTRIES = "model~ commit size> path~"  # names and paths whole (see Listing)


def _entries(n: int, which: str = "") -> str:
    return f"{n} {which}entry" if n == 1 else f"{n:,} {which}entries"


def _loose(result: CacheResult) -> str:
    """What a title adds of the partial downloads and builds' temporary folders, and the bytes in all."""
    said = [
        f"{len(found)} {what}{'s' if len(found) > 1 else ''} ({mb(sum(f.size_bytes for f in found))})"
        for found, what in ((result.partial, "partial download"), (result.unfinished, "unfinished build"))
        if found
    ]
    return f", and {' and '.join(said)}: {mb(result.all_bytes)} in all" if said else ""


@view.register
def _(result: CacheResult, dims: int | None) -> RenderableType:
    rows = [
        [e.name, e.commit[:12] + ("\noutdated" if e.outdated else ""), mb(e.bytes), e.path]
        for e in result.entries
    ]
    # an interrupted download, resumed by the model's next use; a build under way, or what a killed one left
    rows += [[p.name, p.commit[:12] + "\npartial", mb(p.size_bytes), p.path] for p in result.partial]
    rows += [[u.name, u.commit[:12] + "\nunfinished", mb(u.size_bytes), u.path] for u in result.unfinished]
    if result.action == "list":
        title = f"gpt2emb cache in {result.root}: {_entries(len(result.entries))}, {mb(result.total_bytes)}"
        title += _loose(result)
        if not rows:
            return _Unfolded(f"{title} (a model is cached on first use)")
        outdated = [e for e in result.entries if e.outdated]
        if outdated:
            size, them = mb(sum(e.bytes for e in outdated)), "it" if len(outdated) == 1 else "them"
            return Group(
                Listing(title, _ENTRIES, rows),
                Words(
                    Text(
                        f"outdated: {_entries(len(outdated))} ({size}) built from a local folder's earlier "
                        f"files, or from a folder that is gone; gpt2emb cache clear --outdated removes {them}"
                    )
                ),
            )
    else:
        which = "outdated " if result.outdated else ""
        gone = f"{_entries(len(result.entries), which)}, {mb(result.total_bytes)}{_loose(result)}"
        title = f"removed {gone}, from {result.root}"
        kept = [[k.name, k.commit[:12], k.reason, k.path] for k in result.kept]
        if kept:
            nothing = _Unfolded(f"removed nothing from {result.root}")
            removed = Listing(title, _ENTRIES, rows) if rows else nothing
            title = f"could not remove {_entries(len(kept))}, left whole"
            return Group(removed, Text(""), Listing(title, "model~ commit why path~", kept))
        if not rows:
            return _Unfolded(f"nothing {which}to remove in {result.root}")
    return Listing(title, _ENTRIES, rows)


@view.register
def _(result: RefreshResult, dims: int | None) -> RenderableType:
    if not result.revisions:
        return Words(
            Text(
                f"nothing to refresh in {result.root}: no model of the Hub is cached (a local folder's entry "
                "follows its files; a model is cached on first use)"
            )
        )
    rows = []
    for r in result.revisions:
        moved = r.new_commit != r.old_commit
        status = "rebuilt" if r.rebuilt else "moved" if moved else "up to date"
        rows.append([r.model, r.revision, r.old_commit[:12], r.new_commit[:12] if moved else "", status])
    n_moved = sum(r.new_commit != r.old_commit for r in result.revisions)
    title = f"asked the Hub about {len(rows):,} revision{'s' if len(rows) != 1 else ''}: {n_moved:,} moved"
    return Listing(title, "model~ revision~ commit new status", rows)


@view.register
def _(result: VerifyResult, dims: int | None) -> RenderableType:
    if not result.entries:
        partial = result.partial
        if partial:  # nothing to verify yet: a partial download's blocks are checked as it is resumed
            n, size = len(partial), mb(sum(p.size_bytes for p in partial))
            kept = f"{n} partial download{'s' if n > 1 else ''} ({size}), checked block by block when resumed"
            return Words(Text(f"no entry cached in {result.root} to verify; {kept} (gpt2emb cache list)"))
        return Words(Text(f"nothing cached in {result.root}: nothing to verify"))
    state = {True: Text("ok", style="green"), False: Text("damaged", style="red")}
    rows = [
        [e.name, e.commit[:12], Text(e.repaired, style="green") if e.repaired else state[e.ok], e.problem]
        for e in result.entries
    ]
    bad = sum(not e.ok for e in result.entries)
    rebuilt = sum(e.repaired == "rebuilt" for e in result.entries)
    verdict = (f"{bad:,} damaged" if bad else "all ok") + (f", {rebuilt:,} rebuilt" if rebuilt else "")
    title = f"verified {_entries(len(rows))} ({mb(result.total_bytes)}) in {result.root}: {verdict}"
    return Listing(title, "model~ commit state problem", rows)


@view.register
def _(result: CachePath, dims: int | None) -> RenderableType:
    return _Unfolded(result.path)


class _Unfolded:
    """A line that holds a path, printed as it is: rich would fold a path longer than the line into pieces,
    and a script reading it back (cd "$(gpt2emb cache path)") would get a broken one."""

    def __init__(self, line: str) -> None:
        self.line = line

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Segment(self.line)
        yield Segment.line()
