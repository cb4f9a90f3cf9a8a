"""gpt2emb's cache: which commit a model name means, entries built under a lock, opened memory-mapped.

An entry is one folder per repo and commit (or local folder and file fingerprint) holding wte.npy, wpe.npy,
the row norms of wte, the config and the tokenizer. It is built in a temporary folder under a file lock and
renamed into place, so an entry that exists is complete; manifest.json records sizes and sampled checksums
so that a damaged entry is noticed on open and rebuilt.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np

from gpt2emb import checkpoint, hub, registry
from gpt2emb.checkpoint import CheckpointInfo, shape_of
from gpt2emb.errors import BadModel, NotCached, UsageError
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results import RefreshedRevision

CACHE_ENV = "GPT2EMB_CACHE_DIR"
_CANNOT_WRITE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR}
_UNTRUSTED = (OSError, ValueError, KeyError, TypeError)  # what opening a damaged entry raises
FORMAT = 2  # bump whenever the files of an entry change: older entries are then rebuilt
ARRAYS = ("wte", "wpe", "wte_norm")
TEXT_FILES = ("config.json", "tokenizer.json", "pieces.txt")


@dataclass(frozen=True)
class Model:
    """An opened cache entry: read-only, memory-mapped arrays and where they came from."""

    name: str
    repo: str | None
    commit: str
    shape: Shape
    tied: bool
    path: Path
    wte: np.ndarray
    wpe: np.ndarray
    wte_norm: np.ndarray


def cache_root() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("gpt2emb", appauthor=False))


# ---------------------------------------------------------------- where things live


def _repo_dir(ref: ModelRef) -> Path:
    root = cache_root()
    if ref.folder is not None:
        digest = hashlib.sha256(str(ref.folder).encode()).hexdigest()[:16]
        return root / "local" / digest
    assert ref.repo is not None
    return root / "hub" / ref.repo.replace("/", "--")


def _folder_fingerprint(folder: Path) -> str:
    parts = []
    for name in (
        "config.json",
        "tokenizer.json",
        "vocab.json",
        "merges.txt",
        *checkpoint.local_files(folder),
    ):
        p = folder / name
        if p.is_file():
            st = p.stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _resolve_commit(ref: ModelRef) -> tuple[str, bool]:
    """The commit to use and whether it came from our own record (True: no network was needed).

    A branch or tag is looked up on first use and recorded in refs/; it is looked up again only by
    `cache refresh`. A whole commit id is itself."""
    if ref.folder is not None:
        if not (ref.folder / "config.json").is_file():
            raise BadModel(
                f"{ref.folder} has no config.json: a local model is a folder saved by save_pretrained"
            )
        return _folder_fingerprint(ref.folder), True
    assert ref.repo is not None
    if hub.is_full_commit(ref.revision):
        absent = not (_repo_dir(ref) / ref.revision).is_dir()
        # offline, the HF cache may still hold that commit's files: only when it does not, say so now
        if absent and hub.offline() and hub.cached(ref.repo, "config.json", ref.revision) is None:
            raise NotCached(hub.not_cached(f"{ref.repo} at commit {ref.revision}"))
        return ref.revision, True
    with contextlib.suppress(OSError):
        commit = _ref_file(ref, ref.revision).read_text().strip()
        if hub.is_commit_name(commit):
            return commit, True
    return hub.commit_of(ref.repo, ref.revision), False


def _ref_file(ref: ModelRef, revision: str) -> Path:
    """refs/<revision>, quoted: a branch such as refs/pr/1 is one file, never a folder."""
    return _repo_dir(ref) / "refs" / quote(revision, safe="")


def _record_commit(ref: ModelRef, commit: str) -> None:
    if ref.repo is not None and not hub.is_full_commit(ref.revision):
        with contextlib.suppress(OSError):
            _write_atomic(_ref_file(ref, ref.revision), commit.encode())


def checkpoint_info(ref: ModelRef, commit: str | None = None) -> CheckpointInfo:
    """Config and tensor header of a model, cached as one small JSON file per commit.

    Without a commit, the one ref.revision names, recorded once the header is read; with one, whoever
    resolved it records it (open_model, after building the entry)."""
    known = True
    if commit is None:
        commit, known = _resolve_commit(ref)
    info_file = _repo_dir(ref) / "info" / f"{commit}.json"
    try:
        info = checkpoint.info_from_json(ref, json.loads(info_file.read_text()))
    except _UNTRUSTED:
        info = checkpoint.read_info(ref, commit)
        with contextlib.suppress(OSError):
            _write_atomic(info_file, json.dumps(checkpoint.info_to_json(info)).encode())
    if not known:
        _record_commit(ref, commit)
    return info


def _pieces_text(vocab: dict[str, int]) -> str:
    """Line i holds the vocabulary entry of token i: a warm lookup reads it without parsing JSON."""
    lines = [""] * (max(vocab.values(), default=-1) + 1)
    for piece, i in vocab.items():
        if "\n" not in piece:  # byte-level entries never hold one; a plain-text added token might
            lines[i] = piece
    return "\n".join(lines)


def _fingerprint(path: Path) -> str:
    """A cheap checksum: the size and 16 sampled 4 KiB blocks, enough to tell damage or a swapped file."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with path.open("rb") as f:
        for i in range(16):
            f.seek(max(0, (size - 4096) * i // 15))
            h.update(f.read(4096))
    return h.hexdigest()[:32]


def _build(ref: ModelRef, info: CheckpointInfo, dest: Path, reporter: Reporter) -> None:
    shape = shape_of(info.config, ref.name)
    tokenizer = checkpoint.tokenizer_json(ref, info.commit)
    vocab = json.loads(tokenizer)["model"]["vocab"]
    wte, wpe = checkpoint.embeddings(ref, info, reporter)
    for key, array in (("wte", wte), ("wpe", wpe)):
        checkpoint.check_shape(ref.name, key, array.shape, shape)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.tmp-"))
    try:
        norm = np.linalg.norm(wte, axis=1).astype(np.float32)
        for array_name, array in (("wte", wte), ("wpe", wpe), ("wte_norm", norm)):
            np.save(tmp / f"{array_name}.npy", np.ascontiguousarray(array, dtype=np.float32))
        (tmp / "config.json").write_text(json.dumps(info.config))
        (tmp / "tokenizer.json").write_text(tokenizer, encoding="utf-8")
        (tmp / "pieces.txt").write_text(_pieces_text(vocab), encoding="utf-8")
        files = [f"{a}.npy" for a in ARRAYS] + list(TEXT_FILES)
        manifest = {
            "format": FORMAT,
            "name": ref.name,
            "repo": ref.repo,
            "commit": info.commit,
            "shape": shape.__dict__,
            "tied": bool(info.config.get("tie_word_embeddings", True)),
            "files": {f: _fingerprint(tmp / f) for f in files},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _open_entry(ref: ModelRef, entry: Path) -> Model:
    """Open an entry, checking it against its manifest; raises ValueError or OSError when it is damaged."""
    manifest = json.loads((entry / "manifest.json").read_text())
    if manifest.get("format") != FORMAT:
        raise ValueError("it was written by another version of gpt2emb")
    for f, fp in manifest["files"].items():
        if _fingerprint(entry / f) != fp:
            raise ValueError(f"{f} is damaged: it does not match its checksum")
    shape = Shape(**manifest["shape"])
    arrays = {a: np.load(entry / f"{a}.npy", mmap_mode="r", allow_pickle=False) for a in ARRAYS}
    expected = {
        "wte": (shape.vocab_size, shape.d_model),
        "wpe": (shape.n_positions, shape.d_model),
        "wte_norm": (shape.vocab_size,),
    }
    for a, want in expected.items():
        if arrays[a].shape != want or arrays[a].dtype != np.float32:
            raise ValueError(f"{a}.npy is damaged: its shape is {arrays[a].shape}, not {want}")
    return Model(
        ref.name,
        ref.repo,
        manifest["commit"],
        shape,
        bool(manifest["tied"]),
        entry,
        arrays["wte"],
        arrays["wpe"],
        arrays["wte_norm"],
    )


def has_entry(ref: ModelRef, commit: str) -> bool:
    """Whether the entry of a commit is built (opening it still checks it)."""
    return (_repo_dir(ref) / commit).is_dir()


def open_model(ref: ModelRef, reporter: Reporter | None = None, commit: str | None = None) -> Model:
    """The model's cache entry, built on first use; afterwards no network and no torch.

    commit: open that commit, and record it as what ref.revision names (cache refresh)."""
    reporter = reporter or QuietReporter()
    commit, known = _resolve_commit(ref) if commit is None else (commit, False)
    entry = _repo_dir(ref) / commit
    if entry.is_dir():
        try:
            return _open_entry(ref, entry)
        except _UNTRUSTED as e:
            reporter.note(f"the cache entry for {ref.name} cannot be trusted ({e}); rebuilding it")
    try:
        model = _build_locked(ref, commit, entry, reporter)
    except OSError as e:
        if e.errno not in _CANNOT_WRITE:
            raise
        # a read-only or full cache folder: answer from a temporary entry, removed when the process ends
        reporter.note(
            f"cannot write the cache in {cache_root()} ({e.strerror}); working without it this time"
        )
        entry = Path(tempfile.mkdtemp(prefix="gpt2emb-")) / commit
        atexit.register(shutil.rmtree, entry.parent, True)
        _build(ref, checkpoint.read_info(ref, commit), entry, reporter)
        return _open_entry(ref, entry)
    if not known:
        _record_commit(ref, commit)
    return model


def _build_locked(ref: ModelRef, commit: str, entry: Path, reporter: Reporter) -> Model:
    """Build the entry under a file lock, so that processes started together build it once."""
    from filelock import FileLock

    entry.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(entry.parent / f"{commit}.lock")):
        if entry.is_dir():  # another process may have built it while we waited
            try:
                return _open_entry(ref, entry)
            except _UNTRUSTED:
                shutil.rmtree(entry, ignore_errors=True)
        # leftovers of builds that were killed: holding the lock, nobody else is building
        for leftover in entry.parent.glob(f".{commit}.tmp-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        _build(ref, checkpoint_info(ref, commit), entry, reporter)
    return _open_entry(ref, entry)


# ---------------------------------------------------------------- looking after the cache


@dataclass(frozen=True)
class Entry:
    name: str
    repo: str | None
    commit: str
    path: Path
    size: int  # bytes on disk


def entries() -> list[Entry]:
    """Every complete entry in the cache, as its manifest describes it."""
    found = []
    for manifest in sorted(cache_root().glob("*/*/*/manifest.json")):
        try:
            meta = json.loads(manifest.read_text())
            size = sum(f.stat().st_size for f in manifest.parent.iterdir() if f.is_file())
            found.append(Entry(meta["name"], meta.get("repo"), meta["commit"], manifest.parent, size))
        except _UNTRUSTED:
            continue  # being written or removed right now, or not ours
    return found


def clear(ref: ModelRef | None) -> list[Entry]:
    """Remove the entries of one model (every commit of it), or the whole cache; returns what was removed."""
    folder = _repo_dir(ref) if ref is not None else None
    removed = [e for e in entries() if folder is None or e.path.parent == folder]
    for e in removed:
        shutil.rmtree(e.path, ignore_errors=True)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)  # its refs and checkpoint headers too
    else:
        for sub in ("hub", "local"):
            shutil.rmtree(cache_root() / sub, ignore_errors=True)
    return removed


def refresh(ref: ModelRef | None, reporter: Reporter | None = None) -> list[RefreshedRevision]:
    """Ask the Hub again what each recorded branch or tag of a model (or of every cached model) names.

    Where it moved, the new commit is recorded, and its entry built when the old commit had one; entries of
    old commits stay (a commit id asked with --revision still opens them) until `cache clear`."""
    if ref is not None and ref.repo is None:
        raise UsageError(f"{ref.name} is a local folder: its entry follows its files, nothing to refresh")
    folders = [_repo_dir(ref)] if ref is not None else sorted((cache_root() / "hub").glob("*"))
    done = []
    for folder in folders:
        repo = folder.name.replace("--", "/", 1)
        spec = registry.find(repo)
        model = ModelRef(spec.name if spec else repo, repo=repo, spec=spec)
        for ref_file in sorted((folder / "refs").glob("[!.]*")):  # not a write in progress
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
            rebuild = new != old and (folder / old).is_dir() and not (folder / new).is_dir()
            if rebuild:
                open_model(at, reporter, commit=new)  # records the new commit once its entry is built
            elif new != old:
                _record_commit(at, new)
            done.append(RefreshedRevision(model.name, repo, at.revision, old, new, rebuild))
    return done
