"""Benchmark evaluation over word files: analogies (word2vec's questions-words format) and word-pair
similarity (WordSim-353 style), batched in numpy and counted the way gensim's evaluate_word_* functions count.

Words become tokens by a rule: `space` (the word as it appears in running text, " king") or `bare` ("king").
The candidate answers are the tokens of that rule, each known by its word; `ignore_case` folds words to upper
case as gensim does by default (the lowest token id stands for all the spellings of a word).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpt2emb.choices import Method, Rule
from gpt2emb.errors import UsageError

BATCH = 512  # questions per matrix product: 512 x 50257 scores is 100 MB of float32


@dataclass(frozen=True)
class Words:
    """The word vocabulary of a rule: word i is token ids[i]; `group` folds spellings when ignoring case."""

    words: list[str]
    ids: np.ndarray
    lookup: dict[str, int]  # (folded) word -> index of its representative in `words`
    group: np.ndarray  # index -> index of its representative
    members: dict[int, list[int]]  # representative -> every spelling, for words spelt more than one way

    @staticmethod
    def build(pieces: list[str], display: list[str], rule: Rule, ignore_case: bool) -> Words:
        words, ids = [], []
        seen: set[str] = set()
        for token_id, text in enumerate(display):
            if not pieces[token_id]:
                continue
            word = text if rule is Rule.bare else (text[1:] if text.startswith(" ") else "")
            if word and not any(ch.isspace() for ch in word) and word not in seen:
                seen.add(word)
                words.append(word)
                ids.append(token_id)
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
        return Words(
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
        if len(parts) == 4:
            sections[-1].questions.append((parts[0], parts[1], parts[2], parts[3]))
    if not any(s.questions for s in sections):
        raise UsageError(f"{path} holds no analogy questions (': section' lines, then 'a b c d' lines)")
    return sections


def read_pairs(path: Path, delimiter: str = "\t") -> list[tuple[str, str, float]]:
    pairs = []
    for raw in _lines(path):
        if not raw or raw.startswith("#"):
            continue
        parts = raw.rstrip("\n").split(delimiter)
        if len(parts) == 3:
            try:
                pairs.append((parts[0], parts[1], float(parts[2])))
            except ValueError:
                continue
    if not pairs:
        raise UsageError(f"{path} holds no word pairs (lines 'word<TAB>word<TAB>score')")
    return pairs


def _lines(path: Path) -> list[str]:
    shown = str(path) if str(path).isprintable() else repr(str(path))
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as e:
        raise UsageError(f"cannot read {shown}: {e.strerror}") from None
    except ValueError:  # a NUL in the name: no file can have it
        raise UsageError(f"cannot read {shown}: a file name cannot hold a NUL character") from None


def analogy_answers(
    raw: np.ndarray, vocab: Words, abc: np.ndarray, method: Method, ignore_case: bool
) -> np.ndarray:
    """For each question (rows of indices a, b, c into the word vocabulary) the index of the predicted word.

    As gensim: b - a + c, the inputs themselves excluded, and the answer is the first of the best five whose
    word is not (case-folded) one of the inputs; -1 where all five are. `raw` holds the words' rows.
    """
    norms = np.maximum(np.linalg.norm(raw, axis=1), 1e-30)
    unit = raw / norms[:, None]
    inputs_from = raw if method is Method.add else unit  # add: the lab's arithmetic on the raw rows
    answers = np.empty(len(abc), dtype=np.int64)
    for start in range(0, len(abc), BATCH):
        batch = abc[start : start + BATCH]
        a, b, c = (inputs_from[batch[:, i]] for i in range(3))
        if method is Method.cosmul:
            scores = b @ unit.T
            scores += 1
            scores /= 2
            for v, op in ((c, np.multiply), (a, np.divide)):
                other = v @ unit.T
                other += 1
                other /= 2
                if op is np.divide:
                    other += 1e-6
                op(scores, other, out=scores)
        else:
            # the cosine would divide each row by |b - a + c|: one positive number per question, which
            # changes no ranking within the row, so it is left out
            scores = (b - a + c) @ unit.T
        rows = np.arange(len(batch))
        scores[rows[:, None], batch] = -np.inf
        # other spellings of the inputs are not answers: mask them too, but remember how many beat the answer
        others = [vocab.spellings(q) for q in batch] if ignore_case else []
        beaten = [scores[i, o].copy() for i, o in enumerate(others)]
        for i, o in enumerate(others):
            scores[i, o] = -np.inf
        best = scores.argmax(axis=1)
        for i, o in enumerate(beaten):
            if (o > scores[i, best[i]]).sum() >= 5:  # gensim looks at the best five only
                best[i] = -1
        answers[start : start + BATCH] = best
    return answers


def spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    return pearson(_ranks(x), _ranks(y))


def constant(x: np.ndarray) -> bool:
    """One value repeated: no correlation with it is defined."""
    return bool(np.ptp(np.asarray(x, dtype=np.float64)) == 0)


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """None when undefined: one of the two lists holds a single value repeated."""
    if constant(x) or constant(y):
        return None  # the mean taken away in floating point may leave a tiny non-zero spread: not a value
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    x, y = x - x.mean(), y - y.mean()
    denom = float(np.sqrt((x * x).sum() * (y * y).sum()))
    return float((x * y).sum() / denom) if denom > 0 else None


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their average rank."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    edges = np.flatnonzero(np.r_[True, x[order][1:] != x[order][:-1], True])
    ranked = np.repeat((edges[:-1] + edges[1:] + 1) / 2, np.diff(edges))
    ranks = np.empty(len(x))
    ranks[order] = ranked
    return ranks
