"""Static word tables (word2vec, GloVe, fastText's .vec; read by store/static.py): a vector per key, as the
file writes it, and nothing around it: no tokenizer, no position table, no layers, no output layer."""

from __future__ import annotations

from typing import Any

from gpt2emb.families import Family, Spelling


class Keys(Spelling):
    """A static file's words are its keys, as written: `king` is the key "king" (no leading space, case as
    typed), never split into pieces; a key is shown as it is."""

    name = "keys"

    def fits(self, tokenizer: dict[str, Any]) -> bool:
        return False  # no tokenizer is written this way: a static file has none

    def running(self, word: str) -> str:
        return word

    def whole(self, text: str) -> str | None:
        return text

    def text(self, piece: str) -> str:
        return piece

    def raw(self, piece: str) -> bytes | None:
        return None  # plain text, not bytes spelled as characters


FAMILY = Family(
    name="static",
    title="word2vec or GloVe",
    model_types=(),  # no config.json names it: a file is told by its content
    d_model=(),
    n_positions=(),
    n_layer=(),
    n_head=(),
    token_table=(),
    position_table=(),
    words=Keys(),
    tied_default=False,
    static=True,  # a key per row, nothing else (OpenedEntry.static; the side by side's `sides`)
    no_position_table="a word has one vector whatever its place in a text",
)
