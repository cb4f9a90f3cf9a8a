"""A word typed by a user resolved to token ids, or refused with the reason and the way to ask instead.

The rule everywhere: a word typed on the command line means the word as it appears inside running text, so
`king` is the token " king". `--exact` takes the text as typed, not starting a word, in each family's way
(Spelling.exact: BERT's `ing` is "##ing"). A word that the tokenizer splits is never cut silently. Its pieces
are kept, and the pool mode says how one vector is made of them.

What is not a word is refused with the reason. That covers control characters, special tokens such as
<|endoftext|> (they are asked for by id), text of which the tokenizer holds no character whole (an emoji
without a token of its own has only byte fragments), and a word of more than MAX_PIECES pieces.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, NamedTuple

from gpt2emb.choices import Pool
from gpt2emb.errors import UsageError, option
from gpt2emb.quoting import quote

if TYPE_CHECKING:
    from gpt2emb.tokens import Vocab


MAX_WORD_CHARS = 1000
# A "word" of more tokens than this is a phrase or noise, and the mean of its rows says little.
MAX_PIECES = 8


class Query(NamedTuple):
    """A word resolved to token ids. Its note says how a split was pooled, and is empty for one token."""

    word: str
    ids: tuple[int, ...]
    pool: Pool
    note: str = ""


_ID = re.compile(r"id:(.*)", re.DOTALL)


class Specials(NamedTuple):
    """A model's special tokens as they are known before it is opened, for a model of the registry.

    The pattern is the family's pattern of their text, and ids holds the id of each one the model has. A text
    that the pattern matches but ids lacks is no token of the model.
    """

    pattern: re.Pattern[str]
    ids: tuple[tuple[str, int], ...]


def special_refused(name: str, token_id: int | None) -> UsageError:
    """The refusal of a special token typed as a word, naming its id. A None id means the model has none."""
    if token_id is None:
        return UsageError(
            f"{name} is written as a special token, and this model's vocabulary has no such token: type a "
            "word, or ask for a token by its id (id:N)"
        )
    return UsageError(f"{name} is a special token, not a word: ask for its row by id (id:{token_id})")


def check_word(word: str, exact: bool, specials: Specials | None = None, static: bool = False) -> int | None:
    """What can be said of a word before any model is opened: its id for `id:N`, None, or a UsageError.

    specials holds the model's special tokens, when the registry knows them before opening. Without exact,
    the white space around a word is no part of it, as on a line of stdin. static says the word is a key of a
    static table.
    """
    if not exact:
        word = word.strip()
    match = _ID.fullmatch(word)
    if match:
        raw = match.group(1)
        if not re.fullmatch(r"-?[0-9]+", raw, re.ASCII):
            raise UsageError(
                f"{'id:' + raw!r} is not a token id: write id: and a whole number, as in id:5822"
            )
        if raw.startswith("-") or len(raw) > 30:
            raise UsageError(f"id:{raw[:30]} does not exist: token ids are 0 or more")
        return int(raw)
    if len(word) > MAX_WORD_CHARS:
        raise UsageError(f"a word of {len(word):,} characters is too long: at most {MAX_WORD_CHARS:,}")
    # A static table has no --exact to offer, so its message names none.
    if (exact or static) and not word:
        raise UsageError(f"an empty word {'is not a key' if static else 'has no token'}; type a word")
    if not exact and not word:
        raise UsageError(
            f"an empty word has no token; type a word, or use {option('exact', True)} to look up whitespace "
            "itself"
        )
    for ch in word:
        if unicodedata.category(ch) in ("Cc", "Cs") and not (exact and ch in "\t\n\r"):
            raise UsageError(
                f"{quote(word[:40])} holds the control character U+{ord(ch):04X}: type the word without it, "
                "or ask for a token by its id (id:N)"
            )
    if specials is not None and specials.pattern.fullmatch(word.strip()):
        raise special_refused(word.strip(), dict(specials.ids).get(word.strip()))
    return None


def resolve(vocab: Vocab, word: str, exact: bool, pool: Pool) -> Query:
    """A word's token ids in this vocabulary, or a UsageError that says why it is no word here."""
    # Without exact, the word is read as check_word reads it, and its Query holds it so.
    if not exact:
        word = word.strip()
    token_id = check_word(word, exact)
    if token_id is not None:
        if token_id >= vocab.n_rows:
            raise UsageError(f"id:{token_id} does not exist: token ids go from 0 to {vocab.n_rows - 1}")
        return Query(word, (token_id,), pool)
    name = word.strip()
    if name in vocab.special_ids or (vocab.specials is not None and vocab.specials.fullmatch(name)):
        raise special_refused(name, vocab.special_ids.get(name, vocab.id_of(name)))
    text = word if exact else vocab.words.running(word)
    ids = vocab.as_typed(text) if exact else vocab.encode(text)
    if ids is None:
        raise UsageError(
            f"{quote(text)} cannot be spelt in this vocabulary without starting a word, as "
            f"{option('exact', True)} asks: {vocab.words.name} spells it only as a word's start, or not "
            f"at all; drop {option('exact', True)} for the word as it starts one, or ask for a piece by "
            f"its id (id:N){_hint(vocab, word, None)}"
        )
    if not ids:
        raise UsageError(f"{word!r} gives no tokens; type a word")
    # A special token that the text does not spell is the tokenizer's stand-in for what its vocabulary
    # lacks (WordPiece's [UNK]). Its row is no vector of the word.
    unknown = next(((t, i) for t, i in vocab.special_ids.items() if i in ids and t not in text), None)
    if unknown is not None:
        raise UsageError(
            f"{quote(text)} holds characters this vocabulary has no piece for: the tokenizer makes "
            f"{unknown[0]} (id:{unknown[1]}) of it, its token for what it cannot spell; type another "
            f"word{_hint(vocab, word, ids)}"
        )
    if len(ids) == 1:
        return Query(word, ids, pool)
    quoted = quote(text)
    pieces = " + ".join(quote(vocab.token(i)) for i in ids[:MAX_PIECES])
    pieces += " + ..." if len(ids) > MAX_PIECES else ""
    hint = _hint(vocab, word, ids)
    # White space split into whole spaces is answered, though no piece holds a character other than a space.
    spaces = text.isspace() and all(vocab.white_space(i) for i in ids)
    if not spaces and not any(vocab.holds_a_character(i) for i in ids):
        raise UsageError(
            f"{quoted} has no token that holds even one of its characters whole: the tokenizer sees "
            f"only raw bytes ({pieces}), and rows of byte fragments do not make a word; ask for a piece "
            f"by its id (id:N){hint}"
        )
    if len(ids) > MAX_PIECES:
        raise UsageError(
            f"{quoted} splits into {len(ids):,} tokens ({pieces}): more than the {MAX_PIECES} a word may "
            f"have here; ask for a piece by its id (id:N){hint}"
        )
    if pool is Pool.strict:
        raise UsageError(
            f"{quoted} is not one token: it splits into {len(ids)} ({pieces}); "
            f"use {option('pool', 'mean')} or {option('pool', 'first')}, or pick a word that is one "
            f"token{hint}"
        )
    how = "the mean of their rows" if pool is Pool.mean else "the first piece's row"
    return Query(
        word,
        ids,
        pool,
        f"{quoted} splits into {len(ids)} tokens ({pieces}); using {how} ({option('pool')}){hint}",
    )


def _hint(vocab: Vocab, word: str, ids: tuple[int, ...] | None) -> str:
    """How to ask for a vocabulary entry typed as the vocabulary writes it, or "" where there is none.

    A user may type the vocabulary's own marks as text: GPT-2's "Ġking", BERT's "##ing". The tokenizer reads
    such a word as the text it is, as any other, so it does not make that entry of it. The hint names the
    entry's id, and the word that asks for it.
    """
    found = vocab.id_of(word)
    if found is None or ids == (found,):
        return ""
    shown = vocab.token(found)
    # A piece that is its own text ("ingly") or a byte fragment leaves nothing to point at.
    if shown == word or not vocab.holds_a_character(found):
        return ""
    bare = shown.removeprefix(" ")
    way = ""
    if bare and bare.isprintable() and not any(ch.isspace() for ch in bare):
        starts = bare != shown
        typed = vocab.encode(vocab.words.running(bare)) if starts else vocab.as_typed(bare)
        if typed == (found,):
            way = f" or as {bare}" + ("" if starts else f" with {option('exact', True)}")
    return (
        f"; {quote(word)} is how this vocabulary writes the token {quote(shown)}: ask for it by its id "
        f"(id:{found}){way}"
    )
