"""gpt2emb's cache: which commit a model name means, entries built under a lock, opened memory-mapped.

An entry is one folder per repo and commit (or local folder and file fingerprint) holding wte.npy, wpe.npy,
the row norms of wte, a CRC-32 of every row of wte and wpe, the config and the tokenizer (with its added
tokens and, when bpe.py reproduces it, its merges apart: a warm command parses no tokenizer.json). It is
built in a temporary folder under a file lock and renamed into place, so an entry that exists is complete.
An entry is never changed, renamed or written over once in place: on Windows a file that a process has
mapped can be neither removed nor replaced, so a rebuilt entry goes beside an old one that cannot be
removed (`<commit>+1`, ...), and the newest is the one used; the old one is removed when no process holds
it any more.
manifest.json records, per file, a sampled checksum (checked on every open: cheap, catches a truncated or
swapped file) and a full SHA-256 (checked by `cache verify`); the row checksums let a command check the
rows it shows before it prints them.
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
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, NoReturn
from urllib.parse import quote, unquote

import numpy as np

from gpt2emb import bpe, checkpoint, families, hub, limits, measures, registry
from gpt2emb.checkpoint import CheckpointInfo
from gpt2emb.errors import LONE_SURROGATE, BadModel, DamagedEntry, Gpt2embError, NotCached, UsageError
from gpt2emb.families import Family
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.report import QuietReporter, Reporter, Task
from gpt2emb.results.cache import RefreshedRevision, RefreshFailure
from gpt2emb.tokens import ADDED_FILE

CACHE_ENV = "GPT2EMB_CACHE_DIR"
# a cache folder that cannot be written, for whatever reason (/proc/cache cannot be made: ENOENT; a name past
# the system's limit: ENAMETOOLONG; a symbolic link to nothing: EEXIST): gpt2emb answers without it
_CANNOT_WRITE = {
    errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR, errno.ENOENT,
    errno.ENAMETOOLONG, errno.EINVAL, errno.ELOOP, errno.EEXIST,
}  # fmt: skip
_UNTRUSTED = (OSError, ValueError, KeyError, TypeError)  # what opening a damaged entry raises
GENERATION = "+"  # `<commit>+1`: a commit id never holds one
FORMAT = 3  # bump whenever the files of an entry change: older entries are then rebuilt
ARRAYS = ("wte", "wpe", "wte_norm", "wte_crc", "wpe_crc")
EXTRA = ("types", "norm")  # token-type rows and the layer norm before the first block, for families with them
TEXT_FILES = ("config.json", "tokenizer.json", "pieces.txt")
# A stored norm may differ from the norm recomputed in float64 by float32 rounding: about 1e-7 relative per
# step of a sum of at most a few thousand squares, far below this; a damaged norm that is off by less than
# this changes no digit a command prints (cache verify still finds it).
NORM_RTOL = 1e-5


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
    wte_crc: np.ndarray  # CRC-32 of each row's bytes, written with the entry
    wpe_crc: np.ndarray
    types: np.ndarray | None = None  # token-type rows (RoBERTa, BERT); checked on open, as is norm
    norm: np.ndarray | None = None  # the weight and bias of the layer norm applied to the sum of the rows
    norm_eps: float = 0.0  # that layer norm's epsilon
    words_name: str = ""  # how its vocabulary spells words (families.Words.name), as its tokenizer says
    wraps: tuple[tuple[int, ...], ...] = ((), ())  # the ids its tokenizer adds before and after a text
    # rows found sound so far, by table: a handle (a notebook, a batch of words) checks each row once
    sound: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # a mask over the table's rows

    @property
    def family(self) -> Family:
        return families.by_name(self.shape.family)

    @property
    def words(self) -> families.Words:
        return families.words_named(self.words_name, self.family)

    def check_rows(self, tokens: Iterable[int] = (), positions: Iterable[int] = ()) -> None:
        """Refuse (DamagedEntry) unless these rows of wte, with their stored norms, and of wpe are as built.

        A command calls this with every row it used or shows, before anything is printed: damage to other
        rows is left to `cache verify`, which reads every byte.
        """
        tables = (
            ("wte", self.wte, self.wte_crc, self.wte_norm, tokens),
            ("wpe", self.wpe, self.wpe_crc, None, positions),
        )
        for name, array, crcs, norms, ids in tables:
            if name not in self.sound:
                self.sound[name] = np.zeros(len(array), dtype=bool)
            asked = np.unique(np.fromiter(ids, dtype=np.int64))
            unchecked = asked[~self.sound[name][asked]]
            self._check(name, array, crcs, unchecked.tolist(), norms)
            self.sound[name][unchecked] = True

    def _check(
        self, name: str, array: np.ndarray, crcs: np.ndarray, ids: list[int], norms: np.ndarray | None
    ) -> None:
        for start in range(0, len(ids), 1024):  # a bounded copy at a time, however many rows an --eval uses
            chunk = ids[start : start + 1024]
            rows = np.asarray(array[chunk])
            found = np.fromiter((zlib.crc32(row) for row in rows), dtype=np.uint32, count=len(chunk))
            bad = np.flatnonzero(found != crcs[chunk])
            if len(bad):
                self._damaged(f"row {chunk[bad[0]]} of {name}.npy does not match its checksum")
            if norms is not None:
                fresh = _row_norms(rows)  # as built: a norm past float32's range (3e38 rows) is inf there
                # a NaN stored for a finite row is damage; a row that holds NaN has a NaN norm, as built
                same = np.isclose(norms[chunk], fresh, rtol=NORM_RTOL, atol=0.0, equal_nan=True)
                bad = np.flatnonzero(~same)
                if len(bad):
                    self._damaged(f"the norm of row {chunk[bad[0]]} in wte_norm.npy does not match the row")

    def _damaged(self, problem: str) -> NoReturn:
        raise DamagedEntry(
            f"the cache entry of {self.name} ({self.commit[:12]}) is damaged: {problem}; "
            "run gpt2emb cache verify --repair"
        )


def cache_root() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        found = LONE_SURROGATE.search(env)
        if found:  # a name that is not UTF-8 (os.environ holds its bytes as lone surrogates)
            byte = len(env[: found.start()].encode("utf-8")) + 1
            raise UsageError(
                f"{CACHE_ENV} is not UTF-8 text (byte {byte}), and the cache folder is written into the "
                f"results, which are UTF-8: rename the folder, or link it under a UTF-8 name (ln -s) and set "
                f"{CACHE_ENV} to that"
            )
        return limits.user_path(env)
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


def _parents(ref: ModelRef | None) -> list[Path]:
    """The folders that hold entries: one model's, or every model's."""
    if ref is not None:
        return [_repo_dir(ref)]
    root, found = cache_root(), []
    for sub in ("hub", "local"):
        with contextlib.suppress(OSError):  # no such folder, or a name no folder can have: no entries there
            found += [p for p in (root / sub).glob("*") if p.is_dir()]
    return sorted(found)


def _generations(parent: Path) -> dict[str, list[Path]]:
    """The entry folders of a model by commit, oldest first: `<commit>`, then `<commit>+1`, `<commit>+2`, ...

    A later one is made only when a rebuild could not remove the earlier ones (on Windows, while mapped)."""
    found: dict[str, list[tuple[int, Path]]] = {}
    with contextlib.suppress(OSError), os.scandir(parent) as children:
        for child in children:
            commit, plus, n = child.name.partition(GENERATION)
            if child.name.startswith(".") or child.name in ("refs", "info") or (plus and not n.isdecimal()):
                continue  # a build in progress, our records, or not ours
            if child.is_dir():
                found.setdefault(commit, []).append((int(n or 0), Path(child.path)))
    return {commit: [path for _, path in sorted(found[commit])] for commit in sorted(found)}


def _live(folders: list[Path]) -> Path | None:
    """The folder in use among a commit's: the newest that holds a manifest (without one, it is no entry)."""
    return next((f for f in reversed(folders) if (f / "manifest.json").is_file()), None)


def _lives(parent: Path) -> list[Path]:
    """The live entry folder of each commit of a model."""
    return sorted(f for folders in _generations(parent).values() if (f := _live(folders)) is not None)


def _commit_of(folder: Path) -> str:
    return folder.name.partition(GENERATION)[0]


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def _folder_fingerprint(folder: Path) -> str:
    """What a local folder's entry is keyed by: the size, times and inode of each file it is built from.

    Size and modification time alone miss a file rewritten in place whose time was set back (`touch -r`) or
    replaced by one with the same size and time (`cp -p`, `mv`). The kernel sets the change time on every
    write and nothing sets it back; a replacing file is another inode. The change time also moves on a chmod,
    a rename or a new hard link, and a network or FUSE mount may number inodes anew when mounted again: each
    costs one rebuild from the folder, never a download. On Windows st_ctime is (for now) the creation time:
    a file rewritten in place with its modification time set back is not noticed there; one replaced by
    another file is, by its file index (st_ino), even when NTFS hands it the old creation time. The entry of
    the folder's earlier files stays, outdated, until `cache clear --outdated`: a process may still be reading
    it."""
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
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
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
        absent = _live(_generations(_repo_dir(ref)).get(ref.revision, [])) is None
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


def _encoder_files(tokenizer: str, parsed: dict[str, Any]) -> dict[str, bytes | np.ndarray]:
    """added.json (the added tokens, so a warm command need not parse tokenizer.json for them) and, for a
    tokenizer that gpt2emb's plain-Python BPE reproduces (checked here on a sample), bpe.npy."""
    from tokenizers import Tokenizer

    added = [
        {"content": t["content"], "id": t["id"], "special": bool(t.get("special"))}
        for t in parsed.get("added_tokens") or []
    ]
    files: dict[str, bytes | np.ndarray] = {ADDED_FILE: json.dumps(added).encode()}
    rows = bpe.table(parsed)
    if rows is not None and bpe.agrees(rows, Tokenizer.from_str(tokenizer), [t["content"] for t in added]):
        files[bpe.FILE] = rows
    return files


def _wraps(tokenizer: str) -> list[list[int]]:
    """The ids a tokenizer called as usual (special tokens on) puts before and after a text: RoBERTa's <s>
    and </s>, BERT's [CLS] and [SEP], Llama's <s>; GPT-2's none. gpt2emb shows texts as typed, without
    them, and says so where they would move the positions."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer)
    bare = tok.encode("a", add_special_tokens=False).ids
    full = tok.encode("a", add_special_tokens=True).ids
    for i in range(len(full) - len(bare) + 1):
        if full[i : i + len(bare)] == bare:
            return [full[:i], full[i + len(bare) :]]
    return [[], []]


def _fingerprint(path: Path) -> str:
    """A cheap checksum: the size and 16 sampled 4 KiB blocks, enough to tell damage or a swapped file."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with path.open("rb") as f:
        for i in range(16):
            f.seek(max(0, (size - 4096) * i // 15))
            h.update(f.read(4096))
    return h.hexdigest()[:32]


class _HashingFile:
    """A file being written that hashes the bytes on their way to disk: the full checksum needs no re-read."""

    def __init__(self, f: BinaryIO) -> None:
        self._f, self.sha256 = f, hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        return self._f.write(data)


def _write(path: Path, content: bytes | np.ndarray) -> str:
    """Write one file of an entry; returns the SHA-256 of what was written."""
    with path.open("wb") as raw:
        f = _HashingFile(raw)
        if isinstance(content, np.ndarray):
            np.save(f, content, allow_pickle=False)  # any object with write() will do
        else:
            f.write(content)
    return f.sha256.hexdigest()


def _row_crcs(rows: np.ndarray) -> np.ndarray:
    return np.fromiter((zlib.crc32(r) for r in rows), dtype=np.uint32, count=len(rows))


def _manifest_digest(manifest: dict[str, Any]) -> str:
    """The SHA-256 of the manifest's own fields (all but this one): a damaged manifest is noticed too."""
    body = {k: v for k, v in manifest.items() if k != "sha256_self"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _row_norms(wte: np.ndarray) -> np.ndarray:
    """Each row's norm as stored: summed in float64 (in float32 the squares of tiny or huge rows under- or
    overflow). A norm past float32's range is stored as inf: such a row gets no fast bound, and is scored
    exactly."""
    with np.errstate(over="ignore"):
        return measures.row_norms(wte).astype(np.float32)


def _build(ref: ModelRef, info: CheckpointInfo, parent: Path, reporter: Reporter) -> Path:
    """Build the entry of info.commit in a temporary folder and move it into place; returns where it went.

    Whoever calls this holds the entry's lock (or owns parent): nobody else builds or removes it meanwhile."""
    family = families.of_config(info.config, ref.name)
    shape = family.shape(info.config, ref.name)
    tokenizer, parsed = checkpoint.tokenizer(ref, info.commit, shape.vocab_size)
    vocab = parsed["model"]["vocab"]
    tables = checkpoint.embeddings(ref, info, reporter)
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{info.commit}.tmp-"))
    try:
        wte, wpe = (np.ascontiguousarray(a, dtype=np.float32) for a in (tables.wte, tables.wpe))
        extra = {
            f"{k}.npy": np.ascontiguousarray(a, dtype=np.float32)
            for k in EXTRA
            if (a := getattr(tables, k)) is not None
        }
        contents: dict[str, bytes | np.ndarray] = {
            "wte.npy": wte,
            "wpe.npy": wpe,
            "wte_norm.npy": _row_norms(wte),
            "wte_crc.npy": _row_crcs(wte),
            "wpe_crc.npy": _row_crcs(wpe),
            "config.json": json.dumps(info.config).encode(),
            "tokenizer.json": tokenizer.encode(),
            "pieces.txt": _pieces_text(vocab).encode(),
            **_encoder_files(tokenizer, parsed),
            **extra,
        }
        sha256 = {f: _write(tmp / f, content) for f, content in contents.items()}
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "name": ref.name,
            "repo": ref.repo,
            "folder": None if ref.folder is None else str(ref.folder),
            "commit": info.commit,
            "shape": shape.__dict__,
            "tied": family.tied(info.config),
            "norm_eps": float(info.config.get(family.norm_eps, 1e-12)),
            "words": families.words_for(family, parsed).name,
            "wraps": _wraps(tokenizer),
            "files": {f: _fingerprint(tmp / f) for f in contents},
            "sha256": sha256,
        }
        manifest["sha256_self"] = _manifest_digest(manifest)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        return _install(tmp, parent, info.commit)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # nothing is left of it once it is in place


def _install(tmp: Path, parent: Path, commit: str) -> Path:
    """Put a complete entry in place of the commit's folders: each is removed first where it can be, and
    the new one takes the next name after those that stay (in use on Windows), which makes it the live one."""
    for leftover in parent.glob(f".{commit}.tmp-*"):  # builds that were killed: never mapped, never reported
        if leftover != tmp:
            shutil.rmtree(leftover, ignore_errors=True)
    staying = [f for f in _generations(parent).get(commit, []) if _remove(f, whole=False)]
    n = int(staying[-1].name.partition(GENERATION)[2] or 0) + 1 if staying else 0
    dest = parent / (f"{commit}{GENERATION}{n}" if n else commit)
    os.replace(tmp, dest)  # onto a name that is free: a folder never replaces another
    return dest


def _remove(folder: Path, whole: bool) -> str:
    """Remove an entry folder; returns why it could not be ("" once it is gone).

    Windows refuses to remove a file that a process has mapped or open. whole (a live entry): the arrays go
    first, in the order an open maps them, so an entry in use stays whole and goes on answering. Otherwise
    (a copy that was replaced) the manifest goes first: what stays is no entry any more, and a process
    still using it keeps its files."""
    manifest = folder / "manifest.json"
    arrays = [folder / f"{a}.npy" for a in ARRAYS]
    try:
        rest = sorted(set(folder.iterdir()) - {manifest, *arrays})
        for f in [*arrays, *rest, manifest] if whole else [manifest, *arrays, *rest]:
            f.unlink(missing_ok=True)
        folder.rmdir()
    except FileNotFoundError:
        return ""  # removed by another process meanwhile
    except OSError as e:
        return _why(e)
    return ""


def _why(e: OSError) -> str:
    """Why a file could not be removed, in words."""
    # Windows: ERROR_ACCESS_DENIED (5) for a mapped file or a folder holding one, ERROR_SHARING_VIOLATION (32)
    # for an open one; a POSIX system removes both, so a PermissionError there has another cause
    return "in use" if getattr(e, "winerror", None) in (5, 32) else e.strerror or str(e)


class _OtherVersion(ValueError):
    pass


def _read_manifest(entry: Path) -> dict[str, Any]:
    """The manifest of an entry of this version; raises ValueError or OSError when it cannot be trusted."""
    text = (entry / "manifest.json").read_bytes()
    try:
        manifest: dict[str, Any] = json.loads(text)
    except ValueError as e:  # the parser's own message says where, not what: say which file
        raise ValueError("manifest.json is damaged: it is not JSON") from e
    if not isinstance(manifest, dict):
        raise ValueError("manifest.json is damaged: it is not a JSON object")
    if manifest.get("format") != FORMAT:
        raise _OtherVersion("it was written by another version of gpt2emb")
    if manifest.get("sha256_self") != _manifest_digest(manifest):
        raise ValueError("manifest.json is damaged: it does not match its checksum")
    return manifest


def _open_entry(ref: ModelRef, entry: Path) -> Model:
    """Open an entry, checking it against its manifest; raises ValueError or OSError when it is damaged."""
    manifest = _read_manifest(entry)
    for f, fp in manifest["files"].items():
        if _fingerprint(entry / f) != fp:
            raise ValueError(f"{f} is damaged: it does not match its checksum")
    shape = Shape(**manifest["shape"])
    # plain ndarray views of the mappings: np.memmap's indexing costs 30 us a call in Python, and a batch of
    # words indexes wte thousands of times
    arrays = {
        a: np.load(entry / f"{a}.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray) for a in ARRAYS
    }
    expected = {
        "wte": ((shape.vocab_size, shape.d_model), np.float32),
        "wpe": ((shape.n_positions, shape.d_model), np.float32),
        "wte_norm": ((shape.vocab_size,), np.float32),
        "wte_crc": ((shape.vocab_size,), np.uint32),
        "wpe_crc": ((shape.n_positions,), np.uint32),
    }
    for a, (want, dtype) in expected.items():
        if arrays[a].shape != want or arrays[a].dtype != dtype:
            raise ValueError(f"{a}.npy is damaged: its shape is {arrays[a].shape}, not {want}")
    extra = {}
    for a in EXTRA:  # small: read whole, and checked whole by their fingerprint on every open
        if f"{a}.npy" in manifest["files"]:
            extra[a] = np.load(entry / f"{a}.npy", allow_pickle=False)
            if extra[a].ndim != 2 or extra[a].shape[1] != shape.d_model or extra[a].dtype != np.float32:
                raise ValueError(f"{a}.npy is damaged: its shape is {extra[a].shape}")
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
        arrays["wte_crc"],
        arrays["wpe_crc"],
        extra.get("types"),
        extra.get("norm"),
        float(manifest.get("norm_eps", 0.0)),
        str(manifest.get("words", "")),
        tuple(tuple(int(i) for i in ids) for ids in manifest.get("wraps", [[], []])),
    )


def has_entries(ref: ModelRef) -> bool:
    """Whether the cache holds anything of a model (of a local folder: of that path, even when it is gone)."""
    return _repo_dir(ref).is_dir()


def has_entry(ref: ModelRef, commit: str) -> bool:
    """Whether the entry of a commit is built (opening it still checks it)."""
    return (_repo_dir(ref) / commit).is_dir()


def open_model(ref: ModelRef, reporter: Reporter | None = None, commit: str | None = None) -> Model:
    """The model's cache entry, built on first use; afterwards no network and no torch.

    commit: open that commit, and record it as what ref.revision names (cache refresh)."""
    reporter = reporter or QuietReporter()
    commit, known = _resolve_commit(ref) if commit is None else (commit, False)
    parent = _repo_dir(ref)
    folders = _generations(parent).get(commit, [])
    entry = _live(folders)
    if entry is not None:
        try:
            model = _open_entry(ref, entry)
        except _UNTRUSTED as e:
            reporter.note(f"the cache entry for {ref.name} cannot be trusted ({_problem(e)}); rebuilding it")
        else:
            if len(folders) > 1:
                _sweep(parent, commit)
            return model
    try:
        model = _build_locked(ref, commit, reporter)
    except OSError as e:
        if e.errno not in _CANNOT_WRITE:
            raise
        # a read-only or full cache folder: answer from a temporary entry, removed when the process ends
        root = cache_root()
        why = e.strerror
        with contextlib.suppress(OSError):  # a name too long to look up, say
            if root.is_symlink() and not root.exists():
                why = f"a symbolic link to {os.readlink(root)}, which does not exist"
        reporter.note(f"cannot write the cache in {root} ({why}); working without it this time")
        parent = Path(tempfile.mkdtemp(prefix="gpt2emb-"))
        atexit.register(shutil.rmtree, parent, True)
        return _open_entry(ref, _build(ref, checkpoint.read_info(ref, commit), parent, reporter))
    if not known:
        _record_commit(ref, commit)
    older = [f for f in _lives(parent) if _commit_of(f) != commit] if ref.folder is not None else []
    if entry is None and older:  # its files changed (or how they are keyed): the earlier entries are outdated
        what = "outdated entry stays" if len(older) == 1 else f"{len(older)} outdated entries stay"
        reporter.note(f"{ref.name} is cached anew; its {what} until gpt2emb cache clear --outdated")
    return model


def _problem(e: Exception) -> str:
    """Why an entry cannot be trusted, in words: our errors say it already; an OSError names its file."""
    if not isinstance(e, OSError) or not isinstance(e.filename, str | bytes) or not e.filename:
        return str(e)
    name = Path(os.fsdecode(e.filename)).name
    if isinstance(e, FileNotFoundError):
        return f"{name} is missing"
    return f"{name} cannot be read ({e.strerror or e})"


@contextlib.contextmanager
def _locked(parent: Path, commit: str, blocking: bool = True) -> Iterator[None]:
    """Hold a commit's file lock: processes started together build its entry once, and never during a repair.
    Not blocking: filelock.Timeout when another process holds it."""
    from filelock import FileLock

    parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(parent / f"{commit}.lock"), blocking=blocking):
        yield


def _build_locked(ref: ModelRef, commit: str, reporter: Reporter) -> Model:
    """Build the entry under its file lock, unless another process built it while we waited."""
    parent = _repo_dir(ref)
    with _locked(parent, commit):
        entry = _live(_generations(parent).get(commit, []))
        if entry is not None:  # another process may have built it while we waited
            with contextlib.suppress(*_UNTRUSTED):
                return _open_entry(ref, entry)
        entry = _build(ref, checkpoint_info(ref, commit), parent, reporter)
    return _open_entry(ref, entry)


def _sweep(parent: Path, commit: str) -> None:
    """Remove the replaced copies of an entry that were in use when it was rebuilt, if they are not now;
    skipped while another process holds the lock (it may be putting a new entry in place)."""
    from filelock import Timeout

    with contextlib.suppress(Timeout), _locked(parent, commit, blocking=False):
        folders = _generations(parent).get(commit, [])
        live = _live(folders)
        for folder in folders:
            if folder != live:
                _remove(folder, whole=False)


# ---------------------------------------------------------------- looking after the cache


@dataclass(frozen=True)
class Entry:
    name: str
    repo: str | None
    commit: str
    path: Path
    size: int  # bytes on disk
    outdated: bool = False  # a local folder's entry whose files have changed since it was built, or are gone


@dataclass(frozen=True)
class Kept:
    """An entry folder `cache clear` could not remove, and why ("in use": on Windows, a process maps it)."""

    entry: Entry
    reason: str


def entries() -> list[Entry]:
    """Every live entry in the cache, as its manifest describes it."""
    found = []
    for entry in (e for parent in _parents(None) for e in _lives(parent)):
        try:
            found.append(_entry_of(entry, json.loads((entry / "manifest.json").read_text()), _size(entry)))
        except _UNTRUSTED:
            continue  # being removed right now, or not ours
    return found


def clear(ref: ModelRef | None, outdated: bool = False) -> tuple[list[Entry], list[Kept]]:
    """Remove the entries of one model (every commit of it), or the whole cache: returns the entry folders
    removed, and those that stay with the reason (an entry in use stays whole, and goes on answering).
    outdated: only the entries of local folders whose files have changed or are gone (and nothing else)."""
    removed, kept = [], []
    for parent in _parents(ref):
        for commit, folders in _generations(parent).items():
            live = _live(folders)
            if outdated and (live is None or not _describe(live).outdated):
                continue  # a commit's replaced copies go with its live entry, or with `cache clear`
            stays = False
            for folder in folders:  # replaced copies first: one that stays must not become the live one
                entry = _describe(folder)
                reason = _remove(folder, whole=folder == live)
                if reason:
                    kept.append(Kept(entry, reason))
                    stays = True
                else:
                    removed.append(entry)
            if outdated and not stays:  # its own records: the header read for it, the lock of its build
                for record in (parent / "info" / f"{commit}.json", parent / f"{commit}.lock"):
                    with contextlib.suppress(OSError):
                        record.unlink()
        if outdated and _generations(parent):
            continue  # the model's other records (refs, locks) serve the entries that stay
        for child in parent.glob("*"):  # its refs, checkpoint headers, locks, killed builds: never mapped
            if child.is_dir() and (child.name in ("refs", "info") or child.name.startswith(".")):
                shutil.rmtree(child, ignore_errors=True)
            elif child.is_file():
                with contextlib.suppress(OSError):
                    child.unlink()
        with contextlib.suppress(OSError):
            parent.rmdir()  # not while it holds an entry that stays
    if ref is None and not outdated:
        for sub in ("hub", "local"):
            with contextlib.suppress(OSError):
                (cache_root() / sub).rmdir()
    return removed, kept


def _describe(folder: Path) -> Entry:
    """An entry folder as its manifest describes it or, when it cannot, as where it lies does."""
    size = _size(folder)
    with contextlib.suppress(*_UNTRUSTED):
        return _entry_of(folder, json.loads((folder / "manifest.json").read_text()), size)
    return _entry_of(folder, None, size)


def refresh(
    ref: ModelRef | None, reporter: Reporter | None = None
) -> tuple[list[RefreshedRevision], list[RefreshFailure]]:
    """Ask the Hub again what each recorded branch or tag of a model (or of every cached model) names.

    Where it moved, the new commit is recorded, and its entry built when the old commit had one; entries of
    old commits stay (a commit id asked with --revision still opens them) until `cache clear`. A repo that
    cannot be asked (gone, private, the Hub failing) is a failure of its own: the others are still asked."""
    if ref is not None and ref.repo is None:
        raise UsageError(f"{ref.name} is a local folder: its entry follows its files, nothing to refresh")
    folders = [_repo_dir(ref)] if ref is not None else [p for p in _parents(None) if p.parent.name == "hub"]
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
        built = {commit for commit, folders in _generations(folder).items() if _live(folders)}
        rebuild = new != old and old in built and new not in built
        if rebuild:
            open_model(at, reporter, commit=new)  # records the new commit once its entry is built
        elif new != old:
            _record_commit(at, new)
        done.append(RefreshedRevision(model.name, repo, at.revision, old, new, rebuild))
    return done


@dataclass(frozen=True)
class Verified:
    """One entry read in full against its checksums by `cache verify`."""

    entry: Entry
    damaged: tuple[str, ...]  # files that do not match their SHA-256
    problem: str  # what is wrong, in words; "" when the entry is sound
    repaired: str = ""  # "rebuilt", or "removed" when its source is gone (the next use builds it anew)

    @property
    def ok(self) -> bool:
        return not self.problem or bool(self.repaired)


def verify(ref: ModelRef | None, repair: bool = False, reporter: Reporter | None = None) -> list[Verified]:
    """Read every file of every entry (or of one model's) against the SHA-256 recorded when it was built;
    with repair, rebuild each entry that is damaged or was written by another version."""
    reporter = reporter or QuietReporter()
    folders = [entry for parent in _parents(ref) for entry in _lives(parent)]
    sizes = {f: _size(f) for f in folders}
    with reporter.progress("verifying the cache", sum(sizes.values())) as task:
        checked = [_verify_entry(f, sizes[f], task) for f in folders]
    if repair:
        checked = [_repair(v, reporter) if v.problem else v for v in checked]
    return checked


def _verify_entry(path: Path, size: int, task: Task) -> Verified:
    try:
        manifest = _read_manifest(path)
        task.advance((path / "manifest.json").stat().st_size)
    except _OtherVersion as e:
        return Verified(_entry_of(path, None, size), (), str(e))
    except _UNTRUSTED:
        return Verified(_entry_of(path, None, size), ("manifest.json",), "manifest.json is damaged")
    damaged = tuple(f for f, digest in manifest["sha256"].items() if _sha256(path / f, task) != digest)
    verb = "does not match its checksum" if len(damaged) == 1 else "do not match their checksums"
    problem = f"{', '.join(damaged)} {verb}"
    return Verified(_entry_of(path, manifest, size), damaged, problem if damaged else "")


def _entry_of(path: Path, manifest: dict[str, Any] | None, size: int) -> Entry:
    """What an entry folder holds, from its manifest or, when that is damaged, from where it lies."""
    if manifest is not None:
        return Entry(manifest["name"], manifest["repo"], manifest["commit"], path, size, _outdated(manifest))
    repo = path.parent.name.replace("--", "/", 1) if path.parent.parent.name == "hub" else None
    spec = registry.find(repo) if repo is not None else None
    name = spec.name if spec else repo or f"a local folder ({path.parent.name})"
    return Entry(name, repo, _commit_of(path), path, size)


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
    """Rebuild a damaged entry from its source at the same commit, beside it; the damaged one is kept if that
    fails (offline, it still answers from its sound rows), and removed once the new one is in place."""
    entry = damaged.entry
    source = _source(entry)
    if source is None:
        reason = _remove(entry.path, whole=False)
        if reason:
            reporter.note(f"could not remove the cache entry of {entry.name} ({entry.commit[:12]}): {reason}")
            return damaged
        return replace(damaged, repaired="removed")
    with _locked(entry.path.parent, entry.commit):
        try:
            # not checkpoint_info: it records the commit as the one "main" means, and this may be an older one
            _build(source, checkpoint.read_info(source, entry.commit), entry.path.parent, reporter)
        except (Gpt2embError, OSError) as e:
            reporter.note(f"could not rebuild the cache entry of {entry.name} ({entry.commit[:12]}): {e}")
            return damaged
    return replace(damaged, repaired="rebuilt")


def _source(entry: Entry) -> ModelRef | None:
    """Where an entry can be rebuilt from: its Hub repo at its commit, or its local folder if unchanged."""
    if entry.repo is not None:
        spec = registry.find(entry.repo)
        return ModelRef(spec.name if spec else entry.repo, repo=entry.repo, spec=spec)
    with contextlib.suppress(*_UNTRUSTED):
        folder = _unchanged_folder(json.loads((entry.path / "manifest.json").read_text()))
        if folder is not None:
            return ModelRef(entry.name, folder=folder)
    return None


def _unchanged_folder(manifest: dict[str, Any]) -> Path | None:
    """The local folder an entry was built from, while its files are those it was built from (else None:
    the entry is outdated; so is one of a gpt2emb from before manifests named their folder, never used now).
    OSError where the folder cannot be read."""
    if not manifest.get("folder"):
        return None
    folder = Path(manifest["folder"])
    return folder if folder.is_dir() and _folder_fingerprint(folder) == manifest["commit"] else None


def _outdated(manifest: dict[str, Any]) -> bool:
    """Whether an entry is outdated: a local folder's whose files have changed or are gone (a Hub entry
    never is); not where that cannot be told (a folder that cannot be read): never removed on a guess."""
    if manifest["repo"] is not None:
        return False
    try:
        return _unchanged_folder(manifest) is None
    except OSError:
        return False
