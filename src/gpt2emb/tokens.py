"""Words <-> token ids: the leading-space rule, `id:N`, splits and pooling, and the display string of a token.

The rule everywhere: a word typed on the command line means the word as it appears inside running text,
so `king` is the token " king". `--exact` takes the text as typed, not starting a word (each family's way,
Spelling.exact: BERT's `ing` is "##ing"). A word the tokenizer splits is never cut silently: the pieces are
kept, and the pool mode says how one vector is made of them. What is not a word is refused with the reason:
control characters, special tokens such as <|endoftext|> (ask for them by id), text of which the tokenizer
holds no character whole (an emoji without a token of its own: only byte fragments), more than MAX_PIECES
pieces.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from gpt2emb import bpe, piece_lines
from gpt2emb.bpe import Bpe
from gpt2emb.choices import Pool
from gpt2emb.errors import BadModel, UsageError, not_unicode, option
from gpt2emb.families import BYTE_LEVEL, Spelling

if TYPE_CHECKING:
    import numpy as np

    from gpt2emb.forms import Forms


MAX_WORD_CHARS = 1000
MAX_PIECES = 8  # a "word" of more tokens than this is a phrase or noise: the mean of its rows says little
ADDED_FILE = "added.json"


class Query(NamedTuple):
    """A word resolved to token ids; `note` says how a split was pooled (empty for a single token)."""

    word: str
    ids: tuple[int, ...]
    pool: Pool
    note: str = ""


def display(piece: str) -> str:
    """A byte-level vocabulary entry as text; bytes that are not whole UTF-8 characters are shown as \\xNN."""
    return BYTE_LEVEL.text(piece)


class LibraryFault(Exception):
    """The tokenizers library failed on a tokenizer.json: its message (see library_faults)."""


@contextlib.contextmanager
def library_faults() -> Iterator[None]:
    """A call into the tokenizers library on a tokenizer.json that may be damaged: its errors, and its Rust
    code's panics (a PanicException: a BaseException alone), come out as one LibraryFault; an interrupt stays
    one. Rust's default panic hook prints a panic's text straight onto descriptor 2, and neither tokenizers
    nor pyo3 can turn it off: descriptor 2 points at /dev/null for the call, which silences the whole
    process, so only while this thread is its only one. With another running (batch.py's reader, a
    notebook's), what that prints is never lost, and a panic's text shows above the one-line error."""
    silenced = threading.active_count() == 1
    if silenced:
        sys.stderr.flush()
    saved = os.dup(2) if silenced else -1
    try:
        if silenced:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)
        yield
    except BaseException as e:
        if not isinstance(e, Exception) and type(e).__name__ != "PanicException":
            raise
        raise LibraryFault(str(e)) from None
    finally:
        if silenced:
            os.dup2(saved, 2)
            os.close(saved)


def quote(text: str, n: int | None = None) -> str:
    """A token or word in double quotes, so a leading space shows; control characters are escaped. With n,
    its first n characters, and ... where it goes on (a text in a message)."""
    if n is not None and len(text) > n:
        return quote(text[:n]) + "..."
    escaped = "".join(
        ch
        if ch.isprintable() or ch == " "
        else (f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        for ch in text
    )
    return f'"{escaped}"'


def listed_words(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """The words of a word list (an --among file, a batch on stdin), one per line, with their line numbers
    from 1: the whitespace around a word is dropped, and blank lines and comments (# as the first character
    that is not a space) are skipped. So a word of its own cannot begin with # nor hold the spaces around
    it: such a token is named by its id (id:N)."""
    for number, line in enumerate(lines, 1):
        word = listed(line)
        if word is not None:
            yield number, word


def listed(line: str) -> str | None:
    """The word of one line of a word list (see listed_words); None for a blank line or a comment."""
    word = line.strip()
    return word if word and not word.startswith("#") else None


_ID = re.compile(r"id:(.*)", re.DOTALL)


class Specials(NamedTuple):
    """A model's special tokens as known before it is opened (a model of the registry): the family's pattern
    of their text, and the id of each one the model has. A text the pattern matches that ids lacks is no
    token of the model."""

    pattern: re.Pattern[str]
    ids: tuple[tuple[str, int], ...]


def special_refused(name: str, token_id: int | None) -> UsageError:
    """The refusal of a special token typed as a word, naming its id (None: the model has no such token)."""
    if token_id is None:
        return UsageError(
            f"{name} is written as a special token, and this model's vocabulary has no such token: type a "
            "word, or ask for a token by its id (id:N)"
        )
    return UsageError(f"{name} is a special token, not a word: ask for its row by id (id:{token_id})")


def check_word(word: str, exact: bool, specials: Specials | None = None, static: bool = False) -> int | None:
    """What can be said of a word before any model is opened: its id for `id:N`, or a UsageError.
    specials: the model's special tokens, when the registry knows them before opening. Without exact, the
    white space around a word is no part of it, as on a line of stdin. static: a key of a static table."""
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
    if (exact or static) and not word:  # a static table has no --exact to offer
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


def added_tokens(tokenizer: Any) -> list[dict[str, Any]]:
    """A tokenizers.Tokenizer's added tokens, as an entry's added.json holds them: content, id, special, and
    the text the tokenizer finds the token by in a text (matched): a normalized token is looked for in the
    normalized text, as its normalizer makes its content ("Kitten" under a lowercasing normalizer is found
    as "kitten")."""
    normalizer = tokenizer.normalizer
    return [
        {
            "content": t.content,
            "id": i,
            "special": t.special,
            "matched": t.content
            if normalizer is None or not t.normalized
            else normalizer.normalize_str(t.content),
        }
        for i, t in sorted(tokenizer.get_added_tokens_decoder().items())
    ]


class Vocab:
    """The tokenizer of one cache entry, loaded as lazily as possible."""

    def __init__(
        self, entry: Path, n_rows: int, words: Spelling = BYTE_LEVEL, specials: re.Pattern[str] | None = None
    ) -> None:
        self._entry = entry
        self.n_rows = n_rows
        self.words = words
        self.specials = specials  # the family's pattern of special tokens, refused as words (query)
        self._lookups = 0
        self._shown: dict[int, str] = {}  # token ids as shown, once worked out (a batch shows many again)

    @functools.cached_property
    def _lines(self) -> bytes:
        """pieces.txt (see piece_lines.py). A warm command looks up a few entries in these bytes: decoding and
        splitting all 50,257 (_pieces) costs more than the rest of its lookups together."""
        return (self._entry / piece_lines.FILE).read_bytes()

    @functools.cached_property
    def _pieces(self) -> list[str]:
        """The vocabulary entry of each token id ("" where there is none)."""
        return piece_lines.read_all(self._lines)

    @functools.cached_property
    def _ends(self) -> np.ndarray:
        """Where each line of _lines ends (the offset of its \\n), the last line aside."""
        import numpy as np  # a command that looks up a token has numpy loaded: it holds the rows

        return np.flatnonzero(np.frombuffer(self._lines, dtype=np.uint8) == 10)

    @functools.cached_property
    def _ids(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self._pieces) if p}

    def id_of(self, piece: str) -> int | None:
        # a search of the file's bytes costs far less than building the dict, until there are many words
        self._lookups += 1
        if self._lookups > 16:
            return self._ids.get(piece)
        return piece_lines.line_of(self._lines, piece)

    @functools.cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        return Tokenizer.from_file(str(self._entry / "tokenizer.json"))

    @functools.cached_property
    def _added(self) -> list[dict[str, Any]]:
        """The tokenizer's added tokens ({"content", "id", "special"}), from the entry's added.json."""
        path = self._entry / ADDED_FILE
        if path.is_file():
            added: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
            return added
        return added_tokens(self._tokenizer)  # an entry built before added.json

    @functools.cached_property
    def _specials(self) -> dict[str, int]:
        return {t["content"]: t["id"] for t in self._added if t["special"]}

    def _holds_added(self, text: str) -> bool:
        """Whether the tokenizer may find an added token in text: it looks for them first, and splits only
        the rest. An entry of format 3 or 4 did not record the text it finds one by (see added_tokens): an
        added word (not special) may be anywhere then."""
        return any(
            t["matched"] in text if "matched" in t else not t["special"] or t["content"] in text
            for t in self._added
        )

    @functools.cached_property
    def _shortcut(self) -> bool:
        """Whether words.whole may answer without the tokenizer. Byte-level BPE's rule holds for GPT-2's own
        splitter only (Qwen2's splits digits one by one), and for a vocabulary whose merges make each of its
        entries (bpe.makes_each): an entry whose tokenizer bpe.py reproduces so holds bpe.npy, and one built
        before added.json existed is a GPT-2 entry. Another family's Spelling says
        itself where its rule holds."""
        if type(self.words) is not Spelling:
            return True
        return (self._entry / bpe.FILE).is_file() or not (self._entry / ADDED_FILE).is_file()

    @functools.cached_property
    def _bpe(self) -> Bpe | None:
        """The plain-Python encoder, where the entry's tokenizer is one it reproduces (bpe.npy)."""
        path = self._entry / bpe.FILE
        if not path.is_file():
            return None
        import numpy as np

        return Bpe(np.load(path, mmap_mode="r", allow_pickle=False), [t["content"] for t in self._added])

    def texts(self) -> tuple[list[str], list[str]]:
        """For every row: its vocabulary entry ("" where none) and that entry as text."""
        return self._texts

    @functools.cached_property
    def _texts(self) -> tuple[list[str], list[str]]:
        pieces = self._pieces + [""] * max(0, self.n_rows - len(self._pieces))
        texts = [self.words.text(p) if p else "" for p in pieces]
        self._shown.update((i, t) for i, t in enumerate(texts) if t)  # token() answers from them from now on
        return pieces, texts

    @functools.cached_property
    def word_starts(self) -> tuple[list[bool], list[bool]]:
        """For every row: whether its token starts a word (shown with a leading space: " king"), and whether
        it is a whole word: it starts one, holds more than the space, and holds only whole characters (no
        fragment of a character's UTF-8 bytes). The one definition behind --whole-words everywhere."""
        pieces, texts = self.texts()
        leading = [t.startswith(" ") for t in texts]
        whole = [False] * len(texts)
        for i, (piece, text) in enumerate(zip(pieces, texts, strict=True)):
            if leading[i] and text[1:].strip():
                raw = self.words.raw(piece)
                if raw is not None:
                    try:
                        raw.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    whole[i] = True
        return leading, whole

    @functools.cached_property
    def forms(self) -> Forms:
        """Which rows are one word in another form (neighbors --fold): see forms.py."""
        # imported here, for --fold alone: building its dataclass (forms.Folded) costs some 1 ms, which every
        # other warm command would pay for nothing
        from gpt2emb.forms import Forms

        return Forms(self.texts()[1][: self.n_rows])

    def _piece(self, token_id: int) -> str:
        """The vocabulary entry of a token id ("" for an added token or an id past the vocabulary): line
        token_id of pieces.txt, from the split lines once they are made, else from the file's bytes."""
        if "_pieces" in self.__dict__:
            return self._pieces[token_id] if 0 <= token_id < len(self._pieces) else ""
        ends = self._ends
        if not 0 <= token_id <= len(ends):
            return ""
        start = ends[token_id - 1] + 1 if token_id else 0
        end = ends[token_id] if token_id < len(ends) else len(self._lines)
        return piece_lines.decoded(self._lines[start:end])

    def token(self, token_id: int) -> str:
        """A token as tables and JSON show it: the text it stands for (see Spelling.text)."""
        shown = self._shown.get(token_id)
        if shown is None:
            shown = self._shown[token_id] = self._token(token_id)
        return shown

    def _token(self, token_id: int) -> str:
        piece = self._piece(token_id)
        if not piece:
            added = self._tokenizer.id_to_token(token_id)
            return added if added is not None else f"<id {token_id}>"
        return self.words.text(piece)

    def encode(self, text: str) -> tuple[int, ...]:
        """A word's ids (query has refused a special token by then): as tokenize gives them. A special token
        with spaces around it is not that token alone: the spaces are tokens of their own, as the tokenizer
        makes them (" <|endoftext|>" is " " and <|endoftext|>)."""
        return self.tokenize(text)

    def tokenize(self, text: str) -> tuple[int, ...]:
        """A whole text's ids exactly as the tokenizer makes them: as typed, special tokens in it kept."""
        problem = not_unicode(text)
        if problem:  # the tokenizer would fail with a TypeError that says nothing
            raise UsageError(f"{quote(text, 40)} is not Unicode text: {problem}")
        whole = self.words.whole(text) if self._shortcut else None
        if whole is not None and not self._holds_added(text):  # a dictionary lookup, no tokenizer
            found = self.id_of(whole)
            if found is not None:
                return (found,)
        fast = self._bpe.encode(text) if self._bpe is not None else None
        if fast is not None:
            return fast
        try:
            with library_faults():
                ids: list[int] = self._tokenizer.encode(text, add_special_tokens=False).ids
        except LibraryFault as e:
            raise BadModel(
                f"the tokenizers library fails on {quote(text, 40)} with this model's tokenizer.json "
                f"({str(e)[:200]}): the tokenizer is damaged; save the model's tokenizer again"
            ) from None
        return tuple(ids)

    def query(self, word: str, exact: bool, pool: Pool) -> Query:
        if not exact:  # the word as check_word reads it: its Query holds it so
            word = word.strip()
        token_id = check_word(word, exact)
        if token_id is not None:
            if token_id >= self.n_rows:
                raise UsageError(f"id:{token_id} does not exist: token ids go from 0 to {self.n_rows - 1}")
            return Query(word, (token_id,), pool)
        name = word.strip()
        if name in self._specials or (self.specials is not None and self.specials.fullmatch(name)):
            raise special_refused(name, self._specials.get(name, self.id_of(name)))
        text = word if exact else self.words.running(word)
        ids = self._as_typed(text) if exact else self.encode(text)
        if ids is None:
            raise UsageError(
                f"{quote(text)} cannot be spelt in this vocabulary without starting a word, as "
                f"{option('exact', True)} asks: {self.words.name} spells it only as a word's start, or not "
                f"at all; drop {option('exact', True)} for the word as it starts one, or ask for a piece by "
                f"its id (id:N){self._hint(word, None)}"
            )
        if not ids:
            raise UsageError(f"{word!r} gives no tokens; type a word")
        # a special token the text does not spell is the tokenizer's stand-in for what its vocabulary lacks
        # (WordPiece's [UNK]): its row is no vector of the word
        unknown = next(((t, i) for t, i in self._specials.items() if i in ids and t not in text), None)
        if unknown is not None:
            raise UsageError(
                f"{quote(text)} holds characters this vocabulary has no piece for: the tokenizer makes "
                f"{unknown[0]} (id:{unknown[1]}) of it, its token for what it cannot spell; type another "
                f"word{self._hint(word, ids)}"
            )
        if len(ids) == 1:
            return Query(word, ids, pool)
        quoted = quote(text)
        pieces = " + ".join(quote(self.token(i)) for i in ids[:MAX_PIECES])
        pieces += " + ..." if len(ids) > MAX_PIECES else ""
        hint = self._hint(word, ids)
        spaces = text.isspace() and all(self._white(i) for i in ids)  # split into whole spaces
        if not spaces and not any(self.holds_a_character(i) for i in ids):
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

    @functools.cached_property
    def _exact(self) -> Callable[[str], tuple[int, ...] | None] | None:
        """The family's way to take a text as typed, not starting a word, where its tokenizer would start
        one (Spelling.exact); None where the tokenizer takes a text as typed."""
        return self.words.exact(self._entry / "tokenizer.json")

    def _as_typed(self, text: str) -> tuple[int, ...] | None:
        """A text's ids for --exact: as typed, not starting a word (BERT's "ing" is "##ing", a Llama's "at"
        the piece "at", not "▁at"); None where the vocabulary spells the text only as a word's start."""
        return self.encode(text) if self._exact is None else self._exact(text)

    def _hint(self, word: str, ids: tuple[int, ...] | None) -> str:
        """Where a typed word is itself a vocabulary entry that the tokenizer does not make of it (the
        vocabulary's own marks typed as text: GPT-2's "Ġking", BERT's "##ing"), how to ask for that entry;
        the tokenizer reads such a word as the text it is, as any other."""
        found = self.id_of(word)
        if found is None or ids == (found,):
            return ""
        shown = self.token(found)
        if shown == word or not self.holds_a_character(found):
            return ""  # a piece that is its own text ("ingly"), or a byte fragment: nothing to point at
        bare = shown.removeprefix(" ")
        way = ""
        if bare and bare.isprintable() and not any(ch.isspace() for ch in bare):
            starts = bare != shown
            typed = self.encode(self.words.running(bare)) if starts else self._as_typed(bare)
            if typed == (found,):
                way = f" or as {bare}" + ("" if starts else f" with {option('exact', True)}")
        return (
            f"; {quote(word)} is how this vocabulary writes the token {quote(shown)}: ask for it by its id "
            f"(id:{found}){way}"
        )

    def _raw(self, token_id: int) -> bytes | None:
        """The bytes a token stands for (Spelling.raw of its entry); an added token's, its text's."""
        piece = self._piece(token_id)
        if not piece:
            content = next((t["content"] for t in self._added if t["id"] == token_id), None)
            return content.encode("utf-8") if content is not None else b""
        return self.words.raw(piece)

    def _white(self, token_id: int) -> bool:
        """Whether a token is white space, whole characters of it (a piece of a split run of spaces)."""
        raw = self._raw(token_id)
        try:
            return raw is not None and raw.decode("utf-8").isspace()
        except UnicodeDecodeError:  # a fragment of a character's bytes (U+3000 is three)
            return False

    def holds_a_character(self, token_id: int) -> bool:
        """Whether a token holds a whole character other than a space (not only fragments of UTF-8 bytes)."""
        raw = self._raw(token_id)
        if raw is None:
            return True  # an entry that is no byte-level spelling: plain text
        text = raw.decode("utf-8", errors="replace").replace("\ufffd", "")
        return bool(text.strip())
