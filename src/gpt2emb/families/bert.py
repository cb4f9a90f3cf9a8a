"""BERT: WordPiece words ("king", and "##ing" continuing a word); 512 learned positions from row 0; two
token-type rows (type 0 for a single text) and a layer norm applied to the sum before the first block; a
masked language model whose decoder is tied to the token table. The Hub's google-bert checkpoints keep
TensorFlow's names for that layer norm (gamma, beta); a BertModel saves its tensors without "bert."."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from gpt2emb.families import Family, Head, Spelling

# The [CLS] [SEP] [PAD] [UNK] [MASK] of the vocabulary, and its reserved [unused0]... rows: shown as they are
_SPECIAL_PIECE = re.compile(r"\[[A-Za-z]+[0-9]*\]")
# WordPiece's tokenizer leaves a word of lowercase ASCII letters (or of digits) as it is, cased vocabulary or
# not, and takes a whole word its vocabulary holds as one piece (the longest match from the word's start),
# up to BERT's max_input_chars_per_word (100; a longer word becomes [UNK])
_ONE_PIECE = re.compile(r"[a-z]{1,100}|[0-9]{1,100}")
CONTINUES = "##"
# a word start for --exact (WordPiece.exact): a letter that BERT's normalizer leaves as it is (no case, no
# accent, not Chinese) and its pre-tokenizer keeps in a word (not punctuation); U+A66E, CYRILLIC LETTER
# MULTIOCULAR O
_START = "\ua66e"


class WordPiece(Spelling):
    """WordPiece's spelling: a word-initial piece is the word itself ("king"), a piece that continues a word
    starts with "##" ("##ing"). As text, a word-initial piece gets the leading space GPT-2's pieces have
    (" king") and a continuation loses its "##" ("ing"), so pieces compare by text across families."""

    name = "WordPiece"

    def running(self, word: str) -> str:
        return word  # the pre-tokenizer splits on white space: no space marks a word's start

    def exact(self, tokenizer: Path) -> Callable[[str], tuple[int, ...] | None] | None:
        # the first piece of a text always starts a word: put a word start of its own before the text (a
        # letter no piece holds, given a piece of its own), and the text's pieces are those that continue it:
        # "ing" is "##ing". Where the tokenizer starts a word at the text's first character (punctuation), or
        # has no continuation pieces for it ([UNK]), the vocabulary cannot spell it so
        from tokenizers import Tokenizer

        parsed = json.loads(tokenizer.read_text(encoding="utf-8"))
        model = parsed.get("model") or {}
        vocab: dict[str, int] = model.get("vocab") or {}
        if model.get("type") != "WordPiece" or not vocab or any(_START in piece for piece in vocab):
            return None
        start = 1 + max([*vocab.values(), *(t["id"] for t in parsed.get("added_tokens") or [])])
        longest = int(model.get("max_input_chars_per_word", 100)) + 1  # the word and its start
        model = {**model, "vocab": {**vocab, _START: start}, "max_input_chars_per_word": longest}
        continuing = Tokenizer.from_str(json.dumps({**parsed, "model": model}))

        def encode(text: str) -> tuple[int, ...] | None:
            if text[:1].isspace():  # typed with a word start of its own
                return tuple(continuing.encode(text, add_special_tokens=False).ids)
            found = continuing.encode(_START + text, add_special_tokens=False)
            ids, words = found.ids, found.word_ids
            if ids[:1] != [start] or (len(ids) > 1 and words[1] != words[0]):
                return None
            return tuple(ids[1:])

        return encode

    def whole(self, text: str) -> str | None:
        return text if _ONE_PIECE.fullmatch(text) else None

    def text(self, piece: str) -> str:
        if _SPECIAL_PIECE.fullmatch(piece):
            return piece
        if piece.startswith(CONTINUES) and len(piece) > len(CONTINUES):
            return piece[len(CONTINUES) :]
        return " " + piece

    def raw(self, piece: str) -> bytes | None:
        return self.text(piece).encode("utf-8")  # WordPiece splits characters, never their bytes


FAMILY = Family(
    name="bert",
    title="BERT",
    model_types=("bert",),
    d_model=("hidden_size",),
    n_positions=("max_position_embeddings",),
    n_layer=("num_hidden_layers",),
    n_head=("num_attention_heads",),
    token_table=("bert.embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight"),
    position_table=("bert.embeddings.position_embeddings.weight", "embeddings.position_embeddings.weight"),
    type_table=("bert.embeddings.token_type_embeddings.weight", "embeddings.token_type_embeddings.weight"),
    norm=(
        ("bert.embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.bias"),
        ("embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"),
    ),
    words=WordPiece(),
    classes=("BertConfig", "BertModel", "BertForMaskedLM"),
    lm_names=("cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight"),
    causal=False,
    specials=re.compile(r"\[(CLS|SEP|PAD|UNK|MASK)\]"),
    # BertLMPredictionHead: its transform's dense, config.hidden_act and LayerNorm, its decoder's bias tied to
    # cls.predictions.bias
    head=Head(
        "[MASK]",
        "cls.predictions.transform.dense",
        "cls.predictions.transform.LayerNorm",
        ("cls.predictions.bias", "cls.predictions.decoder.bias"),
        activation_key="hidden_act",
        eps_key="layer_norm_eps",
    ),
)
