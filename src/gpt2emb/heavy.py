"""Everything that needs torch or transformers, imported only when a command really needs them.

Functions here take plain inputs (paths, token ids, the names of a family's classes) and return numpy arrays
or plain values; they reach the token table and the output layer through transformers' generic accessors
(get_input_embeddings, get_output_embeddings), whatever the family.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import pickle
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb import families
from gpt2emb.errors import BadModel

UNSAFE = "could not be read safely as a weights-only checkpoint"
SAVE_AGAIN = "the model folder looks damaged: save it again"
# a pickle gpt2emb will not run (it may hold code): the fix is a format that holds none
SAVE_SAFELY = "save the model again as safetensors (save_pretrained does by default), which holds no code"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No warning of torch's or transformers' reaches the user (a FutureWarning about a config field
    transformers renamed, a pickle's protocol): whatever is wrong is said in one line by the error after."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _not_the_models(e: BaseException, where: Path) -> None:
    """Raise the true error for a load that failed for want of memory, disk space or permission: the model is
    not at fault, and saving it again would not help. Return for any other error."""
    if isinstance(e, PermissionError):
        raise e  # the error boundary names the file and how to grant access (exit 6, permission)
    if isinstance(e, MemoryError):
        raise BadModel(
            f"there is not enough memory to load the model in {where}: close other programs and run again, "
            "or use a smaller model"
        ) from None
    if isinstance(e, OSError) and e.errno == errno.ENOSPC:
        raise BadModel(
            f"the disk is full: loading the model in {where} needs space to write ({_one_line(e)}); "
            "free some space and run again"
        ) from None


def _one_line(e: Exception) -> str:
    """An error of transformers' or torch's as our one-line messages quote it: its type and its whole text,
    white space collapsed (its reason is often on its second line); a pathological one cut at 1,000."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text if len(text) <= 1000 else text[:1000] + '...'}"


def load_bin_embeddings(
    path: Path, wanted: dict[str, tuple[str, ...]], name: str
) -> dict[str, tuple[str, np.ndarray]]:
    """The embedding tables of a pytorch_model.bin, each with the name the file stores it under.

    wanted maps the entry's name of each table to its names in a checkpoint. The file is read with torch's
    weights-only loader, never plain pickle."""
    import torch

    state = _state(path)
    starts = _storage_starts(path, state)
    found = {}
    for table, keys in wanted.items():
        key = next((k for k in keys if k in state), None)
        if key is None:
            raise BadModel(
                f"{name}'s checkpoint has no {keys[0]} tensor: it is not a checkpoint of its model type"
            )
        tensor = state[key].detach() if starts is None else _read(path, state[key], starts)
        found[table] = key, tensor.to(torch.float32).numpy()
    return found


def _storage_starts(path: Path, state: dict[str, Any]) -> int | None:
    """Where in the file the mapped storages start: their address less this is their offset (None when that
    cannot be told: then the mapping is read). The loader maps the whole file from its first byte, each
    storage a slice of it at its zip record's data; reading the rows through the mapping would kill the
    process (SIGBUS) if the file were cut short meanwhile, so they are read as bytes (_read)."""
    import struct
    import zipfile

    import torch

    try:
        with zipfile.ZipFile(path) as archive, path.open("rb") as f:
            records = set()
            for info in archive.infolist():
                if not info.filename.rpartition("/data/")[2].isdecimal():
                    continue  # not a storage: the pickle, the version, the byte order
                f.seek(info.header_offset)
                head = f.read(30)  # a zip's local header: its name and extra field come before the data
                if len(head) == 30:
                    records.add(info.header_offset + 30 + sum(struct.unpack("<HH", head[26:30])))
    except (OSError, zipfile.BadZipFile, struct.error) as e:  # torch.load read it whole a moment ago
        raise BadModel(f"{path} cannot be read as a zip archive any more ({type(e).__name__})") from None
    found = {t.untyped_storage().data_ptr() for t in state.values() if isinstance(t, torch.Tensor)}
    found.discard(0)
    if not found or not records:
        return None
    base = min(found) - min(records)
    return base if all(p - base in records for p in found) else None


def _read(path: Path, tensor: Any, base: int) -> Any:
    """A tensor's storage read from the file with plain reads (a file cut short is a short read, an error,
    not a signal), viewed as the tensor was."""
    import torch

    storage = tensor.untyped_storage()
    data = bytearray(storage.nbytes())
    with path.open("rb") as f:
        f.seek(storage.data_ptr() - base)
        got = f.readinto(data)
    if got != len(data):
        raise BadModel(f"{path} is shorter than its own index says: it was cut short")
    if not data:
        return torch.empty(tensor.shape, dtype=tensor.dtype)
    whole = torch.frombuffer(data, dtype=tensor.dtype)
    return whole.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())


def _state(path: Path) -> dict[str, Any]:
    """A pytorch_model.bin's state dict by the weights-only loader, memory-mapped (nothing read till used)."""
    import torch

    try:
        with _quiet():
            state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as e:  # torch raises many types for a bad or unsafe pickle
        _not_the_models(e, path)
        if not _whole_zip(path):  # cut short (a copy not finished): no pickle was refused
            raise BadModel(
                f"{path} is damaged: it is not a whole zip archive, as torch.save writes one (it may have "
                "been cut short); save the model again"
            ) from None
        raise BadModel(f"{path} {UNSAFE} ({type(e).__name__}); {SAVE_SAFELY}") from None
    if not isinstance(state, dict):
        raise BadModel(f"{path} is not a state dict")
    return state


def _whole_zip(path: Path) -> bool:
    """Whether a file is a whole zip archive: its central directory, at its end, is there and readable."""
    import zipfile

    try:
        with zipfile.ZipFile(path):
            return True
    except (OSError, zipfile.BadZipFile):
        return False


def _classes(names: tuple[str, str, str]) -> tuple[Any, Any, Any]:
    """A family's config, base model and language model classes, by their names in transformers."""
    with _quiet():
        import transformers

    _quiet_transformers()
    config, base, lm = (getattr(transformers, name) for name in names)
    return config, base, lm


@functools.cache
def _quiet_transformers() -> None:
    """transformers' load reports (buffers it drops, generation settings) are not about embeddings, and its
    bar for turning loaded tensors into parameters would follow huggingface_hub's download bar (left as it
    is): both off through its public switches, once (then as a program that imports gpt2emb sets them)."""
    from transformers.utils import logging

    logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    logging.set_tqdm_hook(lambda factory, args, kwargs: factory(*args, **{**kwargs, "disable": True}))


def _load(folder: Path, classes: tuple[str, str, str], language_model: bool, label: str | None) -> Any:
    """The whole model from a folder on this machine (nothing fetched here), in float32, in eval mode, once
    its config and its weights are known to agree on its blocks (transformers would build any number of
    them, and start those the weights lack at random). label: its config.json as messages name it (None:
    its path in the folder)."""
    import torch

    config_class, base, lm = _classes(classes)
    label = label or str(folder / "config.json")
    try:
        config = json.loads((folder / "config.json").read_bytes())
    except (OSError, ValueError) as e:  # read_info read it: the folder changed since
        _not_the_models(e, folder)
        raise BadModel(f"cannot read {label} ({_one_line(e)}); {SAVE_AGAIN}") from None
    _check_activation(config, label)
    try:
        with _quiet():
            n_layer = int(config_class(**config).num_hidden_layers)
    except Exception as e:  # transformers' own errors for a config it cannot take
        raise BadModel(
            f"transformers cannot load the model in {folder} ({_one_line(e)}); {SAVE_AGAIN}"
        ) from None
    shapes = check_blocks(folder, n_layer, label)
    # the language model even for its base: its names reach the checkpoint's by a prefix either way
    check_shapes(_meta_model(config, classes, label), shapes, label, str(_weights_file(folder)))
    try:
        with _quiet():
            model = (lm if language_model else base).from_pretrained(folder, dtype=torch.float32)
    except (
        pickle.UnpicklingError
    ):  # the weights-only loader refuses a pickle it cannot read or that runs code
        raise BadModel(f"{folder / 'pytorch_model.bin'} {UNSAFE} (UnpicklingError); {SAVE_SAFELY}") from None
    except Exception as e:  # transformers and torch raise many types for weights they cannot load
        _not_the_models(e, folder)
        raise BadModel(
            f"transformers cannot load the model in {folder} ({_one_line(e)}); save the model again"
        ) from None
    return model.eval()


def check_blocks(folder: Path, n_layer: int, label: str) -> dict[str, tuple[int, ...]]:
    """The config's number of blocks is the number the weights in folder hold (their names read, not their
    data): transformers would build any number, however slowly, starting those the weights lack at random.
    Returns the shape of each tensor the weights hold, for check_shapes (empty for a folder holding none)."""
    shapes = weight_shapes(folder)
    blocks = families.blocks_in(list(shapes)) or 0
    weights = _weights_file(folder)
    if weights is not None and blocks != n_layer:
        raise BadModel(
            f"{label} gives the model {n_layer} blocks, but {weights} holds {blocks}: the config and the "
            "weights disagree; save the model again"
        )
    return shapes


def _weights_file(folder: Path) -> Path | None:
    """The file transformers loads the weights from (safetensors first, as it prefers), None for none."""
    names = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
    return next((folder / f for f in names if (folder / f).is_file()), None)


def weight_shapes(folder: Path) -> dict[str, tuple[int, ...]]:
    """The shape of each tensor in the weights transformers would load from folder, read from the headers of
    safetensors files (a sharded index's shards too), or from a pickle's tensors memory-mapped."""
    weights = _weights_file(folder)
    if weights is None:
        return {}  # transformers says so
    if weights.suffix == ".bin":
        return {k: tuple(v.shape) for k, v in _state(weights).items() if hasattr(v, "shape")}
    try:
        from safetensors import safe_open

        files = [weights]
        if weights.suffix == ".json":
            files = [folder / s for s in sorted(set(json.loads(weights.read_bytes())["weight_map"].values()))]
        shapes = {}
        for file in files:
            with safe_open(str(file), "np") as f:
                names = f.keys()  # the header's, without the data
                shapes.update({k: tuple(f.get_slice(k).get_shape()) for k in names})
    except Exception as e:  # read_info read them: the folder changed since
        _not_the_models(e, folder)
        raise BadModel(
            f"transformers cannot load the model in {folder} ({_one_line(e)}); save the model again"
        ) from None
    return shapes


def check_shapes(model: Any, shapes: dict[str, tuple[int, ...]], label: str, weights: str) -> None:
    """Every tensor of model (built on the meta device) has the shape the checkpoint gives it: a config that
    disagrees with its weights (n_inner, a vocabulary size) builds a model of any size, which transformers
    then refuses with a report gpt2emb silences. A checkpoint's names lack the model's prefix ("h.0..." for
    "transformer.h.0..."): each is matched to the model's name it equals or ends, and skipped when it matches
    none (a buffer not saved, a pooler the language model lacks) or several."""
    own = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    by_suffix: dict[str, list[str]] = {}
    for name in own:
        parts = name.split(".")
        for i in range(len(parts)):
            by_suffix.setdefault(".".join(parts[i:]), []).append(name)
    stored = {}  # the model's name -> the checkpoint's name and shape
    for key, shape in shapes.items():
        found = [key] if key in own else by_suffix.get(key, [])
        if len(found) == 1:
            stored[found[0]] = key, shape
    for name, shape in own.items():  # in the model's order: the first tensor of the first block first
        if name in stored and stored[name][1] != shape:
            key, saved = stored[name]
            raise BadModel(
                f"{label} describes a model whose {key} is {list(shape)}, but {weights} holds it as "
                f"{list(saved)}: the config and the weights disagree; save the model again"
            )


def _tied(model: Any) -> bool:
    return bool(model.get_output_embeddings().weight is model.get_input_embeddings().weight)


def _check_activation(config: dict[str, Any], label: str) -> None:
    """An activation function transformers knows, named before it is asked to build the model (its own
    error would be a bare KeyError); label: the config file as messages name it."""
    with _quiet():
        from transformers.activations import ACT2FN

    for key in ("activation_function", "hidden_act", "activation"):
        if key in config and (not isinstance(config[key], str) or config[key] not in ACT2FN):
            raise BadModel(
                f"{label} says {key} = {families.as_written(config[key])}, which transformers does not know "
                f"(as gelu_new, gelu, relu, silu); {SAVE_AGAIN}"
            )


def meta_model_ties(
    config: dict[str, Any],
    classes: tuple[str, str, str],
    label: str = "config.json",
    shapes: dict[str, tuple[int, ...]] | None = None,
    weights: str = "the checkpoint",
) -> tuple[bool, int]:
    """The language model built on the meta device (no memory, no weights): is its output layer wte?
    label: the config file as messages name it (checkpoint.config_label); shapes: the checkpoint's tensors'
    (None: not known without loading them), checked against the model's, weights naming their file."""
    model = _meta_model(config, classes, label)
    if shapes is not None:
        check_shapes(model, shapes, label, weights)
    n_params = sum(p.numel() for p in model.parameters())
    return _tied(model), int(n_params)


def _meta_model(config: dict[str, Any], classes: tuple[str, str, str], label: str) -> Any:
    """The language model the config describes, built on the meta device: shapes, no memory, no weights."""
    import torch

    config_class, _, lm = _classes(classes)
    _check_activation(config, label)
    try:
        with _quiet(), torch.device("meta"):
            return lm(config_class(**config))
    except Exception as e:  # transformers' own errors for a config it cannot build (families.check_config
        # refuses the ones it knows first, naming the key)
        raise BadModel(
            f"transformers cannot build {classes[2]} from {label} ({_one_line(e)}); {SAVE_AGAIN}"
        ) from None


def loaded_model_ties(
    folder: Path, classes: tuple[str, str, str], label: str | None = None
) -> tuple[bool, int, int]:
    """The lab's own proof on the real model: do the output layer and wte share one storage? (data_ptr)"""
    model = _load(folder, classes, True, label)
    a = model.get_output_embeddings().weight.data_ptr()
    b = model.get_input_embeddings().weight.data_ptr()
    return a == b, int(a), int(b)


def hidden_states(
    folder: Path, classes: tuple[str, str, str], inputs: list[tuple[int, ...]], label: str | None = None
) -> list[np.ndarray]:
    """Each input's hidden states as transformers returns them, shape (n_layer + 1, tokens, d): h0 (the input
    of the first block), the output of each block, the last one after the final layer norm."""
    import torch

    model = _load(folder, classes, False, label)
    found = []
    with _quiet(), torch.inference_mode():
        for ids in inputs:
            states = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
            found.append(torch.stack(states)[:, 0].numpy())
    return found


def read_out(
    folder: Path,
    classes: tuple[str, str, str],
    final_norm: str,
    ids: tuple[int, ...],
    positions: list[int],
    every_layer: bool,
    label: str | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The hidden states at positions of one input as the output layer reads them, and that layer's own
    weights (None where it is the token table: tied). Shape (n_layer + 1, len(positions), d) with
    every_layer: h0 and each block's output through the final layer norm (final_norm: the base model's
    attribute holding it), the last as transformers gives it, which has that norm already; else (1,
    len(positions), d), the last alone. The base model runs (no logits computed here)."""
    import torch

    model = _load(folder, classes, True, label)
    with _quiet(), torch.inference_mode():
        states = _states(model, ids, positions, every_layer)
        if every_layer:  # the last has the final norm already
            norm = getattr(model.base_model, final_norm)
            states = [*(norm(h) for h in states[:-1]), states[-1]]
        found = torch.stack(states).numpy()
    return found, _own_table(model)


def _states(model: Any, ids: tuple[int, ...], positions: list[int], every_layer: bool) -> list[Any]:
    """The base model's hidden states at positions, h0 to the last (every_layer) or the last alone."""
    import torch

    at = torch.tensor(positions)
    out = model.base_model(torch.tensor([ids]), output_hidden_states=every_layer)
    return [h[0, at] for h in out.hidden_states] if every_layer else [out.last_hidden_state[0, at]]


def _own_table(model: Any) -> np.ndarray | None:
    """The output layer's weights, None where they are the token table (tied)."""
    return None if _tied(model) else model.get_output_embeddings().weight.detach().numpy()


def read_masked(
    folder: Path,
    classes: tuple[str, str, str],
    head: tuple[str, str, str, str, str],
    activation: str,
    eps: float,
    ids: tuple[int, ...],
    positions: list[int],
    every_layer: bool,
    label: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A masked language model's hidden states at positions of one input through its head up to the decoder:
    head names its dense layer's weight and bias, its layer norm's weight and bias and the decoder's bias in
    the language model's state dict; activation (a name transformers knows) and eps (the norm's) as the
    config gives them. Returns the states so read, shape (n_layer + 1, len(positions), d) with every_layer
    (each layer's as it is: these models have no final layer norm, the last is the last block's output),
    else (1, len(positions), d); the decoder's bias; and its own weights (None: the token table, tied). The
    head's arithmetic is gpt2emb's, from the checkpoint's tensors (the caller checked that it holds them)."""
    import torch

    with _quiet():
        from transformers.activations import ACT2FN

    model = _load(folder, classes, True, label)
    weight, bias, norm_weight, norm_bias, decoder_bias = (model.state_dict()[name] for name in head)
    with _quiet(), torch.inference_mode():
        states = torch.stack(_states(model, ids, positions, every_layer))
        x = ACT2FN[activation](torch.nn.functional.linear(states, weight, bias))
        x = torch.nn.functional.layer_norm(x, (x.shape[-1],), norm_weight, norm_bias, eps)
        found = x.numpy()
    return found, decoder_bias.detach().numpy(), _own_table(model)


def lm_gradients(
    folder: Path, classes: tuple[str, str, str], ids: tuple[int, ...], label: str | None = None
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """One forward and backward pass of the language-model loss on ids (labels = ids: the mean next-token
    cross-entropy), twice: on the tied model, and with the output layer given its own copy of wte, so that the
    gradient of each use of wte lands in its own matrix.

    Returns the loss and three gradients of wte's shape: by the input lookup, by the output layer, and the
    tied model's (which autograd makes the sum of both uses)."""
    import torch

    model = _load(folder, classes, True, label)
    if not _tied(model):
        raise BadModel("the loaded model's output layer does not reuse wte: it is not tied")
    wte, head = model.get_input_embeddings(), model.get_output_embeddings()
    x = torch.tensor([ids])
    with _quiet():
        loss = model(x, labels=x).loss
        loss.backward()
        tied = wte.weight.grad.numpy().copy()
        wte.weight.grad = None
        # untied: the same values, its own gradient
        head.weight = torch.nn.Parameter(wte.weight.detach().clone())
        model(x, labels=x).loss.backward()
    return float(loss.item()), wte.weight.grad.numpy(), head.weight.grad.numpy(), tied
