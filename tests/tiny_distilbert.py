"""A tiny DistilBERT whose answers are known, made by transformers' own DistilBertConfig,
DistilBertForMaskedLM and save_pretrained, so its files look like the Hub's.

It is the tiny BERT of tiny_bert.py without its token-type rows: the same WordPiece tokenizer, and that
BERT's token table (planted rows: cats and kitten near cat, king - man + woman = queen), position table (a
sinusoid of each position, from row 0) and embedding layer norm copied in.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tiny_bert import N_LAYER, N_POSITIONS, D, TinyBert
from tiny_bert import build as build_bert

from tinymodel import save_model

__all__ = ["N_LAYER", "N_POSITIONS", "D", "TinyDistilBert", "build"]


@dataclass(repr=False)
class TinyDistilBert(TinyBert):
    def model(self) -> Any:
        """The saved model, loaded back by transformers (the oracle of `input` and `context`)."""
        from transformers import DistilBertForMaskedLM

        return DistilBertForMaskedLM.from_pretrained(self.folder).eval()  # type: ignore[no-untyped-call]


def build(folder: Path, base: bool = False) -> TinyDistilBert:
    """The tiny DistilBERT saved in folder: as DistilBertForMaskedLM ("distilbert." keys), or with base as
    DistilBertModel (none)."""
    import torch
    from transformers import DistilBertConfig, DistilBertForMaskedLM, DistilBertModel

    with tempfile.TemporaryDirectory() as scratch:
        bert = build_bert(Path(scratch))
        norm = bert.model().bert.embeddings.LayerNorm
    config = DistilBertConfig(
        vocab_size=bert.tokenizer.get_vocab_size(),
        dim=D,
        n_layers=N_LAYER,
        n_heads=2,
        hidden_dim=2 * D,
        max_position_embeddings=N_POSITIONS,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    lm = DistilBertForMaskedLM(config).eval()  # type: ignore[no-untyped-call]
    emb = lm.distilbert.embeddings
    with torch.no_grad():
        emb.word_embeddings.weight.copy_(torch.from_numpy(bert.wte))
        emb.position_embeddings.weight.copy_(torch.from_numpy(bert.positions))
        emb.LayerNorm.load_state_dict(norm.state_dict())
    model: Any = lm
    if base:
        model = DistilBertModel(config).eval()  # type: ignore[no-untyped-call]
        model.load_state_dict(lm.distilbert.state_dict())
    config_json = save_model(model, bert.tokenizer, folder)
    assert config_json["model_type"] == "distilbert" and "layer_norm_eps" not in config_json
    return TinyDistilBert(folder, bert.tokenizer, bert.wte, bert.positions, np.zeros((0, D), np.float32))
