"""gpt2emb's cache entries: where each lives, its files and manifest, opening one memory-mapped, and the
checks of its rows.

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

import contextlib
import json
import os
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import numpy as np

from gpt2emb import families, measures
from gpt2emb.errors import DamagedEntry
from gpt2emb.families import Family
from gpt2emb.kept import cache_root
from gpt2emb.registry import ModelRef, Shape

UNTRUSTED = (OSError, ValueError, KeyError, TypeError)  # what opening a damaged entry raises
GENERATION = "+"  # `<commit>+1`: a commit id never holds one
FORMAT = 5  # bump whenever the files of an entry change: older entries are then rebuilt
# format 3: the same files, its checks on every open SHA-256s (4: CRC-32s); format 4: pieces.txt left out
# the entries that hold a line feed (5: every entry, see piece_lines.py), and added.json did not say how the
# tokenizer finds each added token (5: "matched"). Both are read as they are, so an upgrade fetches nothing
# again (a Hub model's rows were read by ranges: the HF cache does not hold its weights): an entry left out
# is found by the tokenizer, and tokens.Vocab takes no shortcut past an added word it cannot place
SHA256_FORMAT = 3
WHOLE_FORMAT = 5  # from it, the small files are checked whole on every open (checked_whole)
READ_FORMATS = (FORMAT, 4, SHA256_FORMAT)
ARRAYS = ("wte", "wpe", "wte_norm", "wte_crc", "wpe_crc")
EXTRA = ("types", "norm")  # token-type rows and the layer norm before the first block, for families with them
TEXT_FILES = ("config.json", "tokenizer.json", "pieces.txt")
SELF_CHECK = "crc32_self"  # the manifest's key of its own checksum (and a checkpoint record's)
RECORDS = "info"  # a model's folder of records: the config and headers of each commit's checkpoint
STATIC = "static"  # the cache's folder of static word tables' entries (store/static.py), beside hub and local
# A stored norm may differ from the norm recomputed in float64 by float32 rounding: about 1e-7 relative per
# step of a sum of at most a few thousand squares, far below this; a damaged norm that is off by less than
# this changes no digit a command prints (cache verify still finds it).
NORM_RTOL = 1e-5


class OpenedEntry(NamedTuple):
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
    types: np.ndarray | None  # token-type rows (RoBERTa, BERT; else None); checked on open, as is norm
    norm: np.ndarray | None  # the weight and bias of the layer norm applied to the sum of the rows, or None
    norm_eps: float  # that layer norm's epsilon
    words_name: str  # how its vocabulary spells words (families.Spelling.name), as its tokenizer says
    wraps: tuple[tuple[int, ...], ...]  # the ids its tokenizer adds before and after a text
    # rows found sound so far, by table: a handle (a notebook, a batch of words) checks each row once. Each
    # entry is given a dict of its own: a NamedTuple's default is one object shared by every instance, so
    # this field has none, nor have those before it (a field without a default cannot follow one with)
    sound: dict[str, np.ndarray]  # a mask over the table's rows

    @property
    def family(self) -> Family:
        return families.by_name(self.shape.family)

    @property
    def static(self) -> bool:
        """Whether its table is a static word table (word2vec, GloVe), as its family says."""
        return self.family.static

    @property
    def words(self) -> families.Spelling:
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
            asked = _distinct(np.fromiter(ids, dtype=np.int64))
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
                fresh = row_norms(rows)  # as built: a norm past float32's range (3e38 rows) is inf there
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


def _distinct(ids: np.ndarray) -> np.ndarray:
    """The distinct ids in increasing order, as np.unique gives them: np.unique imports numpy.ma (7 ms, a
    sixth of a warm query's budget beyond numpy's import) the first time it runs."""
    ids = np.sort(ids)
    first = np.ones(len(ids), dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    return ids[first]


# ---------------------------------------------------------------- where things live


def repo_dir(ref: ModelRef) -> Path:
    root = cache_root()
    local = ref.folder or ref.file
    if local is not None:
        import hashlib  # a local folder's only: a Hub model's warm open loads no OpenSSL

        digest = hashlib.sha256(str(local).encode()).hexdigest()[:16]
        return root / ("local" if ref.folder is not None else STATIC) / digest
    assert ref.repo is not None
    return root / "hub" / ref.repo.replace("/", "--")


def parents(ref: ModelRef | None) -> list[Path]:
    """The folders that hold entries: one model's, or every model's."""
    if ref is not None:
        return [repo_dir(ref)]
    root, found = cache_root(), []
    for sub in ("hub", "local", STATIC):
        with contextlib.suppress(OSError):  # no such folder, or a name no folder can have: no entries there
            found += [p for p in (root / sub).glob("*") if p.is_dir()]
    return sorted(found)


def generations(parent: Path) -> dict[str, list[Path]]:
    """The entry folders of a model by commit, oldest first: `<commit>`, then `<commit>+1`, `<commit>+2`, ...

    A later one is made only when a rebuild could not remove the earlier ones (on Windows, while mapped)."""
    found: dict[str, list[tuple[int, Path]]] = {}
    with contextlib.suppress(OSError), os.scandir(parent) as children:
        for child in children:
            commit, plus, n = child.name.partition(GENERATION)
            if (
                child.name.startswith(".")
                or child.name in ("refs", RECORDS)
                or child.name.endswith(".partial")  # a download kept (partial.py), never an entry
                or (plus and not n.isdecimal())
            ):
                continue  # a build in progress, our records, or not ours
            if child.is_dir():
                found.setdefault(commit, []).append((int(n or 0), Path(child.path)))
    return {commit: [path for _, path in sorted(found[commit])] for commit in sorted(found)}


def live_folder(folders: list[Path]) -> Path | None:
    """The folder in use among a commit's: the newest that holds a manifest (without one, it is no entry)."""
    return next((f for f in reversed(folders) if (f / "manifest.json").is_file()), None)


def live_folders(parent: Path) -> list[Path]:
    """The live entry folder of each commit of a model."""
    return sorted(f for folders in generations(parent).values() if (f := live_folder(folders)) is not None)


def commit_of(folder: Path) -> str:
    return folder.name.partition(GENERATION)[0]


def folder_size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def folder_fingerprint(folder: Path) -> str:
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
    import hashlib

    # A Hub model's warm command reads no checkpoint, so checkpoint_files is imported only here.
    from gpt2emb.store import checkpoint_files

    parts = []
    for name in (
        "config.json",
        "tokenizer.json",
        "vocab.json",
        "merges.txt",
        *checkpoint_files.local_files(folder),
    ):
        p = folder / name
        if p.is_file():
            parts.append(f"{name}:{stat_line(p)}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def stat_line(path: Path) -> str:
    """What a file's entry is keyed by (see folder_fingerprint): its size, modification and change times, and
    inode. A static word table's entry is keyed by its file's (store/static.py)."""
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def file_fingerprint(path: Path, sha256: bool = False, whole: bool = False) -> str:
    """A cheap checksum, checked on every open: the CRC-32 of the size and 16 sampled 4 KiB blocks, enough to
    tell damage or a swapped file (`cache verify` checks each file's whole SHA-256). CRC-32, as zlib has it:
    hashlib's import loads OpenSSL, a tenth of a warm command's own time. sha256: an entry of format 3's.
    whole: the CRC-32 of every byte, for the files a query reads whole but cannot check row by row."""
    size = path.stat().st_size
    if whole:
        crc = zlib.crc32(str(size).encode())
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                crc = zlib.crc32(chunk, crc)
        return f"{crc:08x}"
    parts = [str(size).encode()]
    with path.open("rb") as f:
        for i in range(16):
            f.seek(max(0, (size - 4096) * i // 15))
            parts.append(f.read(4096))
    if sha256:
        import hashlib

        return hashlib.sha256(b"".join(parts)).hexdigest()[:32]
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    return f"{crc:08x}"


def checked_whole(name: str, format: int) -> bool:
    """Whether an entry's file is checked byte for byte on every open: from format 5, every file but the
    tables wte and wpe (some hundreds of MB, whose rows carry CRC-32s of their own); a byte that no sampled
    block covered (a norm, a piece of the vocabulary) would have changed an answer unnoticed."""
    return format >= WHOLE_FORMAT and name not in ("wte.npy", "wpe.npy")


def _own_key(manifest: dict[str, Any]) -> str:
    """The manifest's key of its own checksum (format 3's: its SHA-256)."""
    return "sha256_self" if manifest.get("format") == SHA256_FORMAT else SELF_CHECK


def manifest_digest(manifest: dict[str, Any]) -> str:
    """The CRC-32 of the manifest's own fields (all but this one): a damaged manifest is noticed too (format
    3's: their SHA-256)."""
    if manifest.get("format") == SHA256_FORMAT:
        import hashlib

        body = json.dumps({k: v for k, v in manifest.items() if k != _own_key(manifest)}, sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()
    return record_digest(manifest)


def record_digest(record: dict[str, Any]) -> str:
    """The CRC-32 of a JSON record's fields but its own checksum (SELF_CHECK): a manifest, a checkpoint's
    record in info/. Damage to any byte of it is noticed where it is read."""
    body = json.dumps({k: v for k, v in record.items() if k != SELF_CHECK}, sort_keys=True).encode()
    return f"{zlib.crc32(body):08x}"


def plain_name(name: object) -> bool:
    """Whether a file name read from a record names a file in the record's own folder: no separator, no
    drive, not . or .. (nor any hidden name), nothing that does not print."""
    return (
        isinstance(name, str)
        and name != ""
        and name.isprintable()
        and not name.startswith(".")
        and not any(c in name for c in "/\\:")
    )


def row_norms(wte: np.ndarray) -> np.ndarray:
    """Each row's norm as stored: summed in float64 (in float32 the squares of tiny or huge rows under- or
    overflow). A norm past float32's range is stored as inf: such a row gets no fast bound, and is scored
    exactly."""
    with np.errstate(over="ignore"):
        return measures.row_norms(wte).astype(np.float32)


def remove_folder(folder: Path, whole: bool) -> str:
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


class OtherVersion(ValueError):
    pass


def read_manifest(entry: Path) -> dict[str, Any]:
    """The manifest of an entry of this version; raises ValueError or OSError when it cannot be trusted."""
    text = (entry / "manifest.json").read_bytes()
    try:
        manifest: dict[str, Any] = json.loads(text)
    except ValueError as e:  # the parser's own message says where, not what: say which file
        raise ValueError("manifest.json is damaged: it is not JSON") from e
    if not isinstance(manifest, dict):
        raise ValueError("manifest.json is damaged: it is not a JSON object")
    if manifest.get("format") not in READ_FORMATS:
        raise OtherVersion("it was written by another version of gpt2emb")
    if manifest.get(_own_key(manifest)) != manifest_digest(manifest):
        raise ValueError("manifest.json is damaged: it does not match its checksum")
    for key in ("files", "sha256"):
        if not isinstance(manifest.get(key), dict) or not all(map(plain_name, manifest[key])):
            raise ValueError(f"manifest.json is damaged: its {key} names a file outside its entry")
    return manifest


def open_entry(ref: ModelRef, entry: Path) -> OpenedEntry:
    """Open an entry, checking it against its manifest; raises ValueError or OSError when it is damaged."""
    manifest = read_manifest(entry)
    sha256 = manifest["format"] == SHA256_FORMAT
    for f, fp in manifest["files"].items():
        if file_fingerprint(entry / f, sha256, checked_whole(f, manifest["format"])) != fp:
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
    return OpenedEntry(
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
        {},  # sound: this entry's own
    )


def has_entries(ref: ModelRef) -> bool:
    """Whether the cache holds anything of a model (of a local folder: of that path, even when it is gone)."""
    return repo_dir(ref).is_dir()


def has_entry(ref: ModelRef, commit: str) -> bool:
    """Whether the entry of a commit is built (opening it still checks it)."""
    return (repo_dir(ref) / commit).is_dir()
