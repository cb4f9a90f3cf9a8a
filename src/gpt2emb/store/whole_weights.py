"""The whole checkpoint's weight files, for running the model: which are absent, and the folder holding them.

gpt2emb's own cache holds only the embedding tables. A command that runs the whole model (text, tying's
--load) needs every weight file, which huggingface_hub fetches into its own cache.
"""

from __future__ import annotations

from pathlib import Path

from gpt2emb.errors import BadModel, NotCached
from gpt2emb.registry import ModelRef
from gpt2emb.store import hub
from gpt2emb.store.checkpoint import CheckpointInfo
from gpt2emb.store.checkpoint_files import INDEX, source_file


def _gone(ref: ModelRef, commit: str, filename: str) -> BadModel:
    """The error for a file that the Hub listed at this commit but no longer serves."""
    return BadModel(
        f"the Hub no longer serves {filename} of {ref.repo} at commit {commit[:12]}: the commit may be gone"
    )


def weight_files(info: CheckpointInfo) -> list[str]:
    """Every file that transformers reads the model's weights from."""
    if info.weights_file == INDEX:
        return [INDEX, *sorted({t.file for t in info.tensors.values()})]
    return [info.weights_file]


def absent_weights(ref: ModelRef, info: CheckpointInfo) -> list[str]:
    """The weight files not on this machine yet.

    Offline, any such file is NotCached, since gpt2emb's own cache holds only the embedding tables. Online,
    the Hub is probed for them (hub.probe), so that a command may ask before its slow work begins.
    """
    if ref.repo is not None:  # a Hub model: a folder has its weights, and a static table has none to run
        missing = [f for f in weight_files(info) if hub.cached(ref.repo, f, info.commit) is None]
        if missing and hub.offline():
            raise NotCached(
                f"this runs the whole of {ref.name}, and its weights ({', '.join(missing)}) are not in the "
                "Hugging Face cache while HF_HUB_OFFLINE is set: run once with the network to fetch them"
            )
        # Where the Hub cannot be reached, the message names what a first use of the whole model lacks.
        if missing:
            hub.probe(ref.repo, missing[0], info.commit, f"the whole of {ref.name} ({', '.join(missing)})")
        return missing
    return []


def missing_weights(ref: ModelRef, info: CheckpointInfo) -> dict[str, int]:
    """The weight files not on this machine yet, with their sizes. Running the whole model fetches these."""
    sizes = {}
    for f in absent_weights(ref, info):
        assert ref.repo is not None
        size = hub.size(ref.repo, f, info.commit)
        if size is None:
            raise _gone(ref, info.commit, f)
        sizes[f] = size
    return sizes


def weights_folder(ref: ModelRef, info: CheckpointInfo) -> Path:
    """A folder on this machine that holds the config and every weight file.

    It is the model's own folder, or the HF cache's snapshot of the commit. Whatever the snapshot lacks is
    fetched into it first, with huggingface_hub's progress bar.
    """
    if ref.folder is not None:
        return ref.folder
    folder = None
    for f in ("config.json", *weight_files(info)):
        path = source_file(ref, info.commit, f)
        if path is None:
            raise _gone(ref, info.commit, f)
        folder = path.parent  # every file of one commit lies in the same snapshot folder
    assert folder is not None
    return folder
