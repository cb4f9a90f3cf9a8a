"""Which commit a model's revision names, and the record of each commit's config and checkpoint headers.

A revision is resolved once and recorded in refs/. A local folder's commit is the fingerprint of its files.
Each commit's config and headers are recorded in info/.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from gpt2emb.errors import BadModel, NotCached
from gpt2emb.registry import ModelRef
from gpt2emb.store import hub
from gpt2emb.store.entries import (
    RECORDS,
    SELF_CHECK,
    UNTRUSTED,
    folder_fingerprint,
    generations,
    live_folder,
    plain_name,
    record_digest,
    repo_dir,
)

if TYPE_CHECKING:
    from gpt2emb.store.checkpoint import CheckpointInfo


def _write_atomic(path: Path, data: bytes) -> None:
    import tempfile  # needed once per model and revision, since a warm command writes nothing

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


def resolve_commit(ref: ModelRef) -> tuple[str, bool]:
    """The commit to use and whether it came from our own record (True: no network was needed).

    A branch or tag is looked up on first use and recorded in refs/; it is looked up again only by
    `cache refresh`. A whole commit id is itself."""
    if ref.folder is not None:
        from gpt2emb.store.formats import model_file

        if not model_file(ref.folder / "config.json", str(ref.folder / "config.json")):
            raise BadModel(
                f"{ref.folder} has no config.json: a local model is a folder saved by save_pretrained"
            )
        return folder_fingerprint(ref.folder), True
    assert ref.repo is not None
    if hub.is_full_commit(ref.revision):
        absent = live_folder(generations(repo_dir(ref)).get(ref.revision, [])) is None
        # Offline, the HF cache may still hold that commit's files. Only when it does not, say so now.
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
    return repo_dir(ref) / "refs" / quote(revision, safe="")


def record_commit(ref: ModelRef, commit: str) -> None:
    if ref.repo is not None and not hub.is_full_commit(ref.revision):
        with contextlib.suppress(OSError):
            _write_atomic(_ref_file(ref, ref.revision), commit.encode())


def info_to_json(info: CheckpointInfo) -> dict[str, Any]:
    """A checkpoint's record as info/<commit>.json holds it, with its own checksum."""
    from gpt2emb.store.checkpoint import INFO_FORMAT

    record = {
        "format": INFO_FORMAT,
        "commit": info.commit,
        "config": info.config,
        "weights_file": info.weights_file,
        "tensors": {k: [t.dtype, list(t.shape), t.start, t.end, t.file] for k, t in info.tensors.items()},
    }
    record[SELF_CHECK] = record_digest(record)
    return record


def info_from_json(ref: ModelRef, raw: object, commit: str) -> CheckpointInfo:
    """An info file read back; ValueError (or KeyError, TypeError) for one of another format or that cannot
    be trusted: then it is read from the model again."""
    from gpt2emb.store.checkpoint import CheckpointInfo
    from gpt2emb.store.formats import TensorInfo

    check_record(raw, commit)
    assert isinstance(raw, dict)
    tensors = {k: TensorInfo(d, tuple(s), a, b, f) for k, (d, s, a, b, f) in raw["tensors"].items()}
    return CheckpointInfo(ref.name, ref.repo, raw["commit"], raw["config"], raw["weights_file"], tensors)


def check_record(raw: object, commit: str) -> None:
    """Refuse (ValueError) an info file of another format, of another commit, damaged (it does not match its
    checksum), or naming a file that is not beside the weights (its names are joined onto the folder's)."""
    from gpt2emb.store.checkpoint import INFO_FORMAT
    from gpt2emb.store.checkpoint_files import INDEX, PICKLE, SINGLE

    if not isinstance(raw, dict) or raw.get("format") != INFO_FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else None
        raise ValueError(f"an info file of format {found!r}, not {INFO_FORMAT}")
    if raw.get(SELF_CHECK) != record_digest(raw):
        raise ValueError("it does not match its checksum")
    if raw.get("commit") != commit:
        raise ValueError(f"it is the record of another commit ({raw.get('commit')!r})")
    if not isinstance(raw.get("tensors"), dict):
        raise ValueError("it holds no tensors")
    names = [raw.get("weights_file"), *(t[-1] for t in raw["tensors"].values())]
    if raw.get("weights_file") not in (SINGLE, INDEX, PICKLE) or not all(map(plain_name, names)):
        raise ValueError("it names a file that is not beside the model's weights")


def checkpoint_info(ref: ModelRef, commit: str | None = None) -> CheckpointInfo:
    """Config and tensor header of a model, cached as one small JSON file per commit.

    Without a commit, the one ref.revision names, recorded once the header is read; with one, whoever
    resolved it records it (open_model, after building the entry)."""
    from gpt2emb.store import checkpoint  # imported only when a checkpoint is read, never by a warm command

    known = True
    if commit is None:
        commit, known = resolve_commit(ref)
    info_file = repo_dir(ref) / RECORDS / f"{commit}.json"
    try:
        info = info_from_json(ref, json.loads(info_file.read_bytes()), commit)
    except (*UNTRUSTED, RecursionError):  # an absent, older or damaged record is read from the model again
        info = checkpoint.read_info(ref, commit)
        with contextlib.suppress(OSError):
            _write_atomic(info_file, json.dumps(info_to_json(info)).encode())
    if not known:
        record_commit(ref, commit)
    return info
