"""Building a model's cache entry from its checkpoint, and open_model: the entry opened, or built first.

build_entry writes an entry in a temporary folder and moves it into place (install.py). Its tables are
fetched in a background thread while the tokenizer is checked. open_model opens the entry of a model's
commit, and builds it under the commit's lock when it is absent or cannot be trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gpt2emb import families, piece_lines
from gpt2emb.errors import BadModel
from gpt2emb.registry import ModelRef
from gpt2emb.report import BUILDING, QuietReporter, Reporter, Task
from gpt2emb.store.entries import (
    EXTRA,
    FORMAT,
    SELF_CHECK,
    UNTRUSTED,
    OpenedEntry,
    checked_whole,
    commit_of,
    file_fingerprint,
    folder_fingerprint,
    generations,
    live_folder,
    live_folders,
    manifest_digest,
    open_entry,
    repo_dir,
    row_norms,
)
from gpt2emb.store.revisions import checkpoint_info, record_commit, resolve_commit

if TYPE_CHECKING:
    import threading

    from gpt2emb.store.checkpoint import CheckpointInfo

# A warm command opens an entry and builds nothing. What only a build uses (reading a checkpoint, its
# tokenizer files, writing files, a temporary folder) is imported by the functions that build, not here.


def build_entry(
    ref: ModelRef, info: CheckpointInfo, parent: Path, reporter: Reporter, keep: bool = True
) -> Path:
    """Build the entry of info.commit in a temporary folder, move it into place, and return where it went.

    With keep, a download is kept beside the entries as it arrives (partial.py), so that it can resume.
    Whoever calls this holds the entry's lock or owns parent, so nobody else builds or removes it meanwhile.
    """
    import tempfile
    import threading  # only a build starts a thread, and a warm open should not import it

    from gpt2emb.store import encoder_files, install, partial, tokenizer_files, writing

    family = families.of_config(info.config, ref.name)
    shape = family.shape(info.config, ref.name)
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{info.commit}.tmp-"))
    stop, tables = threading.Event(), None
    try:
        with _unchanged(ref, info.commit):
            # The tokenizer is checked while the tables are fetched. Both run Python and take turns at the
            # GIL, but the fetch waits on the network between its chunks, and the checks fill those waits.
            # The fetch takes 0.08 s longer, and the checks' 0.15 s are gone from the first use. A tokenizer
            # found wrong is told before a fetch that fails too. Hashing or writing wte, and keeping the
            # download, are a few long calls that free the GIL.
            read = tokenizer_files.read(ref, info.commit)  # before the fetch thread starts, as read says
            tables = _Background(
                lambda: _table_files(ref, info, _Stoppable(reporter, stop), parent if keep else None, tmp)
            )
            tokenizer, parsed, library = tokenizer_files.checked(read, shape.vocab_size)
            encoder = encoder_files.written(tokenizer, parsed, library)
            wraps = encoder_files.wraps(tokenizer, library)
            contents: dict[str, bytes | np.ndarray] = {
                "config.json": json.dumps(info.config).encode(),
                "tokenizer.json": tokenizer.encode(),
                piece_lines.FILE: piece_lines.written(parsed["model"]["vocab"]),  # what a warm lookup reads
                **encoder,
            }
            sha256 = {f: writing.write(tmp / f, content) for f, content in contents.items()}
            sha256 = {**tables.result(), **sha256}
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "name": ref.name,
            "repo": ref.repo,
            "folder": None if ref.folder is None else str(ref.folder),
            "commit": info.commit,
            "shape": shape._asdict(),
            "tied": family.tied(info.config),
            "norm_eps": float(info.config.get(family.norm_eps, 1e-12)),
            "words": families.words_for(family, parsed).name,
            "wraps": wraps,
            "files": {f: file_fingerprint(tmp / f, whole=checked_whole(f, FORMAT)) for f in sha256},
            "sha256": sha256,
        }
        manifest[SELF_CHECK] = manifest_digest(manifest)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        installed = install.install(tmp, parent, info.commit)
        partial.remove_all(parent, info.commit)  # the partial download's bytes are in the entry now
        return installed
    except BaseException as e:
        # The fetch stops at its next chunk. A write or hash under way ends before tmp goes.
        stop.set()
        if tables is not None:
            tables.wait(1.0)
        import traceback  # only a failure needs it, and it costs 8 ms of imports

        # The failed frames' views of a landed wte go before tmp does, since Windows removes no mapped file.
        traceback.clear_frames(e.__traceback__)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # once the entry is in place, nothing is left of tmp


def _table_files(
    ref: ModelRef,
    info: CheckpointInfo,
    reporter: Reporter,
    keep: Path | None,
    tmp: Path,
) -> dict[str, str]:
    """Fetch the entry's tables, write them with their norms and row checksums into tmp, and return their
    SHA-256s by file name."""
    from gpt2emb.store import table_rows, writing

    tables = table_rows.embeddings(ref, info, reporter, keep, land=tmp / "wte.npy")
    wte, wpe = (np.ascontiguousarray(a, dtype=np.float32) for a in (tables.wte, tables.wpe))
    # wte's file is hashed where its download landed in it, or else written and hashed. Either is a few long
    # calls that free the GIL, so they run in a thread of their own beside the sums.
    landed = (tmp / "wte.npy").exists()
    wte_file = _Background(
        lambda: writing.hashed(tmp / "wte.npy", wte) if landed else writing.write(tmp / "wte.npy", wte),
        "gpt2emb-write",
    )
    try:
        extra = {
            f"{k}.npy": np.ascontiguousarray(a, dtype=np.float32)
            for k in EXTRA
            if (a := getattr(tables, k)) is not None
        }
        contents: dict[str, np.ndarray] = {
            "wte.npy": wte,
            "wpe.npy": wpe,
            "wte_norm.npy": row_norms(wte),
            "wte_crc.npy": writing.row_crcs(wte),
            "wpe_crc.npy": writing.row_crcs(wpe),
            **extra,
        }
        with reporter.progress(f"{BUILDING} of {ref.name}", sum(c.nbytes for c in contents.values())) as step:
            sha256 = {}
            for f, content in contents.items():
                sha256[f] = wte_file.result() if f == "wte.npy" else writing.write(tmp / f, content)
                step.advance(content.nbytes)
    finally:
        wte_file.wait(None)  # a write under way must end before tmp goes
    return sha256


class _Stopped(Exception):
    """A fetch stopped because the build it served failed meanwhile."""


class _Stoppable:
    """A reporter whose progress stops the work it counts, by raising _Stopped, once stop is set."""

    def __init__(self, reporter: Reporter, stop: threading.Event) -> None:
        self._reporter, self._stop = reporter, stop

    def note(self, message: str) -> None:
        self._reporter.note(message)

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Task]:
        stop = self._stop

        with self._reporter.progress(label, total) as task:

            class _Task:
                def advance(self, n: int) -> None:
                    if stop.is_set():
                        raise _Stopped
                    task.advance(n)

            yield _Task()


class _Background:
    """A function run in a daemon thread, so that an interrupted run ends at once, never waiting for it."""

    def __init__(self, work: Callable[[], Any], name: str = "gpt2emb-fetch") -> None:
        import threading

        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._result = work()
            except BaseException as e:
                self._error = e
            finally:
                self._done.set()

        threading.Thread(target=run, name=name, daemon=True).start()

    def wait(self, timeout: float | None) -> None:
        self._done.wait(timeout)

    def result(self) -> Any:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result


@contextlib.contextmanager
def _unchanged(ref: ModelRef, commit: str) -> Iterator[None]:
    """Tell a failure to read a local folder's files that changed meanwhile as that change, exit 6.

    A copy may still be being written, or a file cut short or removed. Told as damage, it would come with
    the wrong fix. The folder's commit is the fingerprint of its files when the run began.
    """
    try:
        yield
    except PermissionError:
        raise  # the error boundary names the file
    except (BadModel, OSError):
        if ref.folder is None or _still(ref.folder, commit):
            raise
        raise BadModel(
            f"the files of {ref.folder} changed while being read (one was written, cut short or removed); "
            "run the command again once they are whole"
        ) from None


def _still(folder: Path, commit: str) -> bool:
    """Whether a folder's files are those its commit, their fingerprint, was taken from."""
    try:
        return folder_fingerprint(folder) == commit
    except (BadModel, OSError):
        return False


def open_model(ref: ModelRef, reporter: Reporter | None = None, commit: str | None = None) -> OpenedEntry:
    """The model's cache entry, built on first use. Afterwards it needs no network and no torch.

    Given a commit, open that commit and record it as what ref.revision names (cache refresh does so).
    """
    reporter = reporter or QuietReporter()
    commit, known = resolve_commit(ref) if commit is None else (commit, False)
    parent = repo_dir(ref)
    folders = generations(parent).get(commit, [])
    entry = live_folder(folders)
    if entry is not None:
        try:
            model = open_entry(ref, entry)
        except PermissionError:
            # This is not damage. Rebuilt, the entry would be as unreadable. The boundary names the path.
            raise
        except UNTRUSTED as e:
            reporter.note(f"the cache entry for {ref.name} cannot be trusted ({_problem(e)}); rebuilding it")
        else:
            if len(folders) > 1:
                from gpt2emb.store import install  # a rare case, so a warm open need not load it

                install.sweep(parent, commit)
            return model
    try:
        model = _build_locked(ref, commit, reporter)
    except OSError as e:
        from gpt2emb.store import install
        from gpt2emb.store.checkpoint import read_info

        parent = install.without_cache(e, parent, commit, reporter)
        return open_entry(ref, build_entry(ref, read_info(ref, commit), parent, reporter, keep=False))
    if not known:
        record_commit(ref, commit)
    older = [f for f in live_folders(parent) if commit_of(f) != commit] if ref.folder is not None else []
    # The folder's files changed, or how they are keyed did, so its earlier entries are outdated.
    if entry is None and older:
        what = "outdated entry stays" if len(older) == 1 else f"{len(older)} outdated entries stay"
        reporter.note(f"{ref.name} is cached anew; its {what} until gpt2emb cache clear --outdated")
    return model


def _problem(e: Exception) -> str:
    """Why an entry cannot be trusted, in words. Our errors say it already, and an OSError names its file."""
    if not isinstance(e, OSError) or not isinstance(e.filename, str | bytes) or not e.filename:
        return str(e)
    name = Path(os.fsdecode(e.filename)).name
    if isinstance(e, FileNotFoundError):
        return f"{name} is missing"
    return f"{name} cannot be read ({e.strerror or e})"


def _build_locked(ref: ModelRef, commit: str, reporter: Reporter) -> OpenedEntry:
    """Build the entry under its file lock, unless another process built it while we waited."""
    from gpt2emb.store import install

    parent = repo_dir(ref)
    with install.locked(parent, commit):
        entry = live_folder(generations(parent).get(commit, []))
        if entry is not None:  # another process may have built it while we waited
            with contextlib.suppress(*UNTRUSTED):
                return open_entry(ref, entry)
        with _unchanged(ref, commit):
            info = checkpoint_info(ref, commit)
        entry = build_entry(ref, info, parent, reporter)
    return open_entry(ref, entry)
