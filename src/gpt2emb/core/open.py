"""Opening a model for a command, and the checks the commands share (before and after opening)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gpt2emb import candidates, families
from gpt2emb.choices import Pool
from gpt2emb.errors import UsageError, option
from gpt2emb.queries import Query, Specials, check_word
from gpt2emb.registry import ModelRef
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results.common import Token
from gpt2emb.store import build
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Vocab


def open_ref(ref: ModelRef, reporter: Reporter | None = None) -> Opened:
    """A model resolved at the edge (registry.resolve, once a run), opened for the cores: its cache entry
    opened and checked once, here (fetched on first use)."""
    if ref.static:
        from gpt2emb.store import static  # a static file's only

        m = static.open_static(ref, reporter)
    else:
        m = build.open_model(ref, reporter)
    return Opened(m, vocab_of(m), reporter, ref)


def vocab_of(m: OpenedEntry) -> Vocab:
    """The tokenizer of a cache entry, with its family's special tokens (refused as words even where the
    entry's tokenizer does not list them); a static table's keys (keys.Keys)."""
    if m.static:
        from gpt2emb.keys import Keys

        return Keys(m.path, m.shape.vocab_size, m.words, m.name)
    return Vocab(m.path, m.shape.vocab_size, m.words, m.family.specials)


def refuse_token_options(
    name: str, exact: bool = False, pool: Pool = Pool.mean, whole_words: bool = False, fold: bool = False
) -> None:
    """Refuse, on a static word table, the options about tokens (exit 2): its words are keys, as typed, and
    nothing is split. --pool mean, the default, is taken: a key is one row, so it changes nothing."""
    given = [
        option(flag, value)
        for flag, value, on in (
            ("exact", True, exact),
            ("pool", str(pool), pool is not Pool.mean),
            ("whole_words", True, whole_words),
            ("fold", True, fold),
        )
        if on
    ]
    if given:
        raise UsageError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} about tokens, and {name} is a static "
            "word table: its words are keys, looked up as typed, never split; leave "
            f"{'it' if len(given) == 1 else 'them'} out"
        )


def refuse_static(ref: ModelRef, lacks: str) -> None:
    """Refuse a command about a model's structure on a static word table (exit 2): lacks says what it has
    not ("it has no position table")."""
    if ref.static:
        raise UsageError(f"{ref.name} is a static word table: {lacks}")


def tokens_of(vocab: Vocab, q: Query) -> tuple[Token, ...]:
    return tuple(Token(i, vocab.token(i)) for i in q.ids)


def known_facts(ref: ModelRef) -> tuple[Specials | None, int | None]:
    """What the registry knows of a model before it is opened: its special tokens, its vocabulary size
    (None, None for a model it does not name)."""
    spec = ref.spec
    if spec is None:
        return None, None
    return Specials(families.by_name(spec.shape.family).specials, spec.special_ids), spec.shape.vocab_size


class RankOptions(NamedTuple):
    """How neighbors and analogy rank, as one record from the command line or a handle's call to the cores:
    k answers, words as given (exact) or pooled, the inputs kept among the answers or not, the candidates
    (among a file's words, the first `restrict` ids, whole words only), and neighbors' rows folded by word.
    Built by keyword, each option under the name its command gives it in public."""

    k: int = 10
    exact: bool = False
    pool: Pool = Pool.mean
    keep_query: bool = False  # neighbors --keep-query: the query's own tokens among the answers
    keep_inputs: bool = False  # analogy --keep-inputs: A, B and C among the answers
    among: str | Path | None = None
    restrict: int | None = None
    whole_words: bool = False
    fold: bool = False  # neighbors only


def check_candidates(ref: ModelRef, options: RankOptions) -> candidates.Restriction | None:
    """--among, --restrict and --whole-words read and checked before the model is opened (and the options
    about tokens refused for a static word table)."""
    if ref.static:
        refuse_token_options(ref.name, options.exact, options.pool, options.whole_words, options.fold)
    among = None if options.among is None else str(options.among)
    restrict, whole, exact = options.restrict, options.whole_words, options.exact
    return candidates.Restriction.read(among, restrict, whole, exact, *known_facts(ref))


def check_top(k: int, rows: int | None, static: bool = False) -> int:
    """k, once it is one a ranking can give (rows: the model's tokens, None while they are not known). An
    int by then, checked once where it came in: the command line parses it so, the handle's contract makes it
    one (contract.count). static: the rows are a static table's keys, and the message says so."""
    if k < 1:
        raise UsageError(f"{option('k')} must be 1 or more, not {k}")
    if rows is not None and k > rows:
        raise _too_many(k, rows, static)
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


def open_checked(
    ref: ModelRef, words: list[str] | None, exact: bool, k: int | None, reporter: Reporter | None
) -> Opened:
    """open_ref for a command: what can be checked before the model is opened is checked first (its words,
    -k), so bad input never fetches or caches anything; -k's bound once the model's size is known (before
    opening for a model the registry names, else once it is open). words None: they come later, from
    stdin; never an empty list: the command line asks for one word at least)."""
    specials, rows = known_facts(ref)
    for w in words or ():
        check_word(w, exact, specials, static=ref.static)
    if k is not None:
        check_top(k, rows)
    opened = open_ref(ref, reporter)
    if k is not None and rows is None:
        check_top_fits(k, opened.model.shape.vocab_size, ref.static)
    return opened


def check_top_fits(k: int, rows: int, static: bool = False) -> None:
    """-k no more than the model's tokens, for a model whose size is known once it is open."""
    if k > rows:
        raise _too_many(k, rows, static)


def _too_many(k: int, rows: int, static: bool) -> UsageError:
    # A static table's rows are its keys: "tokens" would send its reader looking for a tokenizer.
    what = "keys" if static else "tokens"
    return UsageError(f"{option('k')} must be at most {rows:,} (the number of {what}), not {k:,}")


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
