"""A tiny RoBERTa whose answers are known, made by transformers' own RobertaConfig, RobertaForMaskedLM and
save_pretrained, so its files look like the Hub's.

Its tokenizer is a byte-level BPE trained here on the tiny GPT-2's corpus, with RoBERTa's special tokens
(<s> <pad> </s> <unk> first, <mask> last), so the two share pieces under other ids. Planted rows as in
tinymodel.py (cats and kitten near cat); the position table has N_POSITIONS + 2 rows: row 1 (pad_token_id)
is the padding row of zeros, position p is row p + 2 and its row is a sinusoid of p.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, processors

from tiny_bert import fill_embeddings

import tinymodel
from tinymodel import Saved, save_model

D = 32
N_POSITIONS = 64  # usable positions: the table has 66 rows
N_LAYER = 2
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")


def train_tokenizer() -> Tokenizer:
    tok = tinymodel.train_tokenizer(SPECIALS, vocab_size=400)
    tok.add_special_tokens(["<mask>"])
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return tok


@dataclass(repr=False)
class TinyRoberta(Saved):
    model_class = "RobertaForMaskedLM"
    wte: np.ndarray
    positions: np.ndarray  # the whole table, N_POSITIONS + 2 rows


def build(folder: Path) -> TinyRoberta:
    import torch
    from transformers import RobertaConfig, RobertaForMaskedLM

    tok = train_tokenizer()
    vocab = tok.get_vocab()
    config = RobertaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=D,
        num_hidden_layers=N_LAYER,
        num_attention_heads=2,
        intermediate_size=2 * D,
        max_position_embeddings=N_POSITIONS + 2,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        layer_norm_eps=1e-5,
    )
    torch.manual_seed(0)
    model = RobertaForMaskedLM(config).eval()  # type: ignore[no-untyped-call]
    rng = np.random.default_rng(99)
    wte = tinymodel.planted_rows(vocab, "Ġ", rng)
    table = rng.normal(0.0, 0.1, (N_POSITIONS + 2, D)).astype(np.float32)
    table[1] = 0.0  # the padding row
    table[2:] = tinymodel.sinusoids(N_POSITIONS)
    types = rng.normal(0.0, 0.1, (1, D)).astype(np.float32)
    fill_embeddings(model.roberta.embeddings, wte, table, types, rng)
    assert save_model(model, tok, folder)["model_type"] == "roberta"
    return TinyRoberta(folder, tok, wte, table)
