"""BERT: WordPiece words ("king", and "##ing" continuing a word); 512 learned positions from row 0; two
token-type rows (type 0 for a single text) and a layer norm applied to the sum before the first block; a
masked language model whose decoder is tied to the token table. The Hub's google-bert checkpoints keep
TensorFlow's names for that layer norm (gamma, beta); a BertModel saves its tensors without "bert."."""

import re

from gpt2emb.families import Family, Words

# The [CLS] [SEP] [PAD] [UNK] [MASK] of the vocabulary, and its reserved [unused0]... rows: shown as they are
_SPECIAL_PIECE = re.compile(r"\[[A-Za-z]+[0-9]*\]")
# WordPiece's tokenizer leaves a word of lowercase ASCII letters (or of digits) as it is, cased vocabulary or
# not, and takes a whole word its vocabulary holds as one piece (the longest match from the word's start),
# up to BERT's max_input_chars_per_word (100; a longer word becomes [UNK])
_ONE_PIECE = re.compile(r"[a-z]{1,100}|[0-9]{1,100}")
CONTINUES = "##"


class WordPiece(Words):
    """WordPiece's spelling: a word-initial piece is the word itself ("king"), a piece that continues a word
    starts with "##" ("##ing"). As text, a word-initial piece gets the leading space GPT-2's pieces have
    (" king") and a continuation loses its "##" ("ing"), so pieces compare by text across families."""

    name = "WordPiece"

    def running(self, word: str) -> str:
        return word  # the pre-tokenizer splits on white space: no space marks a word's start

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
        ("bert.embeddings.LayerNorm.gamma", "bert.embeddings.LayerNorm.beta"),
        ("embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"),
        ("embeddings.LayerNorm.gamma", "embeddings.LayerNorm.beta"),
    ),
    words=WordPiece(),
    classes=("BertConfig", "BertModel", "BertForMaskedLM"),
    lm_names=("cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight"),
    causal=False,
    specials=re.compile(r"\[(CLS|SEP|PAD|UNK|MASK)\]"),
)
