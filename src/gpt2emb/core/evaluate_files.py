"""Benchmark files read for the evaluations: analogies (word2vec's questions-words format) and word pairs
(WordSim-353 style), each as a stream, refused past limits.MAX_LINE or limits.MAX_FILE; and the words a rule
makes candidates.

Words become tokens by a rule: `space` (the word as it appears in running text, " king") or `bare` ("king").
A static word table's words are its keys, whole and as written, whatever the rule (gensim's own reading).
The candidate answers are the tokens of that rule, each known by its word; `ignore_case` folds words to upper
case as gensim does by default (the lowest token id stands for all the spellings of a word).
"""

from __future__ import annotations

import math
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from gpt2emb import limits
from gpt2emb.choices import Rule
from gpt2emb.errors import UsageError


@dataclass(frozen=True)
class RuleWords:
    """The word vocabulary of a rule: word i is token ids[i]; `group` folds spellings when ignoring case."""

    words: list[str]
    ids: np.ndarray
    lookup: dict[str, int]  # (folded) word -> index of its representative in `words`
    group: np.ndarray  # index -> index of its representative
    members: dict[int, list[int]]  # representative -> every spelling, for words spelt more than one way

    @staticmethod
    def build(pieces: list[str], display: list[str], rule: Rule, ignore_case: bool) -> RuleWords:
        words, ids = [], []
        seen: set[str] = set()
        for token_id, text in enumerate(display):
            if not pieces[token_id]:
                continue
            word = text if rule is Rule.bare else (text[1:] if text.startswith(" ") else "")
            if word.split() == [word] and word not in seen:  # a word: not empty, no whitespace
                seen.add(word)
                words.append(word)
                ids.append(token_id)
        return RuleWords._indexed(words, ids, ignore_case)

    @staticmethod
    def of_keys(keys: list[str], ignore_case: bool) -> RuleWords:
        """A static word table's words: every key, whole and as written, in file order (gensim's
        index_to_key: every key is a candidate answer, whatever it holds)."""
        return RuleWords._indexed(keys, list(range(len(keys))), ignore_case)

    @staticmethod
    def _indexed(words: list[str], ids: list[int], ignore_case: bool) -> RuleWords:
        lookup: dict[str, int] = {}
        group = np.arange(len(words))
        for i, w in enumerate(words):
            key = w.upper() if ignore_case else w
            if key in lookup:
                group[i] = lookup[key]
            else:
                lookup[key] = i
        members: dict[int, list[int]] = {}
        for i, g in enumerate(group.tolist()):
            members.setdefault(g, []).append(i)
        return RuleWords(
            words,
            np.array(ids, dtype=np.int64),
            lookup,
            group,
            {g: m for g, m in members.items() if len(m) > 1},
        )

    def spellings(self, question: np.ndarray) -> list[int]:
        """Indices of the other spellings (same word, other case) of a question's words."""
        inputs = {int(i) for i in question}
        found: set[int] = set()
        for i in inputs:
            found.update(self.members.get(int(self.group[i]), ()))
        return sorted(found - inputs)

    def find(self, word: str, ignore_case: bool) -> int | None:
        return self.lookup.get(word.upper() if ignore_case else word)


@dataclass(frozen=True)
class Section:
    name: str
    questions: list[tuple[str, str, str, str]]


def read_analogies(path: Path) -> list[Section]:
    """`: section` lines, then `a b c d` lines (a is to b as c is to d); other lines skipped, as gensim."""
    sections: list[Section] = []
    for line_no, raw in enumerate(_lines(path), 1):
        if raw.startswith(": "):
            sections.append(Section(raw[2:].strip(), []))
            continue
        parts = raw.split()
        if not parts:
            continue
        if not sections:
            raise UsageError(f"{path}, line {line_no}: a question before any ': section' line")
        if len(parts) == 4:  # interned: a file repeats its few words, and one copy of each is held
            a, b, c, d = map(sys.intern, parts)
            sections[-1].questions.append((a, b, c, d))
    if not any(s.questions for s in sections):
        raise UsageError(f"{path} holds no analogy questions (': section' lines, then 'a b c d' lines)")
    return sections


@dataclass(frozen=True)
class Pairs:
    """A word-pair file as read: its pairs, and the lines that hold none (skipped, as gensim skips them)."""

    pairs: list[tuple[str, str, float]]
    unreadable: int
    first: str  # why the first unreadable line was skipped, naming it; "" when every line was read

    def note(self, path: Path) -> str:
        """What the unreadable lines were, naming the first; "" when there were none."""
        if not self.unreadable:
            return ""
        lines = "1 line" if self.unreadable == 1 else f"{self.unreadable:,} lines"
        verb = "was" if self.unreadable == 1 else "were"
        first = "the first is " if self.unreadable > 1 else ""
        return f"{lines} of {path} {verb} skipped, unreadable ({_PAIR_LINE}): {first}{self.first}"


_PAIR_LINE = "a pair is word<TAB>word<TAB>score, the score a finite number"


def read_pairs(path: Path, delimiter: str = "\t") -> Pairs:
    """Lines `word<TAB>word<TAB>score`; blank lines and # comments are none. A line of another shape, or whose
    score is not a finite number (abc, nan, inf, 1e999: no correlation can use it), is unreadable: skipped
    and counted, as gensim skips the lines float() refuses."""
    pairs = []
    unreadable, first = 0, ""
    for line_no, raw in enumerate(_lines(path), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = raw.split(delimiter)
        why = _unreadable(parts)
        if why:
            unreadable += 1
            first = first or f"line {line_no}, {_quoted(raw)}, {why}"
            continue
        pairs.append((sys.intern(parts[0]), sys.intern(parts[1]), float(parts[2])))
    if not pairs:
        lines = "1 line is" if unreadable == 1 else f"{unreadable:,} lines are"
        why = f": {lines} unreadable, the first {first}" if unreadable else ""
        raise UsageError(f"{path} holds no word pairs ({_PAIR_LINE}){why}")
    return Pairs(pairs, unreadable, first)


def _unreadable(parts: list[str]) -> str:
    """Why the fields of a line are no pair; "" when they are one."""
    if len(parts) != 3:
        return f"has {len(parts)} field{'s' if len(parts) > 1 else ''}, not 3"
    try:
        score = float(parts[2])
    except ValueError:
        return f"its score {_quoted(parts[2])} is not a number"
    return "" if math.isfinite(score) else f"its score {_quoted(parts[2])} is not a finite number"


def _quoted(text: str, room: int = 40) -> str:
    """A piece of a line as a message shows it: quoted, escapes visible, cut short past `room` characters."""
    return repr(text if len(text) <= room else text[:room] + "...")


_READ = 1 << 16  # bytes read at a time


def _lines(path: Path) -> Iterator[str]:
    """The lines of a benchmark file as str.splitlines gives them (UTF-8, a bad byte replaced), read a chunk
    at a time: an endless line or file (/dev/zero, a FIFO fed forever) is refused as soon as it passes
    limits.MAX_LINE or limits.MAX_FILE, never held in memory whole."""
    shown = str(path) if str(path).isprintable() else repr(str(path))
    try:
        file = path.open("rb")
    except OSError as e:
        raise UsageError(f"cannot read {shown}: {e.strerror}") from None
    except ValueError:  # a NUL in the name: no file can have it
        raise UsageError(f"cannot read {shown}: a file name cannot hold a NUL character") from None
    with file:
        try:
            yield from _split(file, shown)
        except OSError as e:
            raise UsageError(f"cannot read {shown}: {e.strerror}") from None


def _split(file: BinaryIO, shown: str) -> Iterator[str]:
    too_big = (
        f"{shown} is over {limits.size(limits.MAX_FILE)}: a benchmark file is far smaller; is this the file "
        "you meant?"
    )
    info = os.fstat(file.fileno())
    if stat.S_ISREG(info.st_mode) and info.st_size > limits.MAX_FILE:  # refused before a byte is read
        raise UsageError(too_big)
    step = min(_READ, limits.MAX_LINE)  # then a line begun and ended within one read is within the limit
    held = bytearray()  # the line begun and not yet ended: at most MAX_LINE bytes
    total = done = 0  # bytes read, lines given
    while chunk := file.read(step):
        total += len(chunk)
        if total > limits.MAX_FILE:  # a FIFO or a device: its size is known only by reading
            raise UsageError(too_big)
        first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
        if len(held) + (first if first >= 0 else len(chunk)) > limits.MAX_LINE:
            raise UsageError(
                f"{shown}, line {done + 1}: longer than {limits.size(limits.MAX_LINE)}; a benchmark line is "
                "a few words: is this the file you meant?"
            )
        if last < 0:
            held += chunk
            continue
        # cut after a newline, the text's splitlines is that of its parts: no line break spans a newline
        # (\r\n ends with it), and no UTF-8 character holds its byte
        lines = (bytes(held) + chunk[: last + 1]).decode("utf-8", errors="replace").splitlines()
        held = bytearray(chunk[last + 1 :])
        done += len(lines)
        yield from lines
    yield from held.decode("utf-8", errors="replace").splitlines()
