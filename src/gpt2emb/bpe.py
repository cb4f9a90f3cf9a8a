"""GPT-2's byte-level BPE in plain Python: a text's ids without loading the `tokenizers` library.

Loading GPT-2's tokenizer.json costs 0.1-0.2 s, more than all the rest of a warm `input`. When a cache entry
is built, `table` checks that its tokenizer is a plain byte-level BPE (no normalizer, GPT-2's splitting
pattern, no dropout, prefixes or suffixes, each merge making its own token) and turns its merges into one
array, `bpe.npy`, read memory-mapped afterwards. `Bpe.encode` gives exactly the tokenizer's own ids, or
None: it answers only texts made of characters whose Unicode classes (letter, number, white space) every
Unicode version agrees on (the Latin, Greek, Cyrillic and Armenian blocks and general punctuation) and that
hold no added token (<|endoftext|>); for any other text the caller asks the `tokenizers` library. The build
checks both ways agree on a sample before it writes the file; the tests compare them on every character
this module accepts.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np  # imported where used: tokens.py imports this module, and light commands import it

FILE = "bpe.npy"
_SAFE_BLOCKS = ((0x0000, 0x058F), (0x2000, 0x206F))
_WHITE = "\t\n\x0b\x0c\r \x85\xa0\u2000-\u200a\u2028\u2029\u202f\u205f"  # Unicode's White_Space in them
_SAMPLE = "O Brasil é gigante: it's 1,024 tokens — “Ελλάδα”, Россия!\n\n  x  \t'LL've 2024\u2003end "


@functools.cache
def _byte_encoder() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters (a space becomes 'Ġ')."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(printable, map(chr, chars), strict=True))


@functools.cache
def byte_decoder() -> dict[str, int]:
    return {c: b for b, c in _byte_encoder().items()}


@functools.cache
def _to_latin1() -> dict[int, str]:
    """A str.translate table from a byte-level entry's characters to the bytes they stand for (as latin-1
    characters); any other character below 256 goes to one above, so that the entry is refused."""
    table = {c: "\uffff" for c in range(256)}
    table.update({ord(c): chr(b) for c, b in byte_decoder().items()})
    return table


def from_byte_level(piece: str) -> bytes | None:
    """The bytes a byte-level vocabulary entry stands for ('Ġking' is b' king'); None when it is not one."""
    try:
        return piece.translate(_to_latin1()).encode("latin-1")
    except UnicodeEncodeError:
        return None


def to_byte_level(text: str) -> str:
    """Text as a byte-level vocabulary spells it: each UTF-8 byte one character (' king' is 'Ġking')."""
    encoder = _byte_encoder()
    return "".join(encoder[b] for b in text.encode("utf-8"))


@functools.cache
def _classes() -> tuple[str, str, frozenset[str]]:
    """The letters and numbers of the safe blocks as `re` classes, and the set of safe characters."""
    letters, numbers, safe = [], [], set()
    for lo, hi in _SAFE_BLOCKS:
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            category = unicodedata.category(ch)
            if category == "Cn":
                continue  # unassigned here, perhaps assigned in another Unicode version: not safe
            safe.add(ch)
            if category[0] == "L":
                letters.append(ch)
            elif category[0] == "N":
                numbers.append(ch)
    return "".join(map(re.escape, letters)), "".join(map(re.escape, numbers)), frozenset(safe)


@functools.cache
def _splitter() -> re.Pattern[str]:
    """GPT-2's pattern, with \\p{L}, \\p{N} and \\s spelled out for the safe characters (`re` has no \\p)."""
    letters, numbers, _ = _classes()
    return re.compile(
        rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{letters}]+| ?[{numbers}]+| ?[^{_WHITE}{letters}{numbers}]+"
        rf"|[{_WHITE}]+(?![^{_WHITE}])|[{_WHITE}]+"
    )


def table(tokenizer: dict[str, Any]) -> np.ndarray | None:
    """bpe.npy for a plain byte-level BPE tokenizer (its parsed tokenizer.json), else None (then the
    `tokenizers` library does all the encoding). Rows 0-255: column 0 holds the id of byte b's character;
    then one row per merge in rank order: left id, right id, merged id."""
    import numpy as np

    model, pre = tokenizer.get("model") or {}, tokenizer.get("pre_tokenizer") or {}
    vocab: dict[str, int] = model.get("vocab") or {}
    encoder = _byte_encoder()
    plain = (
        all(tokenizer.get(k) is None for k in ("normalizer", "truncation", "padding"))
        and pre.get("type") == "ByteLevel"
        and pre.get("add_prefix_space") is False
        and pre.get("use_regex", True) is True
        and model.get("type") == "BPE"
        and not any(model.get(k) for k in ("dropout", "continuing_subword_prefix", "end_of_word_suffix"))
        and not any(model.get(k) for k in ("byte_fallback", "ignore_merges"))
        and all(encoder[b] in vocab for b in range(256))
    )
    if not plain:
        return None
    rows = [(vocab[encoder[b]], -1, -1) for b in range(256)]
    for merge in model.get("merges", []):
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        ids = vocab.get(left), vocab.get(right), vocab.get(left + right)
        if ids[0] is None or ids[1] is None or ids[2] is None:
            return None
        rows.append((ids[0], ids[1], ids[2]))
    merges = np.array(rows[256:], dtype=np.int64).reshape(-1, 3)
    keys = merges[:, 0] * (max(vocab.values()) + 1) + merges[:, 1]
    if len(np.unique(keys)) < len(keys) or len(np.unique(merges[:, 2])) < len(keys):
        return None  # a pair merged twice, or a token made twice: the library's choice is not ours to guess
    return np.array(rows, dtype=np.int32)


class Bpe:
    """Encode texts with a `table`; `added` are the texts of the tokenizer's added tokens."""

    def __init__(self, rows: np.ndarray, added: list[str]) -> None:
        self._byte_ids = {c: int(rows[b, 0]) for b, c in _byte_encoder().items()}
        self._merges = rows[256:]
        self._added = added
        self._n = int(rows.max(initial=0)) + 1  # past every id: left * n + right is one key per pair
        self._known: dict[tuple[int, int], tuple[int, int] | None] = {}

    @functools.cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        keys = self._merges[:, 0].astype(np.int64) * self._n + self._merges[:, 1]
        order = np.argsort(keys)
        return keys[order], order

    def _rank(self, left: int, right: int) -> tuple[int, int] | None:
        """(rank, merged id) of the merge that joins a pair, or None."""
        pair = (left, right)
        if pair not in self._known:
            keys, order = self._sorted
            key = left * self._n + right
            i = int(keys.searchsorted(key))
            found = i < len(keys) and keys[i] == key
            rank = int(order[i]) if found else -1
            self._known[pair] = (rank, int(self._merges[rank, 2])) if found else None
        return self._known[pair]

    def encode(self, text: str) -> tuple[int, ...] | None:
        """The ids of text, or None when this module cannot vouch for them (see the module's comment)."""
        if not set(text) <= _classes()[2] or any(a in text for a in self._added):
            return None
        ids: list[int] = []
        for word in _splitter().findall(text):
            ids.extend(self._word(to_byte_level(word)))
        return tuple(ids)

    def _word(self, chars: str) -> list[int]:
        """BPE as the tokenizers library runs it: the lowest-ranked pair first, the leftmost of equals."""
        symbols = [self._byte_ids[c] for c in chars]
        while len(symbols) > 1:
            best: tuple[int, int, int] | None = None
            for i in range(len(symbols) - 1):
                found = self._rank(symbols[i], symbols[i + 1])
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], i, found[1])
            if best is None:
                break
            _, i, merged = best
            symbols[i : i + 2] = [merged]
        return symbols


def agrees(rows: np.ndarray, tokenizer: Any, added: list[str]) -> bool:
    """Whether Bpe and the `tokenizers` library give the same ids for a sample text (checked at build)."""
    ours = Bpe(rows, added).encode(_SAMPLE)
    return ours is not None and list(ours) == tokenizer.encode(_SAMPLE, add_special_tokens=False).ids
