"""A tiny GPT-Neo whose answers are known, made by transformers' own GPTNeoConfig, GPTNeoForCausalLM and
save_pretrained, so its files look like the Hub's (tensor names under transformer., no lm_head: tied).

Its tokenizer is the tiny GPT-2's byte-level BPE (GPT-Neo uses GPT-2's vocabulary). Planted rows as in
tinymodel.py (cats and kitten near cat); the position table has N_POSITIONS rows from row 0 (GPT-Neo's 2048
at a tiny size), row p a sinusoid of p.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinymodel import Saved, planted_rows, save_model, sinusoids, train_tokenizer

D = 32
N_POSITIONS = 64
N_LAYER = 2


@dataclass(repr=False)
class TinyGPTNeo(Saved):
    model_class = "GPTNeoForCausalLM"
    wte: np.ndarray
    wpe: np.ndarray


def build(folder: Path) -> TinyGPTNeo:
    import torch
    from transformers import GPTNeoConfig, GPTNeoForCausalLM

    tok = train_tokenizer()
    vocab = tok.get_vocab()
    eos = vocab["<|endoftext|>"]
    config = GPTNeoConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=D,
        num_layers=N_LAYER,
        num_heads=2,
        attention_types=[[["global", "local"], N_LAYER // 2]],
        window_size=16,
        max_position_embeddings=N_POSITIONS,
        bos_token_id=eos,
        eos_token_id=eos,
    )
    torch.manual_seed(0)
    model = GPTNeoForCausalLM(config).eval()  # type: ignore[no-untyped-call]
    rng = np.random.default_rng(7)
    wte = planted_rows(vocab, "Ġ", rng)
    wpe = sinusoids(N_POSITIONS)
    with torch.no_grad():
        model.transformer.wte.weight.copy_(torch.from_numpy(wte))
        model.transformer.wpe.weight.copy_(torch.from_numpy(wpe))
    save_model(model, tok, folder)
    return TinyGPTNeo(folder, tok, wte, wpe)
