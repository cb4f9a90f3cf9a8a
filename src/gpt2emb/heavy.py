"""Everything that needs torch or transformers, imported only when a command really needs them.

Functions here take plain inputs (paths, token ids, the names of a family's classes) and return numpy arrays
or plain values; they reach the token table and the output layer through transformers' generic accessors
(get_input_embeddings, get_output_embeddings), whatever the family.
"""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb.errors import BadModel

UNSAFE = "could not be read safely as a weights-only checkpoint"


def load_bin_embeddings(path: Path, wanted: dict[str, tuple[str, ...]], name: str) -> dict[str, np.ndarray]:
    """The embedding tables of a pytorch_model.bin (wanted: the entry's name of each -> its names in a
    checkpoint), read with torch's weights-only loader (never plain pickle)."""
    import torch

    try:
        with warnings.catch_warnings():  # torch's about a pickle's protocol: the error below says it all
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as e:  # torch raises many types for a bad or unsafe pickle
        raise BadModel(f"{path} {UNSAFE} ({type(e).__name__})") from None
    if not isinstance(state, dict):
        raise BadModel(f"{path} is not a state dict")
    found = {}
    for table, keys in wanted.items():
        key = next((k for k in keys if k in state), None)
        if key is None:
            raise BadModel(
                f"{name}'s checkpoint has no {keys[0]} tensor: it is not a checkpoint of its model type"
            )
        found[table] = state[key].detach().to(torch.float32).numpy()
    return found


def _classes(names: tuple[str, str, str]) -> tuple[Any, Any, Any]:
    """A family's config, base model and language model classes, by their names in transformers."""
    import transformers
    from transformers.utils import logging

    # its load reports (buffers it drops, generation settings) are not about embeddings, and its bar for
    # turning loaded tensors into parameters would follow huggingface_hub's download bar (left as it is)
    logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    logging.set_tqdm_hook(lambda factory, args, kwargs: factory(*args, **{**kwargs, "disable": True}))
    config, base, lm = (getattr(transformers, name) for name in names)
    return config, base, lm


def _load(folder: Path, classes: tuple[str, str, str], language_model: bool) -> Any:
    """The whole model from a folder on this machine (nothing fetched here), in float32, in eval mode."""
    import torch

    _, base, lm = _classes(classes)
    try:
        with warnings.catch_warnings():  # torch's about a pickle's protocol: the error below says it all
            warnings.simplefilter("ignore")
            model = (lm if language_model else base).from_pretrained(folder, dtype=torch.float32)
    except (
        pickle.UnpicklingError
    ):  # the weights-only loader refuses a pickle it cannot read or that runs code
        raise BadModel(f"{folder / 'pytorch_model.bin'} {UNSAFE} (UnpicklingError)") from None
    except Exception as e:  # transformers and torch raise many types for weights they cannot load
        first = str(e).strip().split("\n")[0][:120]
        raise BadModel(
            f"transformers cannot load the model in {folder} ({type(e).__name__}: {first}); "
            "save the model again"
        ) from None
    return model.eval()


def _tied(model: Any) -> bool:
    return bool(model.get_output_embeddings().weight is model.get_input_embeddings().weight)


def _check_activation(config: dict[str, Any]) -> None:
    """An activation function transformers knows, named before it is asked to build the model."""
    from transformers.activations import ACT2FN

    for key in ("activation_function", "hidden_act", "activation"):
        if key in config and config[key] not in ACT2FN:
            raise BadModel(
                f"config.json says {key} = {str(config[key])[:40]!r}, which transformers does not know (as "
                "gelu_new, gelu, relu, silu); the model folder looks damaged: save it again"
            )


def meta_model_ties(config: dict[str, Any], classes: tuple[str, str, str]) -> tuple[bool, int]:
    """The language model built on the meta device (no memory, no weights): is its output layer wte?"""
    import torch

    config_class, _, lm = _classes(classes)
    _check_activation(config)
    try:
        with torch.device("meta"):
            model = lm(config_class(**config))
    except Exception as e:  # transformers' own errors for a config it cannot build (families.check_config
        # refuses the ones it knows first, naming the key)
        raise BadModel(
            f"transformers cannot build {classes[2]} from this config.json ({type(e).__name__}: "
            f"{str(e)[:120]}); the model folder looks damaged: save it again"
        ) from None
    n_params = sum(p.numel() for p in model.parameters())
    return _tied(model), int(n_params)


def loaded_model_ties(folder: Path, classes: tuple[str, str, str]) -> tuple[bool, int, int]:
    """The lab's own proof on the real model: do the output layer and wte share one storage? (data_ptr)"""
    model = _load(folder, classes, language_model=True)
    a = model.get_output_embeddings().weight.data_ptr()
    b = model.get_input_embeddings().weight.data_ptr()
    return a == b, int(a), int(b)


def hidden_states(
    folder: Path, classes: tuple[str, str, str], inputs: list[tuple[int, ...]]
) -> list[np.ndarray]:
    """Each input's hidden states as transformers returns them, shape (n_layer + 1, tokens, d): h0 (the input
    of the first block), the output of each block, the last one after the final layer norm."""
    import torch

    model = _load(folder, classes, language_model=False)
    found = []
    with torch.inference_mode():
        for ids in inputs:
            states = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
            found.append(torch.stack(states)[:, 0].numpy())
    return found


def lm_gradients(
    folder: Path, classes: tuple[str, str, str], ids: tuple[int, ...]
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """One forward and backward pass of the language-model loss on ids (labels = ids: the mean next-token
    cross-entropy), twice: on the tied model, and with the output layer given its own copy of wte, so that the
    gradient of each use of wte lands in its own matrix.

    Returns the loss and three gradients of wte's shape: by the input lookup, by the output layer, and the
    tied model's (which autograd makes the sum of both uses)."""
    import torch

    model = _load(folder, classes, language_model=True)
    if not _tied(model):
        raise BadModel("the loaded model's output layer does not reuse wte: it is not tied")
    wte, head = model.get_input_embeddings(), model.get_output_embeddings()
    x = torch.tensor([ids])
    loss = model(x, labels=x).loss
    loss.backward()
    tied = wte.weight.grad.numpy().copy()
    wte.weight.grad = None
    head.weight = torch.nn.Parameter(wte.weight.detach().clone())  # untied: the same values, its own gradient
    model(x, labels=x).loss.backward()
    return float(loss.item()), wte.weight.grad.numpy(), head.weight.grad.numpy(), tied
