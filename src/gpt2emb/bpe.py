"""GPT-2's byte-level BPE in plain Python: a text's ids without loading the `tokenizers` library.

Loading GPT-2's tokenizer.json costs 0.1-0.2 s, more than all the rest of a warm `input`. When a cache entry
is built, `table` checks that its tokenizer is a plain byte-level BPE (no normalizer, GPT-2's splitting
pattern, no dropout, prefixes or suffixes, each merge making its own token) and turns its merges into one
array, `bpe.npy`, read memory-mapped afterwards. `Bpe.encode` gives exactly the tokenizer's own ids, or
None: it answers only texts made of characters whose Unicode classes (letter, number, white space) every
Unicode version agrees on (the Latin, Greek, Cyrillic and Armenian blocks and general punctuation) and that
hold no added token (<|endoftext|>); for any other text the caller asks the `tokenizers` library. The build
checks both ways agree on a sample before it writes the file, and that BPE makes each one-word entry of its
own characters (makes_each); the tests compare them on every character this module accepts.
"""

from __future__ import annotations

import functools
import heapq
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
    if _repeats(keys) or _repeats(merges[:, 2]):
        return None  # a pair merged twice, or a token made twice: the library's choice is not ours to guess
    return np.array(rows, dtype=np.int32)


def _repeats(values: np.ndarray) -> bool:
    """Whether a value occurs twice: sorted neighbours compared (np.unique hashed 50,000 in 0.1 s)."""
    import numpy as np

    ordered = np.sort(values)
    return bool(np.any(ordered[1:] == ordered[:-1]))


class Bpe:
    """Encode texts with a `table`; `added` are the texts of the tokenizer's added tokens."""

    def __init__(self, rows: np.ndarray, added: list[str]) -> None:
        self._byte_ids = {c: int(rows[b, 0]) for b, c in _byte_encoder().items()}
        self._merges = rows[256:]
        self._added = added
        self._n = int(rows.max(initial=0)) + 1  # past every id: left * n + right is one key per pair
        self._known: dict[int, tuple[int, int] | None] = {}  # pair key -> (rank, merged id), None: no merge

    @functools.cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        keys = self._merges[:, 0].astype(np.int64) * self._n + self._merges[:, 1]
        order = np.argsort(keys)
        return keys[order], order

    def _rank(self, key: int) -> tuple[int, int] | None:
        """(rank, merged id) of the merge that joins the pair of key (left * n + right), or None; remembered
        in _known, where `word` looks first."""
        keys, order = self._sorted
        i = int(keys.searchsorted(key))
        if i < len(keys) and keys[i] == key:
            rank = int(order[i])
            found: tuple[int, int] | None = (rank, int(self._merges[rank, 2]))
        else:
            found = None
        self._known[key] = found
        return found

    def encode(self, text: str) -> tuple[int, ...] | None:
        """The ids of text, or None when this module cannot vouch for them (see the module's comment)."""
        if not set(text) <= _classes()[2] or any(a in text for a in self._added):
            return None
        ids: list[int] = []
        for word in _splitter().findall(text):
            ids.extend(self.word(to_byte_level(word)))
        return tuple(ids)

    def word(self, chars: str) -> list[int]:
        """The ids of one pre-token spelled byte-level (`to_byte_level`), merged as the tokenizers library
        merges them: the lowest-ranked pair first, the leftmost of equals, until no pair has a merge.

        Each merge costs O(log n), not a scan of the word (a scan made 10,000 letters take 47 s): the
        pieces form a linked list (nxt, prv) indexed by their first byte's position, and a heap holds one
        entry per adjacent pair that has a merge, its rank and position packed in one int (ints compare
        faster than tuples), so that it pops the lowest rank and, among equal ranks, the leftmost position:
        the library's own order (its word.rs does the same). A merge pushes the pairs it makes with its
        neighbours; entries it spoiled stay in the heap and are skipped when popped, as the library skips
        them: the piece at their position died (-1) or no longer forms the pair of their rank (`table`
        refuses a pair merged twice, so a rank names one pair). Overlapping runs come out as the library
        makes them: in "aaa" the pair at 0 pops before the one at 1, which is then stale: "aa a".
        """
        known, rank_of, n_ids = self._known, self._rank, self._n
        pieces = [self._byte_ids[c] for c in chars]
        n = len(pieces)
        shift = n.bit_length()  # an entry is rank << shift | position: ordered by rank, then position
        mask = (1 << shift) - 1
        heap: list[int] = []
        for i in range(n - 1):
            key = pieces[i] * n_ids + pieces[i + 1]
            found = known[key] if key in known else rank_of(key)
            if found is not None:
                heap.append(found[0] << shift | i)
        heap.sort()  # a sorted list is a heap, and sorting is cheaper than pushing one by one
        nxt = [*range(1, n), -1]
        prv = list(range(-1, n - 1))
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            entry = pop(heap)
            rank, i = entry >> shift, entry & mask
            left, j = pieces[i], nxt[i]
            if left < 0 or j < 0:
                continue  # merged into its left neighbour, or the last piece now
            found = known.get(left * n_ids + pieces[j])  # looked up when the pair formed
            if found is None or found[0] != rank:
                continue  # the pair at i changed since this entry was pushed
            merged = found[1]
            pieces[i], pieces[j] = merged, -1
            k = nxt[i] = nxt[j]
            if k >= 0:
                prv[k] = i
                key = merged * n_ids + pieces[k]
                found = known[key] if key in known else rank_of(key)
                if found is not None:
                    push(heap, found[0] << shift | i)
            h = prv[i]
            if h >= 0:
                key = pieces[h] * n_ids + merged
                found = known[key] if key in known else rank_of(key)
                if found is not None:
                    push(heap, found[0] << shift | h)
        return [p for p in pieces if p >= 0]


def makes_each(rows: np.ndarray, entries: dict[str, int]) -> bool:
    """Whether BPE makes each of these entries (piece -> id) of its own characters, as a trained vocabulary's
    merges make every entry they made. tokens.Vocab answers a one-word text with the entry that spells it,
    without encoding it, only for such a vocabulary: an entry no merge makes (added by hand: "Ġcatdog"
    without its merges) is not what the tokenizer makes of its text."""
    encoder = Bpe(rows, [])
    return all(encoder.word(piece) == [i] for piece, i in entries.items())


def agrees(rows: np.ndarray, tokenizer: Any, added: list[str]) -> bool:
    """Whether Bpe and the `tokenizers` library give the same ids for a sample text (checked at build)."""
    ours = Bpe(rows, added).encode(_SAMPLE)
    return ours is not None and list(ours) == tokenizer.encode(_SAMPLE, add_special_tokens=False).ids
