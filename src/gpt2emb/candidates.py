"""Which rows may be an answer of neighbors and analogy: the tokens of an --among file's words, the first
--restrict N ids, the whole words (--whole-words), any of them together (they intersect), as one boolean mask
over the rows. The ranking honours it exactly (ops.Ranking.top and rank, ops.sink_outside).

A word of the file means what it means on the command line (Vocab.query, with the command's --exact and
--pool). A word the tokenizer splits has no row of its own, so it cannot be ranked as one token: it is left
out and named in a note (with --pool strict, it is an error, as on the command line). gensim's counterpart
is most_similar_to_given(key, keys_list), which ranks a list of keys that are all in its vocabulary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from gpt2emb import limits
from gpt2emb.choices import Pool
from gpt2emb.errors import UsageError, option
from gpt2emb.queries import Specials, check_word
from gpt2emb.quoting import quote
from gpt2emb.tokens import Vocab
from gpt2emb.word_lists import listed

if TYPE_CHECKING:
    from gpt2emb.results.candidates import Candidates

SPLIT_SHOWN = 5  # split words named in the note; the JSON lists them all


class Restriction(NamedTuple):
    """What the options ask for, read and checked as far as it can be before a model is opened."""

    among: str | None  # the file, as given
    words: tuple[tuple[int, str], ...]  # its words with their line numbers
    restrict: int | None
    whole_words: bool

    @staticmethod
    def read(
        among: str | None,
        restrict: int | None,
        whole_words: bool,
        exact: bool,
        specials: Specials | None = None,
        rows: int | None = None,
    ) -> Restriction | None:
        """None when nothing restricts the candidates. specials and rows: the model's special tokens and its
        vocabulary size, when the registry knows the model before it is opened."""
        if among is None and restrict is None and not whole_words:
            return None
        words: tuple[tuple[int, str], ...] = ()
        if among is not None:
            words = tuple(_read_words(among, exact, specials))
        if restrict is not None:
            check_restrict(restrict, rows)
        return Restriction(among, words, restrict, whole_words)


def check_restrict(n: int, rows: int | None) -> None:
    """--restrict N keeps token ids 0 to N - 1: N from 1 to the number of tokens (rows, when known)."""
    if n < 1:
        raise UsageError(f"{option('restrict')} must be 1 or more (the first N token ids), not {n}")
    if rows is not None and n > rows:
        raise UsageError(
            f"{option('restrict', n)} is more than the {rows:,} tokens there are: give at most {rows:,}"
        )


def _shown(path: str) -> str:
    return path if path.isprintable() else repr(path)


def _read_words(path: str, exact: bool, specials: Specials | None) -> list[tuple[int, str]]:
    """The words of a word-list file (UTF-8, one per line; see word_lists.listed), each checked as a word
    typed on the command line is; a problem is named with its line."""
    shown = _shown(path)
    data = limits.read(path, shown, "a word list")
    try:
        text = data.decode("utf-8-sig")  # a byte order mark (Windows Notepad) is no part of the first word
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise UsageError(f"{shown}, line {line}: not UTF-8 text; save the file as UTF-8") from None
    # each word once, at its first line: a list may repeat its words millions of times (the line numbers of
    # the distinct lines found at C speed: the pairs reversed, so each line's first number is written last)
    lines = text.splitlines()
    distinct = dict(zip(reversed(lines), range(len(lines), 0, -1), strict=True))
    first: dict[str, int] = {}
    for raw, number in sorted(distinct.items(), key=lambda item: item[1]):
        word = listed(raw)
        if word is not None:
            first.setdefault(word, number)
    words = [(number, word) for word, number in first.items()]
    for line, word in words:
        try:
            check_word(word, exact, specials)
        except UsageError as e:
            raise UsageError(f"{shown}, line {line}: {e.message}") from None
    if not words:
        raise UsageError(f"{shown} lists no words: one word a line (blank lines and # comments are skipped)")
    return words


class Allowed(NamedTuple):
    """The candidate rows: mask (None: every row) and what the JSON and the notes say of them."""

    mask: np.ndarray | None
    info: Candidates | None
    notes: tuple[str, ...]


EVERY_ROW = Allowed(None, None, ())


def allowed_rows(vocab: Vocab, restriction: Restriction | None, exact: bool, pool: Pool) -> Allowed:
    """The rows a restriction leaves as candidates, over all vocab.n_rows rows."""
    if restriction is None:
        return EVERY_ROW
    rows = vocab.n_rows
    mask = np.ones(rows, dtype=bool)
    split: list[str] = []
    parts = []
    if restriction.among is not None:
        shown = _shown(restriction.among)
        listed = np.zeros(rows, dtype=bool)
        for line, word in restriction.words:
            try:
                q = vocab.query(word, exact, pool)
            except UsageError as e:
                raise UsageError(f"{shown}, line {line}: {e.message}") from None
            if len(q.ids) == 1:
                listed[q.ids[0]] = True
            else:
                split.append(word)
        mask &= listed
        parts.append(option("among", restriction.among))
    if restriction.restrict is not None:
        check_restrict(restriction.restrict, rows)
        mask[restriction.restrict :] = False
        parts.append(option("restrict", restriction.restrict))
    if restriction.whole_words:
        mask &= np.array(vocab.word_starts[1][:rows], dtype=bool)
        parts.append(option("whole_words", True))
    count = int(mask.sum())
    notes = []
    if split:
        named = ", ".join(quote(w) for w in split[:SPLIT_SHOWN]) + (
            ", ..." if len(split) > SPLIT_SHOWN else ""
        )
        notes.append(
            f"{len(split):,} word{'s' if len(split) > 1 else ''} of {_shown(restriction.among or '')} "
            f"{'are' if len(split) > 1 else 'is'} not one token and cannot be ranked as one, so "
            f"{'they are' if len(split) > 1 else 'it is'} left out: {named}"
        )
    if not count:
        raise UsageError(
            f"{' with '.join(parts)} leave{'s' if len(parts) == 1 else ''} no token to rank; "
            + ("; ".join(notes) if notes else "list other words, or ask for fewer restrictions")
        )
    from gpt2emb.results.candidates import Candidates  # narrowed candidates only: built when asked for

    info = Candidates(count, restriction.among, restriction.restrict, restriction.whole_words, tuple(split))
    return Allowed(mask, info, tuple(notes))
