"""A tiny BERT whose answers are known, made by transformers' own BertConfig, BertForMaskedLM and
save_pretrained, so its files look like the Hub's.

Its tokenizer is a WordPiece trained here, uncased as bert-base-uncased's (BertNormalizer lowercasing,
BertPreTokenizer, "##" continuations, [CLS] text [SEP] around a text), its vocabulary laid out as BERT's:
[PAD] first, reserved [unusedN] rows, then [UNK] [CLS] [SEP] [MASK], the five being its only added tokens.
Planted rows as in tinymodel.py (king - man + woman = queen; cats and kitten near cat); the position table
has N_POSITIONS rows from row 0, each a sinusoid of its position; two token-type rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from tinymodel import FILLER, WORDS, save_model, sinusoids

D = 32
N_POSITIONS = 64
N_LAYER = 2
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LAYOUT = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _tokenizer(vocab: dict[str, int]) -> Tokenizer:
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens([AddedToken(s, special=True) for s in SPECIALS])
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return tok


def train_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=LAYOUT, show_progress=False)
    more = "play plays played sing , . ! ? 1 2 3 2024"
    tok.train_from_iterator([" ".join(WORDS * 3) for _ in range(60)] + [FILLER, more] * 20, trainer)
    # the trainer makes every one of LAYOUT an added token; BERT's tokenizer adds only the five specials
    return _tokenizer(tok.get_vocab())


@dataclass(repr=False)
class TinyBert:
    folder: Path
    tokenizer: Tokenizer
    wte: np.ndarray
    positions: np.ndarray
    types: np.ndarray

    def id(self, piece: str) -> int:
        """The id of a vocabulary entry: "king", "##ing"."""
        found = self.tokenizer.token_to_id(piece)
        assert found is not None, piece
        return int(found)

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.folder.iterdir() if p.is_file()}

    def model(self) -> Any:
        """The saved model, loaded back by transformers (the oracle of `input` and `context`)."""
        from transformers import BertForMaskedLM

        return BertForMaskedLM.from_pretrained(self.folder).eval()  # type: ignore[no-untyped-call]


def fill_embeddings(
    emb: Any, wte: np.ndarray, positions: np.ndarray, types: np.ndarray, rng: np.random.Generator
) -> None:
    """Copy the tables into a BERT-style embeddings module (RoBERTa's too), its layer norm's weight and bias
    drawn from rng."""
    import torch

    d: int = wte.shape[1]
    with torch.no_grad():
        emb.word_embeddings.weight.copy_(torch.from_numpy(wte))
        emb.position_embeddings.weight.copy_(torch.from_numpy(positions))
        emb.token_type_embeddings.weight.copy_(torch.from_numpy(types))
        emb.LayerNorm.weight.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, d).astype(np.float32)))
        emb.LayerNorm.bias.copy_(torch.from_numpy(rng.normal(0.0, 0.1, d).astype(np.float32)))


def build(folder: Path, base: bool = False) -> TinyBert:
    """The tiny BERT saved in folder: as BertForMaskedLM ("bert." keys), or with base as BertModel (none)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertModel

    tok = train_tokenizer()
    vocab = tok.get_vocab()
    assert tok.encode("playing", add_special_tokens=False).tokens == ["play", "##ing"]
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=D,
        num_hidden_layers=N_LAYER,
        num_attention_heads=2,
        intermediate_size=2 * D,
        max_position_embeddings=N_POSITIONS,
        type_vocab_size=2,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    lm = BertForMaskedLM(config).eval()  # type: ignore[no-untyped-call]
    rng = np.random.default_rng(77)
    wte = rng.normal(0.0, 0.1, (config.vocab_size, D)).astype(np.float32)
    basis = np.linalg.qr(rng.normal(size=(D, D)))[0].T
    r, m, f, c, g = basis[:5]
    for word, row in {
        "king": 2 * (r + m),
        "queen": 2 * (r + f),
        "man": 2 * m,
        "woman": 2 * f,
        "cat": 2 * c,
        "cats": 2 * c + 0.3 * basis[6],
        "kitten": 2 * c + 0.8 * basis[7],
        "dog": c + 1.5 * g,
    }.items():
        wte[vocab[word]] = row
    table = sinusoids(N_POSITIONS, D)
    types = rng.normal(0.0, 0.1, (2, D)).astype(np.float32)
    fill_embeddings(lm.bert.embeddings, wte, table, types, rng)
    model: Any = lm
    if base:
        model = BertModel(config).eval()  # type: ignore[no-untyped-call]
        model.load_state_dict(lm.bert.state_dict(), strict=False)  # BertModel adds a pooler of its own
    assert save_model(model, tok, folder)["model_type"] == "bert"
    return TinyBert(folder, tok, wte, table, types)
