"""Opening a model for a command, and the checks the commands share (before and after opening)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gpt2emb import candidates, contract, families, registry
from gpt2emb.choices import Pool
from gpt2emb.errors import (
    UsageError,
    WrongType,
    option,
)
from gpt2emb.registry import ModelRef
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results.common import Token
from gpt2emb.store import build
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Query, Specials, Vocab, check_word


def load(
    model: str, reporter: Reporter | None = None, revision: str | None = None
) -> tuple[OpenedEntry, Vocab]:
    m = build.open_model(registry.resolve(model, revision), reporter)
    return m, vocab_of(m)


def vocab_of(m: OpenedEntry) -> Vocab:
    """The tokenizer of a cache entry, with its family's special tokens (refused as words even where the
    entry's tokenizer does not list them)."""
    return Vocab(m.path, m.shape.vocab_size, m.words, m.family.specials)


def tokens_of(vocab: Vocab, q: Query) -> tuple[Token, ...]:
    return tuple(Token(i, vocab.token(i)) for i in q.ids)


def known_facts(model: str) -> tuple[Specials | None, int | None]:
    """What the registry knows of a model before it is opened: its special tokens, its vocabulary size
    (None, None for a model it does not name)."""
    spec = registry.find(model)
    if spec is None:
        return None, None
    return Specials(families.by_name(spec.shape.family).specials, spec.special_ids), spec.shape.vocab_size


class RankOptions(NamedTuple):
    """How neighbors and analogy rank, as one record from the command line or a handle's call to the cores:
    k answers, words as given (exact) or pooled, the inputs kept among the answers or not, the candidates
    (among a file's words, the first `restrict` ids, whole words only), and neighbors' rows folded by word."""

    k: int = 10
    exact: bool = False
    pool: Pool = Pool.mean
    keep_inputs: bool = False  # neighbors: the query's own tokens; analogy: A, B and C
    among: str | Path | None = None
    restrict: int | None = None
    whole_words: bool = False
    fold: bool = False  # neighbors only


def check_candidates(model: str, options: RankOptions) -> candidates.Restriction | None:
    """--among, --restrict and --whole-words read and checked before the model is opened."""
    among = None if options.among is None else str(options.among)
    restrict, whole, exact = options.restrict, options.whole_words, options.exact
    return candidates.Restriction.read(among, restrict, whole, exact, *known_facts(model))


def check_top(k: int, rows: int | None) -> int:
    """k as a Python int, once it is one a ranking can give."""
    k = contract.whole(k)
    if not isinstance(k, int) or isinstance(k, bool):
        raise UsageError(f"{option('k')} must be a whole number, not {k!r}")
    if k < 1:
        raise UsageError(f"{option('k')} must be 1 or more, not {k}")
    if rows is not None and k > rows:
        raise UsageError(f"{option('k')} must be at most {rows:,} (the number of tokens), not {k:,}")
    return k


class Opened:
    """A model's cache entry, opened and checked once, with its vocabulary and what reports on it: what
    every per-model core takes. The handle (handle.Embeddings) is one, with the public methods."""

    def __init__(
        self, model: OpenedEntry, vocab: Vocab, reporter: Reporter | None = None, ref: ModelRef | None = None
    ) -> None:
        self.model, self.vocab = model, vocab
        self.reporter = reporter or QuietReporter()  # what export shows unless given its own
        self.ref = ref  # what the model was opened as: the commands that run it whole ask for it again

    @property
    def name(self) -> str:
        return self.model.name


def open_entry(
    model: str | os.PathLike[str] = registry.DEFAULT_MODEL,
    revision: str | None = None,
    reporter: Reporter | None = None,
) -> Opened:
    """A model opened for the cores, its arguments checked as the handle's are (`gpt2emb.open("gpt2")`): the
    cache entry is opened and checked once, here (fetched on first use); every call then answers from it."""
    if isinstance(model, os.PathLike) and isinstance(os.fspath(model), str):
        model = os.fspath(model)  # a folder as a pathlib.Path
    if not isinstance(model, str):
        raise WrongType(
            f"model must be a str (gpt2, xl, a Hub repo id, a folder) or a folder's pathlib.Path, not "
            f"{contract.shown(model, 40)}"
        )
    # a name, or a folder's path: one too long for a folder is no model the registry knows (exit 3), as a name
    # no Hub repo can have is
    contract.reachable(option("model"), model, system=False)
    if revision is not None:
        contract.text("revision", revision)
    reporter = contract.reporter("reporter", reporter)
    ref = registry.resolve(model, revision)
    m = build.open_model(ref, reporter)
    return Opened(m, vocab_of(m), reporter, ref)


def open_checked(
    model: str,
    words: list[str] | None,
    exact: bool,
    k: int | None,
    reporter: Reporter | None,
    revision: str | None,
) -> Opened:
    """open_entry for a command: what can be checked before the model is opened is checked first (its
    words, -k), so bad input never fetches or caches anything. words None: they come later, from stdin."""
    if words is not None and not words:
        raise UsageError("give at least one word")
    specials, rows = known_facts(model)
    for w in words or ():
        check_word(w, exact, specials)
    if k is not None:  # a registry model's vocabulary is known before anything is fetched
        check_top(k, rows)
    return open_entry(model, revision, reporter)


def floats(values: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in values)


def finite(x: float | None) -> float | None:
    """A figure for the JSON: None where it is undefined (a zero row has no direction)."""
    return None if x is None or not math.isfinite(x) else float(x)


def positions_learned(m: OpenedEntry) -> str:
    """What a model learned, as the refusals of a position past it say."""
    n, offset = m.shape.n_positions, m.shape.position_offset
    said = f"{m.name} learned {n:,} positions, 0 to {n - 1}"  # a count, then positions
    if offset:
        said += (
            f" (rows {offset} to {offset + n - 1} of its position table: the rows before position 0's "
            "are never used for a token, one of them is the padding row)"
        )
    return said


def no_position_table(m: OpenedEntry) -> str:
    """Why a model has no position rows, as messages say it."""
    return f"{m.name} has no position table: in a {m.family.title} model, {m.family.no_position_table}"


def check_position_table(m: OpenedEntry, doing: str = "compare") -> None:
    """Refuse a command about position rows for a model that learned none (exit 2)."""
    if not m.shape.position_table:
        raise UsageError(
            f"{no_position_table(m)}, so there are no position rows to {doing}; use a model with learned "
            "positions, such as gpt2 or roberta-base"
        )


def length_limit(m: OpenedEntry) -> int | None:
    """The most tokens a text may have: one per learned position, less the special tokens the model's
    tokenizer adds around a text in use (<s> and </s>: a text as typed must fit as it is used), None without
    a position table."""
    return m.shape.n_positions - len(m.wraps[0]) - len(m.wraps[1]) if m.shape.position_table else None


def past_limit(m: OpenedEntry) -> str:
    """Why no more tokens than length_limit fit, as the refusals of a longer text say it."""
    limit, added = length_limit(m), len(m.wraps[0]) + len(m.wraps[1])
    if not added:
        return f"position {limit} does not exist: {positions_learned(m)}"
    added_in_use = f"its tokenizer adds {added} special tokens to a text in use"
    return f"{limit:,} fit: {positions_learned(m)}, and {added_in_use}"
