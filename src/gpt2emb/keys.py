"""Words <-> row ids of a static word table (word2vec, GloVe): a word is a key, as typed.

`king` is the key "king": no leading space, case as typed, nothing split or pooled; `id:N` is the N-th key in
file order, from 0. A word the table lacks is refused (exit 2) naming the nearest keys, and its lowercase
where that is a key (GloVe's keys are lowercase). Keys is a tokens.Vocab, so every core that takes an
Opened takes a static table as it is.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from gpt2emb.choices import Pool
from gpt2emb.errors import UsageError
from gpt2emb.families import Spelling
from gpt2emb.queries import Query, check_word
from gpt2emb.quoting import quote
from gpt2emb.tokens import Vocab

NEAREST = 5  # keys a refusal names


class Keys(Vocab):
    """The keys of a static table's cache entry (its pieces.txt, a key a line in file order)."""

    def __init__(self, entry: Path, n_rows: int, words: Spelling, name: str) -> None:
        super().__init__(entry, n_rows, words)
        self.name = name  # the file, as messages name it

    def tokenize(self, text: str) -> tuple[int, ...]:
        """A text's row: the key it is, whole (no key: no rows)."""
        found = self.id_of(text)
        return () if found is None else (found,)

    def query(self, word: str, exact: bool, pool: Pool) -> Query:
        """A word's row: the key it is, or the key id:N names; else a UsageError naming the nearest keys."""
        word = word.strip()  # as check_word reads it
        row = check_word(word, False, static=True)
        if row is not None:
            if row >= self.n_rows:
                raise UsageError(
                    f"id:{row} does not exist: {self.name} holds {self.n_rows:,} keys, id:0 to "
                    f"id:{self.n_rows - 1} in file order"
                )
            return Query(word, (row,), pool)
        found = self.id_of(word)
        if found is None:
            raise UsageError(self.missing(word))
        return Query(word, (found,), pool)

    def missing(self, word: str) -> str:
        """Why a word has no row, and what is near it."""
        said = f"{quote(word, 60)} is not a key of {self.name} (a static word table: a word is a key, "
        said += "as typed"
        said += ", nothing split)" if any(ch.isspace() for ch in word) else ")"
        lower = word.lower()
        if lower != word and self.id_of(lower) is not None:
            said += f"; its lowercase, {lower}, is one (a table's keys may all be lowercase, as GloVe's are)"
        near = nearest(word, self.texts()[0])
        if near:
            said += "; the nearest keys: " + ", ".join(near)
        if any(ch.isspace() for ch in word):
            said += "; a phrase is a key only where the file holds it as one (New_York)"
        return said


def nearest(word: str, keys: list[str], n: int = NEAREST) -> list[str]:
    """The keys most like a word (difflib's ratio, at least 0.6), the likest first. A key more than 2.33 times
    longer or shorter cannot reach 0.6 and is never compared: a table of 400,000 keys answers at once."""
    size = len(word)
    close = [k for k in keys if 0.42 * size <= len(k) <= 2.34 * size]
    return difflib.get_close_matches(word, close, n=n, cutoff=0.6)
