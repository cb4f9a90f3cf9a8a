"""Everything that needs torch or transformers, imported only when a command really needs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpt2emb.errors import BadModel


def load_bin_embeddings(
    path: Path, wte_keys: tuple[str, ...], wpe_keys: tuple[str, ...], name: str
) -> tuple[np.ndarray, np.ndarray]:
    """wte and wpe of a pytorch_model.bin, read with torch's weights-only loader (never plain pickle)."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as e:  # torch raises many types for a bad or unsafe pickle
        raise BadModel(
            f"{path} could not be read safely as a weights-only checkpoint ({type(e).__name__})"
        ) from None
    if not isinstance(state, dict):
        raise BadModel(f"{path} is not a state dict")
    found = []
    for keys in (wte_keys, wpe_keys):
        key = next((k for k in keys if k in state), None)
        if key is None:
            raise BadModel(f"{name}'s checkpoint has no {keys[0]} tensor; it is not a GPT-2 checkpoint")
        found.append(state[key].detach().to(torch.float32).numpy())
    return found[0], found[1]


def meta_model_ties(config: dict[str, Any]) -> tuple[bool, int]:
    """GPT2LMHeadModel built on the meta device (no memory, no weights): is lm_head.weight wte.weight?"""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.utils import logging

    # its config warnings are about text generation, not embeddings
    logging.set_verbosity_error()  # type: ignore[no-untyped-call]

    with torch.device("meta"):
        model = GPT2LMHeadModel(GPT2Config(**config))
    n_params = sum(p.numel() for p in model.parameters())
    return model.lm_head.weight is model.transformer.wte.weight, int(n_params)


def loaded_model_ties(source: str, revision: str | None = None) -> tuple[bool, int, int]:
    """The lab's own proof on the real model: do lm_head and wte share one storage? (data_ptr equality)"""
    from transformers import GPT2LMHeadModel
    from transformers.utils import logging

    logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    model = GPT2LMHeadModel.from_pretrained(source, revision=revision or "main")
    a, b = model.lm_head.weight.data_ptr(), model.transformer.wte.weight.data_ptr()
    return a == b, int(a), int(b)
