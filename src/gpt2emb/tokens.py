"""A cache entry's vocabulary: token ids to their entries and texts, and texts to token ids.

A Vocab reads what a warm command needs from the entry's files (pieces.txt, added.json, bpe.npy) and loads
the tokenizers library only where they cannot answer. How a typed word becomes ids, and what is refused as
no word, is queries.py's job.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpt2emb import bpe, piece_lines
from gpt2emb.bpe import Bpe
from gpt2emb.choices import Pool
from gpt2emb.errors import BadModel, UsageError, not_unicode
from gpt2emb.families import BYTE_LEVEL, Spelling
from gpt2emb.queries import Query, resolve
from gpt2emb.quoting import quote
from gpt2emb.tokenizer_library import ADDED_FILE, LibraryFault, added_tokens, library_faults

if TYPE_CHECKING:
    import numpy as np

    from gpt2emb.forms import Forms


def display(piece: str) -> str:
    """A byte-level vocabulary entry as text. Bytes that are not whole UTF-8 characters show as \\xNN."""
    return BYTE_LEVEL.text(piece)


class Vocab:
    """The vocabulary and tokenizer of one cache entry, each file read only when a question needs it."""

    def __init__(
        self, entry: Path, n_rows: int, words: Spelling = BYTE_LEVEL, specials: re.Pattern[str] | None = None
    ) -> None:
        self._entry = entry
        self.n_rows = n_rows
        self.words = words
        # The family's pattern of special tokens, which queries.resolve refuses as words.
        self.specials = specials
        self._lookups = 0
        # Each token's text, kept once worked out, because a batch shows many tokens again.
        self._shown: dict[int, str] = {}

    @functools.cached_property
    def _lines(self) -> bytes:
        """The bytes of pieces.txt (see piece_lines.py).

        A warm command looks up a few entries in these bytes. Decoding and splitting all 50,257 of them
        (_pieces) would cost more than the rest of its lookups together.
        """
        return (self._entry / piece_lines.FILE).read_bytes()

    @functools.cached_property
    def _pieces(self) -> list[str]:
        """The vocabulary entry of each token id, and "" where there is none."""
        return piece_lines.read_all(self._lines)

    @functools.cached_property
    def _ends(self) -> np.ndarray:
        """Where each line of _lines ends (the offset of its \\n), for every line but the last."""
        # A command that looks up a token has numpy loaded already, because numpy holds the rows.
        import numpy as np

        return np.flatnonzero(np.frombuffer(self._lines, dtype=np.uint8) == 10)

    @functools.cached_property
    def _ids(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self._pieces) if p}

    def id_of(self, piece: str) -> int | None:
        """The token id of a vocabulary entry, or None where the vocabulary has no such entry."""
        # A search of the file's bytes costs far less than building the dict, until there are many words.
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
        """The tokenizer's added tokens, each a dict of "content", "id" and "special", from added.json."""
        path = self._entry / ADDED_FILE
        if path.is_file():
            added: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
            return added
        # An entry built before added.json existed asks the tokenizer.
        return added_tokens(self._tokenizer)

    @functools.cached_property
    def special_ids(self) -> dict[str, int]:
        """The id of each special token the tokenizer has, by its text."""
        return {t["content"]: t["id"] for t in self._added if t["special"]}

    def _holds_added(self, text: str) -> bool:
        """Whether the tokenizer may find an added token in text.

        The tokenizer looks for added tokens first, and splits only the rest. An entry of format 3 or 4 did
        not record the text the tokenizer finds a token by (see added_tokens). In such an entry, an added
        token that is not special may be anywhere.
        """
        return any(
            t["matched"] in text if "matched" in t else not t["special"] or t["content"] in text
            for t in self._added
        )

    @functools.cached_property
    def _shortcut(self) -> bool:
        """Whether words.whole may answer without the tokenizer.

        Byte-level BPE's rule holds only for GPT-2's own splitter (Qwen2's splits digits one by one), and
        only for a vocabulary whose merges make each of its entries (bpe.makes_each). An entry whose
        tokenizer bpe.py reproduces holds bpe.npy, and an entry built before added.json existed is a GPT-2
        entry. Another family's Spelling says itself where its rule holds.
        """
        if type(self.words) is not Spelling:
            return True
        return (self._entry / bpe.FILE).is_file() or not (self._entry / ADDED_FILE).is_file()

    @functools.cached_property
    def _bpe(self) -> Bpe | None:
        """The plain-Python encoder, where the entry holds bpe.npy: its tokenizer is one bpe.py reproduces."""
        path = self._entry / bpe.FILE
        if not path.is_file():
            return None
        import numpy as np

        return Bpe(np.load(path, mmap_mode="r", allow_pickle=False), [t["content"] for t in self._added])

    def texts(self) -> tuple[list[str], list[str]]:
        """For every row, its vocabulary entry ("" where it has none) and that entry as text."""
        return self._texts

    @functools.cached_property
    def _texts(self) -> tuple[list[str], list[str]]:
        pieces = self._pieces + [""] * max(0, self.n_rows - len(self._pieces))
        texts = [self.words.text(p) if p else "" for p in pieces]
        # From now on, token() answers from these texts.
        self._shown.update((i, t) for i, t in enumerate(texts) if t)
        return pieces, texts

    @functools.cached_property
    def word_starts(self) -> tuple[list[bool], list[bool]]:
        """For every row, whether its token starts a word, and whether it is a whole word.

        A token that starts a word is shown with a leading space, as " king". A whole word starts one, holds
        more than the space, and holds only whole characters, with no fragment of a character's UTF-8
        bytes. This is the one definition behind --whole-words everywhere.
        """
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
        """Which rows are one word in another form, for neighbors --fold (see forms.py)."""
        # It is imported here, for --fold alone. Building its dataclass (forms.Folded) costs some 1 ms, which
        # every other warm command would pay for nothing.
        from gpt2emb.forms import Forms

        return Forms(self.texts()[1][: self.n_rows])

    def _piece(self, token_id: int) -> str:
        """The vocabulary entry of a token id, which is line token_id of pieces.txt.

        It is "" for an added token or an id past the vocabulary. It is read from the split lines once they
        are made, and from the file's bytes before.
        """
        if "_pieces" in self.__dict__:
            return self._pieces[token_id] if 0 <= token_id < len(self._pieces) else ""
        ends = self._ends
        if not 0 <= token_id <= len(ends):
            return ""
        start = ends[token_id - 1] + 1 if token_id else 0
        end = ends[token_id] if token_id < len(ends) else len(self._lines)
        return piece_lines.decoded(self._lines[start:end])

    def token(self, token_id: int) -> str:
        """A token as tables and JSON show it, the text it stands for (see Spelling.text)."""
        shown = self._shown.get(token_id)
        if shown is None:
            shown = self._shown[token_id] = self._token(token_id)
        return shown

    def _token(self, token_id: int) -> str:
        """A token's text worked out: an added token's text, or <id N> for a row past the tokenizer."""
        piece = self._piece(token_id)
        if not piece:
            added = self._tokenizer.id_to_token(token_id)
            return added if added is not None else f"<id {token_id}>"
        return self.words.text(piece)

    def encode(self, text: str) -> tuple[int, ...]:
        """A word's ids, as tokenize gives them. By then, queries.resolve has refused a special token.

        A special token with spaces around it is not that token alone. The spaces are tokens of their own,
        as the tokenizer makes them: " <|endoftext|>" is " " and <|endoftext|>.
        """
        return self.tokenize(text)

    def tokenize(self, text: str) -> tuple[int, ...]:
        """A whole text's ids exactly as the tokenizer makes them, as typed, with its special tokens kept."""
        problem = not_unicode(text)
        # The tokenizer would fail on such a text with a TypeError that says nothing.
        if problem:
            raise UsageError(f"{quote(text, 40)} is not Unicode text: {problem}")
        whole = self.words.whole(text) if self._shortcut else None
        # A text that is one entry is found by a lookup in the vocabulary, with no tokenizer.
        if whole is not None and not self._holds_added(text):
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
        """A typed word's token ids, or a UsageError that says why it is no word here (see queries.py)."""
        return resolve(self, word, exact, pool)

    @functools.cached_property
    def _exact(self) -> Callable[[str], tuple[int, ...] | None] | None:
        """The family's way to take a text as typed, not starting a word (Spelling.exact).

        It is None where the tokenizer itself takes a text as typed.
        """
        return self.words.exact(self._entry / "tokenizer.json")

    def as_typed(self, text: str) -> tuple[int, ...] | None:
        """A text's ids for --exact, as typed and not starting a word, or None where there are none.

        BERT's "ing" is "##ing", and a Llama's "at" is the piece "at", not "▁at". None means the vocabulary
        spells the text only as a word's start.
        """
        return self.encode(text) if self._exact is None else self._exact(text)

    def _raw(self, token_id: int) -> bytes | None:
        """The bytes a token stands for (Spelling.raw of its entry). An added token stands for its text."""
        piece = self._piece(token_id)
        if not piece:
            content = next((t["content"] for t in self._added if t["id"] == token_id), None)
            return content.encode("utf-8") if content is not None else b""
        return self.words.raw(piece)

    def white_space(self, token_id: int) -> bool:
        """Whether a token is white space made of whole characters, as a piece of a split run of spaces."""
        raw = self._raw(token_id)
        try:
            return raw is not None and raw.decode("utf-8").isspace()
        except UnicodeDecodeError:
            # The token is a fragment of a character's bytes, as U+3000 has three.
            return False

    def holds_a_character(self, token_id: int) -> bool:
        """Whether a token holds a whole character other than a space, not only fragments of UTF-8 bytes."""
        raw = self._raw(token_id)
        # An entry that is no byte-level spelling is plain text.
        if raw is None:
            return True
        text = raw.decode("utf-8", errors="replace").replace("\ufffd", "")
        return bool(text.strip())
