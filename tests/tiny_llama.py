"""A tiny Llama whose answers are known, made by transformers' own LlamaConfig, LlamaForCausalLM and
save_pretrained, so its files look like the Hub's (the same layout as a tiny Mistral or Qwen2, by `kind`).

Its tokenizer is SentencePiece-like, as Llama 2's: a BPE trained here with a Metaspace pre-tokenizer
("▁king") and byte fallback pieces <0x00>..<0xFF> after the specials <unk> <s> </s>, so a character it lacks
(é, an emoji) becomes one piece per UTF-8 byte. A Qwen2, or a Llama built byte_level (as SmolLM), gets a
byte-level BPE with Qwen2's normalizer and splitting pattern. Planted rows as in tinymodel.py (cats and
kitten near cat). It has no position table (rotary positions). Untied, its output layer is the token table
plus, on every row, noise orthogonal to that row and as long as it: every output row meets its own wte row
at a cosine of exactly 1/sqrt(2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from tinymodel import CORPUS, WORDS, planted_rows, save_model, train_byte_level

D = 32
N_LAYER = 2
MAX_POSITIONS = 128  # the config's max_position_embeddings: a context length, not a table
SPECIALS = ["<unk>", "<s>", "</s>"]
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)


def sentencepiece_tokenizer() -> Tokenizer:
    """A BPE trained with Metaspace, then rebuilt as Llama's: specials, then the 256 byte pieces, then the
    trained pieces, with byte fallback."""
    trained = Tokenizer(models.BPE())
    trained.pre_tokenizer = pre_tokenizers.Metaspace()
    trained.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300, show_progress=False))
    model = json.loads(trained.to_str())["model"]
    vocab = {s: i for i, s in enumerate(SPECIALS)}
    vocab.update({f"<0x{b:02X}>": len(SPECIALS) + b for b in range(256)})
    for piece, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1]):
        vocab[piece] = len(vocab)
    merges = [tuple(m) for m in model["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace()])
    tok.add_special_tokens(SPECIALS)
    return tok


def qwen_tokenizer() -> Tokenizer:
    """A byte-level BPE shaped as Qwen2's tokenizer.json: an NFC normalizer, its own Split pattern, then
    ByteLevel without GPT-2's pattern."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    return train_byte_level(tok, ("<|endoftext|>",), vocab_size=400)


@dataclass(repr=False)
class TinyLlama:
    folder: Path
    tokenizer: Tokenizer
    wte: np.ndarray
    output: np.ndarray | None  # the output layer's own rows; None when tied
    kind: str
    prefix: str  # how the vocabulary writes a word-initial piece: "▁" (SentencePiece) or "Ġ" (byte-level)

    def id(self, word: str) -> int:
        """The id of the word as inside running text ("▁king")."""
        vocab: dict[str, int] = self.tokenizer.get_vocab()
        return vocab[self.prefix + word]

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.folder.iterdir() if p.is_file()}


def token_table(vocab: dict[str, int], prefix: str, rng: np.random.Generator) -> np.ndarray:
    return planted_rows(vocab, prefix, rng)


_CLASSES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("MistralConfig", "MistralForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
}


def build(folder: Path, tied: bool = False, kind: str = "llama", byte_level: bool | None = None) -> TinyLlama:
    import torch
    import transformers

    byte_level = kind == "qwen2" if byte_level is None else byte_level
    tok = qwen_tokenizer() if byte_level else sentencepiece_tokenizer()
    prefix = "Ġ" if byte_level else "▁"
    vocab = tok.get_vocab()
    for w in WORDS:
        assert prefix + w in vocab, f"the tiny tokenizer did not learn {w!r} as one piece"
    config_class, lm_class = (getattr(transformers, name) for name in _CLASSES[kind])
    config = config_class(
        vocab_size=tok.get_vocab_size(),
        hidden_size=D,
        intermediate_size=2 * D,
        num_hidden_layers=N_LAYER,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=tied,
        bos_token_id=vocab.get("<s>"),
        eos_token_id=vocab.get("</s>", vocab.get("<|endoftext|>")),
    )
    torch.manual_seed(0)
    model = lm_class(config).eval()
    rng = np.random.default_rng(7)
    wte = token_table(vocab, prefix, rng)
    output = None
    with torch.no_grad():
        model.get_input_embeddings().weight.copy_(torch.from_numpy(wte))
        if not tied:
            rows = wte.astype(np.float64)
            noise = rng.normal(size=rows.shape)
            along = (noise * rows).sum(axis=1) / (rows * rows).sum(axis=1)  # noise's share of its row
            noise -= along[:, None] * rows
            noise *= (np.linalg.norm(rows, axis=1) / np.linalg.norm(noise, axis=1))[:, None]
            output = (rows + noise).astype(np.float32)
            model.get_output_embeddings().weight.copy_(torch.from_numpy(output))
    saved = save_model(model, tok, folder)
    assert saved["model_type"] == kind and saved["tie_word_embeddings"] is tied
    return TinyLlama(folder, tok, wte, output, kind, prefix)


def model(folder: Path, kind: str = "llama") -> Any:
    """The saved model loaded back by transformers (the oracle of `context`)."""
    import transformers

    return getattr(transformers, _CLASSES[kind][1]).from_pretrained(folder).eval()
