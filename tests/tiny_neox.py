"""A tiny GPT-NeoX (Pythia's architecture) whose answers are known, made by transformers' own GPTNeoXConfig,
GPTNeoXForCausalLM and save_pretrained.

Its tokenizer is the tiny GPT-2's byte-level BPE (tinymodel.py), with <|endoftext|> as Pythia's; its token
table is planted as tiny_llama.py's (cats and kitten near cat). No position table (rotary positions), and an
output layer of its own, embed_out, equal to the token table embed_in except on every fourth row (ids 0, 4,
8, ...), where it is the row negated: its mean cosine with the matching row of embed_in is exactly
1 - 2 * negated / vocab.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tiny_llama import N_LAYER, D, token_table

from tinymodel import Saved, save_model, train_tokenizer


@dataclass(repr=False)
class TinyNeox(Saved):
    model_class = "GPTNeoXForCausalLM"
    wte: np.ndarray
    output: np.ndarray
    negated: int  # rows of embed_out that are their embed_in row negated


def build(folder: Path) -> TinyNeox:
    import torch
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    tok = train_tokenizer()
    vocab = tok.get_vocab()
    config = GPTNeoXConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=D,
        intermediate_size=4 * D,
        num_hidden_layers=N_LAYER,
        num_attention_heads=2,
        max_position_embeddings=128,
        tie_word_embeddings=False,
        bos_token_id=vocab["<|endoftext|>"],
        eos_token_id=vocab["<|endoftext|>"],
    )
    torch.manual_seed(0)
    model = GPTNeoXForCausalLM(config).eval()  # type: ignore[no-untyped-call]
    wte = token_table(vocab, "Ġ", np.random.default_rng(11))
    output = wte.copy()
    output[::4] *= -1
    with torch.no_grad():
        model.get_input_embeddings().weight.copy_(torch.from_numpy(wte))
        model.get_output_embeddings().weight.copy_(torch.from_numpy(output))
    assert save_model(model, tok, folder)["model_type"] == "gpt_neox"
    return TinyNeox(folder, tok, wte, output, len(range(0, len(wte), 4)))
