"""What the word commands (vector, neighbors, analogy, similarity) share over an opened model: a word's query
and its vector, rankings over wte, the candidates, the notes of short answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from gpt2emb import candidates, ops
from gpt2emb.choices import Pool
from gpt2emb.core.open import Opened, RankOptions, refuse_token_options
from gpt2emb.errors import BadModel, UsageError, spelt
from gpt2emb.queries import Query


def direction(wte: np.ndarray, q: Query) -> np.ndarray:
    """The query's vector, refused when it is all zeros (a cosine needs a direction) or not all numbers."""
    v = ops.query_vector(wte, q)
    if not np.isfinite(v).all():
        raise BadModel(
            f"the vector of {q.word!r} holds NaN or infinite values: this model's row for it is broken, "
            "so it has no cosine with anything; use another model"
        )
    if not v.any():
        raise UsageError(
            f"the vector of {q.word!r} is all zeros: it has no direction, so it has no cosine with anything"
        )
    return v


# vectors whose whole rankings (two bounds per row) are held at once: 128 x 50257 x 8 bytes, 51 MB (a block of
# words for neighbors needs less per word: limits.BLOCK)
RANKED = 128


Aimed = tuple[Query, np.ndarray]  # a word's query and its vector, checked to have a direction


# said of a word split into pieces of one character or less each (café in a vocabulary that lacks it: " " +
# "c" + "a" + "f" + two bytes of "é"): those rows are shared by every word that holds the letters
LETTERS = (
    "; no piece is longer than one character, so their rows say little about the word, and what is "
    "nearest to them is mostly noise"
)


def query_of(o: Opened, word: str, exact: bool, pool: Pool) -> Query:
    if o.model.static:
        refuse_token_options(o.name, exact, pool)
    q = o.vocab.query(word, exact, pool)
    vocab = o.vocab
    if len(q.ids) > 1 and all(len(vocab.token(i)) <= 1 or not vocab.holds_a_character(i) for i in q.ids):
        return Query(q.word, q.ids, q.pool, q.note + LETTERS)
    return q


def aimed_of(o: Opened, word: str, exact: bool, pool: Pool) -> Aimed:
    q = query_of(o, word, exact, pool)
    return q, direction(o.model.wte, q)


def aim_each(
    o: Opened, words: list[str], exact: bool, pool: Pool, lacks: dict[int, str] | None = None
) -> list[Aimed]:
    """Each word's query and vector. With lacks (models side by side), a word this model cannot answer is
    left out and its refusal kept by the word's place, so that the other models still answer it."""
    if lacks is None:
        return [aimed_of(o, w, exact, pool) for w in words]
    aimed = []
    for at, w in enumerate(words):
        try:
            aimed.append(aimed_of(o, w, exact, pool))
        except UsageError as e:
            lacks[at] = e.message
    return aimed


def rankings_of(o: Opened, vectors: list[np.ndarray]) -> Iterator[ops.Ranking]:
    """Each vector's cosine ranking over wte, a block of vectors per matrix pass (memory stays bounded
    however many there are; a ranking does not depend on its block: see ops.cosine_rankings)."""
    for start in range(0, len(vectors), RANKED):
        yield from ops.cosine_rankings(o.model.wte, o.model.wte_norm, vectors[start : start + RANKED])


def restriction_of(o: Opened, options: RankOptions) -> candidates.Restriction | None:
    """The candidates of the options, read and checked once the model is open (the handle's way)."""
    if o.model.static:
        refuse_token_options(o.name, options.exact, options.pool, options.whole_words, options.fold)
    # restrict is an int or None by then, checked where it came in (the command line, contract.maybe_count)
    among, restrict, whole_words, exact = options.among, options.restrict, options.whole_words, options.exact
    if among is not None and not isinstance(among, str | Path):
        raise UsageError(f"among is a file of words (a str or a Path), not {among!r:.40}")
    # no specials: the vocabulary refuses a special token as it reads the file's words, naming its id
    listed = None if among is None else str(among)
    return candidates.Restriction.read(listed, restrict, whole_words, exact, None, o.model.shape.vocab_size)


def fewer_notes(k: int, found: list[tuple[str, int]], fold: bool, static: bool = False) -> list[str]:
    """A note for each answer shorter than k: the candidates ran out (never padded). static: a static word
    table's rows, which are keys."""
    what = (
        ("different word", "different words") if fold else ("key", "keys") if static else ("token", "tokens")
    )
    return [
        f"{word}: only {n:,} {what[n != 1]} {'is' if n == 1 else 'are'} left to rank, fewer than the {k:,} "
        f"asked for ({spelt('-k', 'k')})"
        for word, n in found
        if n < k
    ]
