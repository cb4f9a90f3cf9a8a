"""Cache entries of small vocabularies laid out by hand, for the tests of tokens.py and queries.py.

Each entry holds what the cache builds (tokenizer.json, pieces.txt, and added.json where said), so a Vocab
opens it as it opens a real one. Each answer the tests expect is worked out by hand from the vocabulary laid
out here (which pieces, which merges), never read back from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, processors

from gpt2emb import piece_lines
from gpt2emb.families.bert import WordPiece
from gpt2emb.tokens import Vocab


def make_vocab(folder: Path, tokenizer_json: str) -> Vocab:
    """An entry of a tokenizer.json's vocabulary, with one row more than the vocabulary has entries."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    (folder / "pieces.txt").write_bytes(piece_lines.written(vocab))
    return Vocab(folder, len(vocab) + 1)


# ---------------------------------------------------------------- a byte-level vocabulary

# The byte alphabet in byte order (GPT-2's mapping) follows one piece of id 0 that is not a single byte
# (" a"), and the pieces the merges below make come after it. These answers follow from the merges alone.
#   " abcdefgh" is " a" b c d e f g h (8 pieces), and " abcdefghi" is 9 pieces.
#   " xy" is " " + "xy", because no merge puts x after a space.
#   " king" is one piece, and so is "é" (C3 A9).
#   " \xc3" (a space and half of é) is a piece that starts a word but holds no whole character.
MERGES = [("Ġ", "a"), ("x", "y"), ("Ġ", "k"), ("Ġk", "i"), ("Ġki", "n"), ("Ġkin", "g")]
MERGES += [("Ã", "©"), ("Ġ", "Ã")]


def gpt2_byte_alphabet() -> list[str]:
    """GPT-2's character for each byte, in byte order (its encoder.py's bytes_to_unicode).

    The printable Latin-1 bytes stand for themselves, and the others for 256, 257, ... in order.
    """
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = iter(range(256, 512))
    return [chr(b) if b in kept else chr(next(moved)) for b in range(256)]


# An entry stored as plain text, added as a token. ☃ is no character of the byte alphabet.
PLAIN = "<☃>"
PIECES = ["Ġa", *gpt2_byte_alphabet(), *(a + b for a, b in MERGES[1:]), PLAIN]


def byte_level_entry(folder: Path, n_rows: int | None = None) -> tuple[Vocab, dict[str, int]]:
    """An entry of the vocabulary above, and the vocabulary.

    The entry holds tokenizer.json and pieces.txt, nothing else, which is tokens.py's oldest layout. It has
    n_rows rows, and one per piece by default.
    """
    vocab = {p: i for i, p in enumerate(PIECES)}
    assert len(vocab) == len(PIECES) == 265
    tok = Tokenizer(models.BPE(vocab, MERGES))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.add_tokens([AddedToken(PLAIN, special=False)])
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    (folder / "pieces.txt").write_bytes(piece_lines.written(vocab))
    return Vocab(folder, len(vocab) if n_rows is None else n_rows), vocab


# ---------------------------------------------------------------- a WordPiece vocabulary

WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "king", "play", "##ing", "##s"]


def wordpiece_entry(folder: Path) -> Vocab:
    """A BERT-style entry as the cache builds one (tokenizer.json, pieces.txt, added.json).

    Its tokenizer is an uncased WordPiece that puts [CLS] and [SEP] around a text, and its four specials are
    its only added tokens.
    """
    vocab = {p: i for i, p in enumerate(WORDPIECE)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens([AddedToken(s, special=True) for s in WORDPIECE[:4]])
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    (folder / "pieces.txt").write_bytes(piece_lines.written(vocab))
    added = [{"content": s, "id": vocab[s], "special": True} for s in WORDPIECE[:4]]
    (folder / "added.json").write_text(json.dumps(added), encoding="utf-8")
    return Vocab(folder, len(vocab), words=WordPiece())
