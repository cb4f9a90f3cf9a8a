"""A tiny GPT-Neo whose answers are known, made by transformers' own GPTNeoConfig, GPTNeoForCausalLM and
save_pretrained, so its files look like the Hub's (tensor names under transformer., no lm_head: tied).

Its tokenizer is the tiny GPT-2's byte-level BPE (GPT-Neo uses GPT-2's vocabulary). Planted rows as in
tinymodel.py (cats and kitten near cat); the position table has N_POSITIONS rows from row 0 (GPT-Neo's 2048
at a tiny size), row p a sinusoid of p.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from tinymodel import train_tokenizer

D = 32
N_POSITIONS = 64
N_LAYER = 2


@dataclass(repr=False)
class TinyGPTNeo:
    folder: Path
    tokenizer: Tokenizer
    wte: np.ndarray
    wpe: np.ndarray

    def id(self, word: str) -> int:
        """The id of ' word' (the leading-space rule)."""
        vocab: dict[str, int] = self.tokenizer.get_vocab()
        return vocab["Ġ" + word]

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.folder.iterdir() if p.is_file()}

    def model(self) -> Any:
        """The saved model, loaded back by transformers (the oracle of `input`)."""
        from transformers import GPTNeoForCausalLM

        return GPTNeoForCausalLM.from_pretrained(self.folder).eval()  # type: ignore[no-untyped-call]


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
    wte = rng.normal(0.0, 0.1, (config.vocab_size, D)).astype(np.float32)
    basis = np.linalg.qr(rng.normal(size=(D, D)))[0].T
    c = basis[0]
    for word, row in {
        "cat": 2 * c,
        "cats": 2 * c + 0.3 * basis[6],
        "kitten": 2 * c + 0.8 * basis[7],
        "dog": c + 1.5 * basis[1],
    }.items():
        wte[vocab["Ġ" + word]] = row
    pos = np.arange(N_POSITIONS)[:, None]
    freqs = 1.0 / (100.0 ** (2 * np.arange(D // 2) / D))[None, :]
    wpe = np.zeros((N_POSITIONS, D), dtype=np.float32)
    wpe[:, 0::2], wpe[:, 1::2] = 0.5 * np.cos(pos * freqs), 0.5 * np.sin(pos * freqs)
    with torch.no_grad():
        model.transformer.wte.weight.copy_(torch.from_numpy(wte))
        model.transformer.wpe.weight.copy_(torch.from_numpy(wpe))
    model.save_pretrained(folder)
    tok.save(str(folder / "tokenizer.json"))
    return TinyGPTNeo(folder, tok, wte, wpe)
