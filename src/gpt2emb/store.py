"""Fetch a model's embeddings (through huggingface_hub), build gpt2emb's cache entry, open it memory-mapped.

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
import re
import shutil
import struct
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb.errors import BadModel, Gpt2embError, NetworkError, NotCached, UnknownModel, UsageError
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.report import QuietReporter, Reporter, Task

CACHE_ENV = "GPT2EMB_CACHE_DIR"
_CANNOT_WRITE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR}
_UNTRUSTED = (OSError, ValueError, KeyError, TypeError)  # what opening a damaged entry raises
_COMMIT = re.compile(r"[0-9a-zA-Z][0-9a-zA-Z_.-]{0,99}")
FORMAT = 2  # bump whenever the files of an entry change: older entries are then rebuilt
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
WTE_KEYS = ("wte.weight", "transformer.wte.weight")
WPE_KEYS = ("wpe.weight", "transformer.wpe.weight")
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


@dataclass(frozen=True)
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]
    start: int  # absolute byte offsets in the weights file
    end: int


@dataclass(frozen=True)
class CheckpointInfo:
    """What a model's config and checkpoint header say, without reading any weights."""

    name: str
    repo: str | None
    commit: str
    config: dict[str, Any]
    weights_file: str
    tensors: dict[str, TensorInfo]  # empty for a pickle checkpoint: its keys are not known without loading it


def cache_root() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("gpt2emb", appauthor=False))


# ---------------------------------------------------------------- config


def shape_of(config: dict[str, Any], name: str) -> Shape:
    model_type = config.get("model_type")
    if model_type != "gpt2":
        raise BadModel(
            f"{name} is not a GPT-2 model (its config says model_type={model_type!r}); use a GPT-2 model"
        )
    try:
        return Shape(
            vocab_size=int(config["vocab_size"]),
            d_model=int(config["n_embd"]),
            n_positions=int(config["n_positions"]),
            n_layer=int(config["n_layer"]),
            n_head=int(config["n_head"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise BadModel(
            f"{name}'s config.json lacks a GPT-2 field ({e}); the model folder looks damaged"
        ) from None


# ---------------------------------------------------------------- reading safetensors over any byte source

ReadRange = Callable[[int, int, Task | None], bytearray]  # (start, length, progress) -> exactly length bytes

_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F64": "<f8"}


def parse_header(read: ReadRange, name: str) -> dict[str, TensorInfo]:
    (n,) = struct.unpack("<Q", read(0, 8, None))
    if not 2 <= n <= 100_000_000:
        raise BadModel(f"{name}'s model.safetensors has no valid header; the file is damaged")
    try:
        header = json.loads(read(8, n, None))
    except ValueError:
        raise BadModel(f"{name}'s model.safetensors header is not JSON; the file is damaged") from None
    base = 8 + n
    return {
        key: TensorInfo(
            v["dtype"], tuple(v["shape"]), base + v["data_offsets"][0], base + v["data_offsets"][1]
        )
        for key, v in header.items()
        if key != "__metadata__"
    }


def find_key(tensors: dict[str, TensorInfo], keys: tuple[str, ...], name: str) -> str:
    for key in keys:
        if key in tensors:
            return key
    raise BadModel(f"{name}'s checkpoint has no {keys[0]} tensor; it is not a GPT-2 checkpoint")


def read_tensor(read: ReadRange, info: TensorInfo, task: Task | None) -> np.ndarray:
    if info.dtype not in _DTYPES:
        raise BadModel(f"embeddings stored as {info.dtype} are not supported (F32, F16, BF16 are)")
    raw = np.frombuffer(read(info.start, info.end - info.start, task), dtype=_DTYPES[info.dtype])
    if info.dtype == "BF16":
        raw = (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32, copy=False).reshape(info.shape)  # F32: the downloaded buffer itself


def _local_reader(path: Path) -> ReadRange:
    def read(start: int, length: int, task: Task | None) -> bytearray:
        data = bytearray(length)
        with path.open("rb") as f:
            f.seek(start)
            got = f.readinto(data)
        if got != length:
            raise BadModel(f"{path} is shorter than its header says; the file is truncated")
        if task:
            task.advance(length)
        return data

    return read


def _remote_reader(repo: str, filename: str, commit: str) -> ReadRange:
    """HTTP Range reads through huggingface_hub's own session, so HF_ENDPOINT, HF_TOKEN and proxies apply."""
    from huggingface_hub import constants, hf_hub_url
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status  # type: ignore[attr-defined]

    url = hf_hub_url(repo, filename, revision=commit)
    headers = build_hf_headers()

    def read(start: int, length: int, task: Task | None) -> bytearray:
        wanted = {**headers, "Range": f"bytes={start}-{start + length - 1}"}
        data, got = bytearray(length), 0  # one buffer, filled in place: no second copy of a 322 MB matrix
        with (
            _hub_errors(repo),
            get_session().stream(
                "GET", url, headers=wanted, timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT
            ) as response,
        ):
            if response.status_code >= 400:
                response.read()  # the error message is in the body
            hf_raise_for_status(response)
            if response.status_code != 206:
                raise NetworkError(_fetch_failed(repo, f"the server ignored a Range request for {filename}"))
            for chunk in response.iter_bytes(1 << 20):
                if got + len(chunk) > length:
                    raise NetworkError(_fetch_failed(repo, f"the server sent more of {filename} than asked"))
                data[got : got + len(chunk)] = chunk
                got += len(chunk)
                if task:
                    task.advance(len(chunk))
        if got != length:
            raise NetworkError(_fetch_failed(repo, f"the download of {filename} stopped early"))
        return data

    return read


# ---------------------------------------------------------------- the Hub


@contextlib.contextmanager
def _hub_errors(repo: str) -> Iterator[None]:
    """Turn huggingface_hub's and httpx's errors into ours, with the fix in the message."""
    from huggingface_hub import errors
    from huggingface_hub.utils import logging

    logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # its retry warnings would break our one-line messages

    try:
        yield
    except Gpt2embError:
        raise
    except errors.GatedRepoError:
        raise NetworkError(f"{repo} is gated: accept its terms on the Hub and set HF_TOKEN") from None
    except errors.RepositoryNotFoundError:
        raise UnknownModel(f"there is no Hub repo {repo} (if it is private, set HF_TOKEN)") from None
    except errors.RevisionNotFoundError:
        raise UsageError(f"{repo} has no such revision") from None
    except (errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError):
        raise NotCached(_not_cached(repo)) from None
    except errors.HfHubHTTPError as e:
        raise NetworkError(_fetch_failed(repo, str(e).splitlines()[0])) from None
    except OSError as e:
        raise NetworkError(_fetch_failed(repo, str(e) or type(e).__name__)) from None
    except ValueError as e:  # huggingface_hub refuses what the server said (a commit id that is a path, ...)
        raise NetworkError(_fetch_failed(repo, f"unusable answer: {str(e).splitlines()[0][:200]}")) from None
    except Exception as e:
        # httpx's transport errors (connection reset, timeouts, a body cut short) do not derive from OSError
        if type(e).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2", "h11"):
            raise NetworkError(_fetch_failed(repo, type(e).__name__)) from None
        raise


def _fetch_failed(repo: str, reason: str) -> str:
    return (
        f"{repo} is not cached, and fetching it from the Hub failed ({reason}); nothing was kept: "
        "check the network and run again"
    )


def _not_cached(repo: str) -> str:
    if _offline():
        return f"{repo} is not cached and HF_HUB_OFFLINE is set: run once with the network to fetch it"
    return f"{repo} is not cached and the Hub cannot be reached: run once with the network to fetch it"


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def _hub_file(repo: str, filename: str, revision: str) -> Path | None:
    """A file of a Hub repo, from the HF cache or downloaded into it; None if the repo has no such file."""
    from huggingface_hub import errors, hf_hub_download
    from huggingface_hub.utils import disable_progress_bars  # type: ignore[attr-defined]

    with _hub_errors(repo), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns when HF_HUB_DISABLE_PROGRESS_BARS overrides us
        # a bar for a few kilobytes is noise; a whole pickle checkpoint keeps huggingface_hub's own bar
        small = filename not in WEIGHT_FILES
        with disable_progress_bars("huggingface_hub.http_get") if small else contextlib.nullcontext():
            try:
                return Path(hf_hub_download(repo, filename, revision=revision))
            except errors.RemoteEntryNotFoundError:
                return None
            except errors.LocalEntryNotFoundError:
                if filename == "config.json":
                    raise
                return None  # offline: an optional file that was never fetched counts as absent


def _hub_has(repo: str, filename: str, commit: str) -> bool:
    from huggingface_hub import errors, get_hf_file_metadata, hf_hub_url

    with _hub_errors(repo):
        try:
            get_hf_file_metadata(hf_hub_url(repo, filename, revision=commit))
            return True
        except errors.RemoteEntryNotFoundError:
            return False


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
    for name in ("config.json", "tokenizer.json", "vocab.json", "merges.txt", *WEIGHT_FILES):
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


def _resolve_commit(ref: ModelRef, revision: str = "main") -> tuple[str, bool]:
    """The commit to use and whether it came from our own record (True: no network was needed)."""
    if ref.folder is not None:
        if not (ref.folder / "config.json").is_file():
            raise BadModel(
                f"{ref.folder} has no config.json: a local model is a folder saved by save_pretrained"
            )
        return _folder_fingerprint(ref.folder), True
    assert ref.repo is not None
    ref_file = _repo_dir(ref) / "refs" / revision
    with contextlib.suppress(OSError):
        commit = ref_file.read_text().strip()
        if _COMMIT.fullmatch(commit):
            return commit, True
    config = _hub_file(ref.repo, "config.json", revision)
    if config is None:
        raise BadModel(f"{ref.repo} has no config.json: it is not a transformers model")
    commit = config.parent.name if config.parent.parent.name == "snapshots" else revision
    if not _COMMIT.fullmatch(commit):  # it names a folder of ours: never a path
        raise BadModel(f"the Hub gave {ref.repo} a commit id that is not one ({commit!r})")
    return commit, False


def _record_commit(ref: ModelRef, commit: str, revision: str = "main") -> None:
    if ref.repo is not None:
        with contextlib.suppress(OSError):
            _write_atomic(_repo_dir(ref) / "refs" / revision, commit.encode())


# ---------------------------------------------------------------- checkpoint info (config + header)


def _source_file(ref: ModelRef, commit: str, filename: str) -> Path | None:
    if ref.folder is not None:
        p = ref.folder / filename
        return p if p.is_file() else None
    assert ref.repo is not None
    return _hub_file(ref.repo, filename, commit)


def _weights_reader(ref: ModelRef, commit: str) -> tuple[str, ReadRange | None]:
    """Where the weights are: a safetensors file read locally or by ranges, or else a pickle checkpoint."""
    if ref.folder is not None:
        for filename in WEIGHT_FILES:
            if (ref.folder / filename).is_file():
                reader = _local_reader(ref.folder / filename) if filename.endswith(".safetensors") else None
                return filename, reader
        raise BadModel(
            f"{ref.folder} holds no model.safetensors or pytorch_model.bin; save the model's weights there"
        )
    assert ref.repo is not None
    from huggingface_hub import try_to_load_from_cache

    cached = isinstance(try_to_load_from_cache(ref.repo, "model.safetensors", revision=commit), str)
    if not cached and _offline():
        raise NotCached(_not_cached(ref.repo))
    if cached or _hub_has(ref.repo, "model.safetensors", commit):
        return "model.safetensors", _safetensors_reader(ref, commit)
    if _hub_has(ref.repo, "pytorch_model.bin", commit):
        return "pytorch_model.bin", None
    raise BadModel(f"{ref.repo} has no model.safetensors or pytorch_model.bin; it holds no GPT-2 weights")


def _safetensors_reader(ref: ModelRef, commit: str) -> ReadRange:
    """model.safetensors from the folder, or the HF cache when it is there, else by ranges from the Hub."""
    if ref.folder is not None:
        return _local_reader(ref.folder / "model.safetensors")
    assert ref.repo is not None
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(ref.repo, "model.safetensors", revision=commit)
    if isinstance(cached, str):
        return _local_reader(Path(cached))
    if _offline():
        raise NotCached(_not_cached(ref.repo))
    return _remote_reader(ref.repo, "model.safetensors", commit)


def checkpoint_info(ref: ModelRef, commit: str | None = None) -> CheckpointInfo:
    """Config and tensor header of a model, cached as one small JSON file per commit."""
    if commit is None:
        commit, _ = _resolve_commit(ref)
    info_file = _repo_dir(ref) / "info" / f"{commit}.json"
    with contextlib.suppress(*_UNTRUSTED):
        raw = json.loads(info_file.read_text())
        return _info_from_json(ref, raw)
    info = _fetch_info(ref, commit)
    _record_commit(ref, commit)
    raw = {
        "commit": info.commit,
        "config": info.config,
        "weights_file": info.weights_file,
        "tensors": {k: [t.dtype, list(t.shape), t.start, t.end] for k, t in info.tensors.items()},
    }
    with contextlib.suppress(OSError):
        _write_atomic(info_file, json.dumps(raw).encode())
    return info


def _info_from_json(ref: ModelRef, raw: dict[str, Any]) -> CheckpointInfo:
    tensors = {k: TensorInfo(d, tuple(s), a, b) for k, (d, s, a, b) in raw["tensors"].items()}
    return CheckpointInfo(ref.name, ref.repo, raw["commit"], raw["config"], raw["weights_file"], tensors)


def _fetch_info(ref: ModelRef, commit: str) -> CheckpointInfo:
    config_path = _source_file(ref, commit, "config.json")
    if config_path is None:
        raise BadModel(f"{ref.name} has no config.json: it is not a transformers model")
    try:
        config = json.loads(config_path.read_text())
    except (OSError, ValueError):
        raise BadModel(f"{ref.name}'s config.json is not valid JSON") from None
    if not isinstance(config, dict):
        raise BadModel(f"{ref.name}'s config.json is not a JSON object")
    shape = shape_of(config, ref.name)
    weights_file, reader = _weights_reader(ref, commit)
    tensors = parse_header(reader, ref.name) if reader is not None else {}
    if tensors:  # checked before anything is cached
        wte, wpe = (tensors[find_key(tensors, keys, ref.name)].shape for keys in (WTE_KEYS, WPE_KEYS))
        _check_shapes(ref.name, shape, wte, wpe)
    return CheckpointInfo(ref.name, ref.repo, commit, config, weights_file, tensors)


def _check_shapes(name: str, shape: Shape, wte: tuple[int, ...], wpe: tuple[int, ...]) -> None:
    if wte != (shape.vocab_size, shape.d_model) or wpe != (shape.n_positions, shape.d_model):
        raise BadModel(
            f"{name}'s checkpoint disagrees with its config: wte is {list(wte)} and wpe {list(wpe)}, the "
            f"config says [{shape.vocab_size}, {shape.d_model}] and [{shape.n_positions}, {shape.d_model}]"
        )


# ---------------------------------------------------------------- building an entry


def _tokenizer_json(ref: ModelRef, commit: str) -> str:
    path = _source_file(ref, commit, "tokenizer.json")
    if path is not None:
        return path.read_text(encoding="utf-8")
    vocab, merges = _source_file(ref, commit, "vocab.json"), _source_file(ref, commit, "merges.txt")
    if vocab is None or merges is None:
        raise BadModel(f"{ref.name} has no tokenizer (tokenizer.json, or vocab.json with merges.txt)")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text: str = tok.to_str()
    return text


def _embeddings(ref: ModelRef, info: CheckpointInfo, reporter: Reporter) -> tuple[np.ndarray, np.ndarray]:
    if not info.tensors:  # a pickle checkpoint: torch's weights-only loader reads it
        path = _source_file(ref, info.commit, info.weights_file)
        if path is None:
            raise BadModel(f"{ref.name} has no {info.weights_file}")
        from gpt2emb import heavy

        return heavy.load_bin_embeddings(path, WTE_KEYS, WPE_KEYS, ref.name)
    reader = _safetensors_reader(ref, info.commit)
    wte_info = info.tensors[find_key(info.tensors, WTE_KEYS, ref.name)]
    wpe_info = info.tensors[find_key(info.tensors, WPE_KEYS, ref.name)]
    total = (wte_info.end - wte_info.start) + (wpe_info.end - wpe_info.start)
    with reporter.progress(f"fetching {ref.name} embeddings", total) as task:
        return read_tensor(reader, wte_info, task), read_tensor(reader, wpe_info, task)


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
    tokenizer = _tokenizer_json(ref, info.commit)
    vocab = json.loads(tokenizer)["model"]["vocab"]
    wte, wpe = _embeddings(ref, info, reporter)
    _check_shapes(ref.name, shape, wte.shape, wpe.shape)
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


def open_model(ref: ModelRef, reporter: Reporter | None = None) -> Model:
    """The model's cache entry, built on first use; afterwards no network and no torch."""
    reporter = reporter or QuietReporter()
    commit, known = _resolve_commit(ref)
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
        _build(ref, _fetch_info(ref, commit), entry, reporter)
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
