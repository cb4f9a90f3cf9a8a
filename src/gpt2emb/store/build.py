"""Building an entry under its commit's lock (in a temporary folder, then moved into place), and
open_model: an entry opened, or built first when it is absent or cannot be trusted."""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import re
import shutil
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from gpt2emb import bpe, families, piece_lines
from gpt2emb.errors import BadModel
from gpt2emb.kept import cache_root
from gpt2emb.registry import ModelRef
from gpt2emb.report import BUILDING, QuietReporter, Reporter, Task
from gpt2emb.store.entries import (
    EXTRA,
    FORMAT,
    GENERATION,
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
    remove_folder,
    repo_dir,
    row_norms,
)
from gpt2emb.store.revisions import checkpoint_info, record_commit, resolve_commit
from gpt2emb.tokenizer_library import ADDED_FILE, added_tokens

if TYPE_CHECKING:
    import threading

    from gpt2emb.store.checkpoint import CheckpointInfo

# A warm command opens an entry and builds nothing: what only a build uses (reading a checkpoint, its
# tokenizer files, a temporary folder) is imported by the functions that build, not here.

# a cache folder that cannot be written, for whatever reason (/proc/cache cannot be made: ENOENT; a name past
# the system's limit: ENAMETOOLONG; a symbolic link to nothing: EEXIST): gpt2emb answers without it
_CANNOT_WRITE = {
    errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR, errno.ENOENT,
    errno.ENAMETOOLONG, errno.EINVAL, errno.ELOOP, errno.EEXIST,
}  # fmt: skip


def _encoder_files(
    tokenizer: str, parsed: dict[str, Any], library: Any = None
) -> dict[str, bytes | np.ndarray]:
    """added.json (the added tokens, so a warm command need not parse tokenizer.json for them) and, for a
    tokenizer that gpt2emb's plain-Python BPE reproduces (checked here on a sample, and on each one-word
    entry), bpe.npy. library: the tokenizers library's Tokenizer of it, when one is made already."""
    library = library or _library(tokenizer)
    added = added_tokens(library)
    files: dict[str, bytes | np.ndarray] = {ADDED_FILE: json.dumps(added).encode()}
    rows = bpe.table(parsed)
    if (
        rows is not None
        and bpe.agrees(rows, library, [t["content"] for t in added])
        and _makes_each(library, _whole_words(parsed["model"]["vocab"]))
    ):
        files[bpe.FILE] = rows
    return files


def _makes_each(library: Any, entries: dict[str, int]) -> bool:
    """bpe.makes_each, asked of the tokenizers library's own BPE model (which bpe.py reproduces, checked
    above): the same answer in a fifth of the time (0.4 s for GPT-2's 48,584 one-word entries, not 2 s)."""
    tokenize = library.model.tokenize
    return all(len(t := tokenize(piece)) == 1 and t[0].id == i for piece, i in entries.items())


def _whole_words(vocab: dict[str, int]) -> dict[str, int]:
    """The entries that tokens.Vocab answers a one-word text with, without encoding it (Spelling.whole):
    those whose text is one pre-token of ASCII letters or digits, with or without a leading space. Such a
    text's byte-level spelling is the text itself, its space written "Ġ": the entries are found by their
    spelling, not each one decoded (0.01 s for GPT-2's, not 0.09 s; tests/test_bpe.py checks that both ways
    agree)."""
    return {p: i for p, i in vocab.items() if _WHOLE_WORD.fullmatch(p)}


_WHOLE_WORD = re.compile(r"\u0120?(?:[A-Za-z]+|[0-9]+)")  # families' _ONE_PRE_TOKEN, byte-level spelled


def _library(tokenizer: str) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_str(tokenizer)


def _wraps(tokenizer: str, library: Any = None) -> list[list[int]]:
    """The ids a tokenizer called as usual (special tokens on) puts before and after a text: RoBERTa's <s>
    and </s>, BERT's [CLS] and [SEP], Llama's <s>; GPT-2's none. gpt2emb shows texts as typed, without
    them, and says so where they would move the positions."""
    tok = library or _library(tokenizer)
    bare = tok.encode("a", add_special_tokens=False).ids
    full = tok.encode("a", add_special_tokens=True).ids
    for i in range(len(full) - len(bare) + 1):
        if full[i : i + len(bare)] == bare:
            return [full[:i], full[i + len(bare) :]]
    return [[], []]


class _HashingFile:
    """A file being written that hashes the bytes on their way to disk: the full checksum needs no re-read."""

    def __init__(self, f: BinaryIO) -> None:
        import hashlib  # a build's only: a warm open loads no OpenSSL

        self._f, self.sha256 = f, hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        return self._f.write(data)


def write(path: Path, content: bytes | np.ndarray) -> str:
    """Write one file of an entry; returns the SHA-256 of what was written."""
    if isinstance(content, np.ndarray) and content.flags.c_contiguous:
        return _write_array(path, content)
    with _short_is_full(path), path.open("wb") as raw:
        f = _HashingFile(raw)
        if isinstance(content, np.ndarray):
            np.save(f, content, allow_pickle=False)  # any object with write() will do
        else:
            f.write(content)
    return f.sha256.hexdigest()


def _write_array(path: Path, array: np.ndarray) -> str:
    """An array as np.save writes it into a file of the system's (its header, then its memory as it stands;
    into any other object with write() it copies it, 16 MiB at a time); returns the file's SHA-256."""
    with _short_is_full(path), path.open("wb") as f:
        np.save(f, array, allow_pickle=False)
    return _hashed(path, array)


@contextlib.contextmanager
def _short_is_full(path: Path) -> Iterator[None]:
    """A write the disk cut short, said as the full disk it most likely is: np.save says it with an OSError of
    no errno ('32768 requested and 20448 written'), which open_model would not take for a full cache."""
    try:
        yield
    except OSError as e:
        if e.errno is not None:
            raise
        why = f"a write was cut short ({e}): the disk is full, most likely"
        raise OSError(errno.ENOSPC, why, str(path)) from e


def _hashed(path: Path, array: np.ndarray) -> str:
    """The SHA-256 of a file that holds array as np.save writes it (written so, or landed: landing.py): the
    header read back, the array's memory hashed after it, the file's bytes none read twice (a landed wte is
    the file's own mapping)."""
    import hashlib

    with path.open("rb") as f:
        head = f.read(os.fstat(f.fileno()).st_size - array.nbytes)
    sha256 = hashlib.sha256(head)
    sha256.update(array.data)  # C-contiguous: its memory as it stands
    return sha256.hexdigest()


def row_crcs(rows: np.ndarray) -> np.ndarray:
    return np.fromiter((zlib.crc32(r) for r in rows), dtype=np.uint32, count=len(rows))


def build_entry(
    ref: ModelRef, info: CheckpointInfo, parent: Path, reporter: Reporter, keep: bool = True
) -> Path:
    """Build the entry of info.commit in a temporary folder and move it into place; returns where it went.
    keep: a download is kept beside the entries as it arrives (partial.py), and resumed.

    Whoever calls this holds the entry's lock (or owns parent): nobody else builds or removes it meanwhile."""
    import tempfile
    import threading  # a build's only: a warm open starts no thread

    from gpt2emb.store import partial, tokenizer_files

    family = families.of_config(info.config, ref.name)
    shape = family.shape(info.config, ref.name)
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{info.commit}.tmp-"))
    stop, tables = threading.Event(), None
    try:
        with _unchanged(ref, info.commit):
            # the tokenizer is checked while the tables are fetched: both run Python and take turns at the
            # GIL, but the fetch waits on the network between its chunks, and the checks fill those waits
            # (the fetch takes 0.08 s longer here, the checks' 0.15 s are gone from the first use; a
            # tokenizer found wrong is told before a fetch that fails too); the sums follow the fetch;
            # hashing wte (landed: landing.py) or writing it, and keeping the download, are a few long calls
            # that free the GIL, beside them
            read = tokenizer_files.read(ref, info.commit)  # before the fetch thread starts (read's doc)
            tables = _Background(
                lambda: _table_files(ref, info, _Stoppable(reporter, stop), parent if keep else None, tmp)
            )
            tokenizer, parsed, library = tokenizer_files.checked(read, shape.vocab_size)
            encoder = _encoder_files(tokenizer, parsed, library)
            wraps = _wraps(tokenizer, library)
            contents: dict[str, bytes | np.ndarray] = {
                "config.json": json.dumps(info.config).encode(),
                "tokenizer.json": tokenizer.encode(),
                piece_lines.FILE: piece_lines.written(parsed["model"]["vocab"]),  # a warm lookup reads it
                **encoder,
            }
            sha256 = {f: write(tmp / f, content) for f, content in contents.items()}
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
        installed = install(tmp, parent, info.commit)
        partial.remove_all(parent, info.commit)  # its bytes are in the entry now
        return installed
    except BaseException as e:
        stop.set()  # the fetch stops at its next chunk; a write or hash under way ends before tmp goes
        if tables is not None:
            tables.wait(1.0)
        import traceback  # a failure's only: 8 ms of imports

        # the failed frames' views of a landed wte go before tmp does (Windows removes no mapped file)
        traceback.clear_frames(e.__traceback__)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # nothing is left of it once it is in place


def _table_files(
    ref: ModelRef,
    info: CheckpointInfo,
    reporter: Reporter,
    keep: Path | None,
    tmp: Path,
) -> dict[str, str]:
    """The entry's tables, their norms and row checksums fetched and written into tmp: their SHA-256s."""
    from gpt2emb.store import checkpoint

    tables = checkpoint.embeddings(ref, info, reporter, keep, land=tmp / "wte.npy")
    wte, wpe = (np.ascontiguousarray(a, dtype=np.float32) for a in (tables.wte, tables.wpe))
    # wte's file is hashed (where its download landed in it) or written and hashed (a few long calls that
    # free the GIL) beside the sums
    landed = (tmp / "wte.npy").exists()
    wte_file = _Background(
        lambda: _hashed(tmp / "wte.npy", wte) if landed else write(tmp / "wte.npy", wte), "gpt2emb-write"
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
            "wte_crc.npy": row_crcs(wte),
            "wpe_crc.npy": row_crcs(wpe),
            **extra,
        }
        with reporter.progress(f"{BUILDING} of {ref.name}", sum(c.nbytes for c in contents.values())) as step:
            sha256 = {}
            for f, content in contents.items():
                sha256[f] = wte_file.result() if f == "wte.npy" else write(tmp / f, content)
                step.advance(content.nbytes)
    finally:
        wte_file.wait(None)  # a write under way ends before tmp goes
    return sha256


class _Stopped(Exception):
    """A fetch stopped because the build it served failed meanwhile."""


class _Stoppable:
    """A reporter whose progress stops the work it counts (by raising _Stopped) once stop is set."""

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
    """A function run in a daemon thread (an interrupted run ends at once, never waiting for a download)."""

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
    """Reading a local folder's files, which may change meanwhile (a copy still being written, a file cut
    short or removed): a failure is said as that, exit 6, not as damage with the wrong fix. The folder's
    commit is the fingerprint of its files when the run began."""
    try:
        yield
    except PermissionError:
        raise  # the boundary names the file
    except (BadModel, OSError):
        if ref.folder is None or _still(ref.folder, commit):
            raise
        raise BadModel(
            f"the files of {ref.folder} changed while being read (one was written, cut short or removed); "
            "run the command again once they are whole"
        ) from None


def _still(folder: Path, commit: str) -> bool:
    """Whether a folder's files are those its commit (their fingerprint) was taken from."""
    try:
        return folder_fingerprint(folder) == commit
    except (BadModel, OSError):
        return False


def install(tmp: Path, parent: Path, commit: str) -> Path:
    """Put a complete entry in place of the commit's folders: each is removed first where it can be, and
    the new one takes the next name after those that stay (in use on Windows), which makes it the live one."""
    for leftover in parent.glob(f".{commit}.tmp-*"):  # builds that were killed: never mapped, never reported
        if leftover.name != tmp.name:  # by name: mkdtemp makes tmp absolute (Python 3.12+), parent may not be
            shutil.rmtree(leftover, ignore_errors=True)
    staying = [f for f in generations(parent).get(commit, []) if remove_folder(f, whole=False)]
    n = int(staying[-1].name.partition(GENERATION)[2] or 0) + 1 if staying else 0
    dest = parent / (f"{commit}{GENERATION}{n}" if n else commit)
    os.replace(tmp, dest)  # onto a name that is free: a folder never replaces another
    return dest


def open_model(ref: ModelRef, reporter: Reporter | None = None, commit: str | None = None) -> OpenedEntry:
    """The model's cache entry, built on first use; afterwards no network and no torch.

    commit: open that commit, and record it as what ref.revision names (cache refresh)."""
    reporter = reporter or QuietReporter()
    commit, known = resolve_commit(ref) if commit is None else (commit, False)
    parent = repo_dir(ref)
    folders = generations(parent).get(commit, [])
    entry = live_folder(folders)
    if entry is not None:
        try:
            model = open_entry(ref, entry)
        except PermissionError:
            raise  # not damage: rebuilt, it would be as unreadable (the boundary names the path)
        except UNTRUSTED as e:
            reporter.note(f"the cache entry for {ref.name} cannot be trusted ({_problem(e)}); rebuilding it")
        else:
            if len(folders) > 1:
                _sweep(parent, commit)
            return model
    try:
        model = _build_locked(ref, commit, reporter)
    except OSError as e:
        from gpt2emb.store.checkpoint import read_info

        parent = without_cache(e, parent, commit, reporter)
        return open_entry(ref, build_entry(ref, read_info(ref, commit), parent, reporter, keep=False))
    if not known:
        record_commit(ref, commit)
    older = [f for f in live_folders(parent) if commit_of(f) != commit] if ref.folder is not None else []
    if entry is None and older:  # its files changed (or how they are keyed): the earlier entries are outdated
        what = "outdated entry stays" if len(older) == 1 else f"{len(older)} outdated entries stay"
        reporter.note(f"{ref.name} is cached anew; its {what} until gpt2emb cache clear --outdated")
    return model


def without_cache(e: OSError, parent: Path, commit: str, reporter: Reporter) -> Path:
    """Where to build an entry when the cache cannot be written (e: read-only, full, cannot be made): a
    temporary folder, removed at exit, with a note. e is raised again where it is not the cache's failure."""
    root = cache_root()
    # the cache's failure is of a path in it, or of none (a write to a full disk names none); a model's file
    # that cannot be read is no cache that cannot be written
    if e.errno not in _CANNOT_WRITE or not Path(os.fsdecode(e.filename or root)).is_relative_to(root):
        raise e
    import tempfile

    from gpt2emb.store import partial

    why = e.strerror
    with contextlib.suppress(OSError):  # a name too long to look up, say
        if root.is_symlink() and not root.exists():
            why = f"a symbolic link to {os.readlink(root)}, which does not exist"
    kept = partial.staying(parent, commit)  # the room they take may be what the build lacked
    reporter.note(f"cannot write the cache in {root} ({why}); working without it this time{kept}")
    temporary = Path(tempfile.mkdtemp(prefix="gpt2emb-"))
    atexit.register(shutil.rmtree, temporary, True)
    return temporary


def _problem(e: Exception) -> str:
    """Why an entry cannot be trusted, in words: our errors say it already; an OSError names its file."""
    if not isinstance(e, OSError) or not isinstance(e.filename, str | bytes) or not e.filename:
        return str(e)
    name = Path(os.fsdecode(e.filename)).name
    if isinstance(e, FileNotFoundError):
        return f"{name} is missing"
    return f"{name} cannot be read ({e.strerror or e})"


@contextlib.contextmanager
def locked(parent: Path, commit: str, blocking: bool = True) -> Iterator[None]:
    """Hold a commit's file lock: processes started together build its entry once, and never during a repair.
    Not blocking: filelock.Timeout when another process holds it."""
    from filelock import FileLock

    parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(parent / f"{commit}.lock"), timeout=-1 if blocking else 0):  # 0: one try (any filelock)
        yield


def _build_locked(ref: ModelRef, commit: str, reporter: Reporter) -> OpenedEntry:
    """Build the entry under its file lock, unless another process built it while we waited."""
    parent = repo_dir(ref)
    with locked(parent, commit):
        entry = live_folder(generations(parent).get(commit, []))
        if entry is not None:  # another process may have built it while we waited
            with contextlib.suppress(*UNTRUSTED):
                return open_entry(ref, entry)
        with _unchanged(ref, commit):
            info = checkpoint_info(ref, commit)
        entry = build_entry(ref, info, parent, reporter)
    return open_entry(ref, entry)


def _sweep(parent: Path, commit: str) -> None:
    """Remove the replaced copies of an entry that were in use when it was rebuilt, if they are not now;
    skipped while another process holds the lock (it may be putting a new entry in place)."""
    from filelock import Timeout

    with contextlib.suppress(Timeout), locked(parent, commit, blocking=False):
        folders = generations(parent).get(commit, [])
        live = live_folder(folders)
        for folder in folders:
            if folder != live:
                remove_folder(folder, whole=False)
