"""Putting a built entry in place under its commit's lock, and a temporary cache when the real one fails.

The lock makes processes started together build an entry once. install() moves a complete entry into
place, sweep() removes the copies it replaced once nothing uses them, and without_cache() gives a build a
temporary folder when the cache cannot be written.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from gpt2emb.kept import cache_root
from gpt2emb.report import Reporter
from gpt2emb.store.entries import GENERATION, generations, live_folder, remove_folder

# The errors of a cache folder that cannot be written, for whatever reason. gpt2emb answers without it.
# /proc/cache cannot be made (ENOENT), a name may pass the system's limit (ENAMETOOLONG), and a symbolic
# link to nothing gives EEXIST.
_CANNOT_WRITE = {
    errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR, errno.ENOENT,
    errno.ENAMETOOLONG, errno.EINVAL, errno.ELOOP, errno.EEXIST,
}  # fmt: skip


@contextlib.contextmanager
def locked(parent: Path, commit: str, blocking: bool = True) -> Iterator[None]:
    """Hold a commit's file lock, so that processes started together build its entry once.

    No entry is built during a repair either. When not blocking, filelock.Timeout is raised at once while
    another process holds the lock.
    """
    from filelock import FileLock

    parent.mkdir(parents=True, exist_ok=True)
    # A timeout of 0 makes one try, in every version of filelock.
    with FileLock(str(parent / f"{commit}.lock"), timeout=-1 if blocking else 0):
        yield


def install(tmp: Path, parent: Path, commit: str) -> Path:
    """Put a complete entry in place of the commit's folders, and return where it went.

    Each older folder is removed first where it can be. The new one takes the next name after those that
    stay (in use on Windows), which makes it the live one.
    """
    # The temporary folders of builds that were killed were never mapped nor reported, so they go.
    for leftover in parent.glob(f".{commit}.tmp-*"):
        # They are compared by name, because mkdtemp makes tmp absolute (Python 3.12+) and parent may not be.
        if leftover.name != tmp.name:
            shutil.rmtree(leftover, ignore_errors=True)
    staying = [f for f in generations(parent).get(commit, []) if remove_folder(f, whole=False)]
    n = int(staying[-1].name.partition(GENERATION)[2] or 0) + 1 if staying else 0
    dest = parent / (f"{commit}{GENERATION}{n}" if n else commit)
    os.replace(tmp, dest)  # the name is free, so a folder never replaces another
    return dest


def without_cache(e: OSError, parent: Path, commit: str, reporter: Reporter) -> Path:
    """Where to build an entry when the cache cannot be written: a temporary folder, removed at exit.

    e says why the cache failed: it is read-only, full, or cannot be made. A note tells the user. e is
    raised again where it is not the cache's failure.
    """
    root = cache_root()
    # The cache's failure names a path in it, or none (a write to a full disk names none). A model's file
    # that cannot be read is not a cache that cannot be written.
    if e.errno not in _CANNOT_WRITE or not Path(os.fsdecode(e.filename or root)).is_relative_to(root):
        raise e
    import tempfile

    from gpt2emb.store import partial

    why = e.strerror
    with contextlib.suppress(OSError):  # a name too long to look up, for example
        if root.is_symlink() and not root.exists():
            why = f"a symbolic link to {os.readlink(root)}, which does not exist"
    kept = partial.staying(parent, commit)  # the room partial downloads take may be what the build lacked
    reporter.note(f"cannot write the cache in {root} ({why}); working without it this time{kept}")
    temporary = Path(tempfile.mkdtemp(prefix="gpt2emb-"))
    atexit.register(shutil.rmtree, temporary, True)
    return temporary


def sweep(parent: Path, commit: str) -> None:
    """Remove the replaced copies of an entry that were in use when it was rebuilt, if they are not now.

    Nothing is removed while another process holds the lock, since it may be putting a new entry in place.
    """
    from filelock import Timeout

    with contextlib.suppress(Timeout), locked(parent, commit, blocking=False):
        folders = generations(parent).get(commit, [])
        live = live_folder(folders)
        for folder in folders:
            if folder != live:
                remove_folder(folder, whole=False)
