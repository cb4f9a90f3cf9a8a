"""Results of the benchmark evaluations (analogy --eval, similarity --eval).

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document
from gpt2emb.results.compare import Side

KEYS = "keys"  # a result's rule on a static word table: its words are its keys, read whole and as written


@dataclass(frozen=True)
class SectionScore(Document):
    section: str
    correct: int
    incorrect: int
    skipped: int  # questions with a word that is not one token under the rule (a static table's: not a key)
    accuracy: float | None  # correct / (correct + incorrect); None when nothing was answered


@dataclass(frozen=True)
class WrongAnswer(Document):
    section: str
    question: tuple[str, str, str]
    expected: str
    predicted: str | None


@dataclass(frozen=True)
class AnalogyEvalResult(Document):
    model: str
    file: str
    method: str
    rule: str  # --rule (space, bare), or "keys" on a static word table: its words are its keys
    ignore_case: bool
    sections: tuple[SectionScore, ...]
    total: SectionScore
    coverage: float  # answered / all questions
    seconds: float
    errors: tuple[WrongAnswer, ...]  # only with --errors
    restrict: int | None = None  # --restrict N: only words of token ids 0 to N - 1 (gensim's restrict_vocab)


@dataclass(frozen=True)
class PairsEvalResult(Document):
    model: str
    file: str
    rule: str  # --rule (space, bare), or "keys" on a static word table: its words are its keys
    ignore_case: bool
    pairs: int
    used: int
    skipped: int
    oov_ratio: float  # percent of pairs skipped, as gensim reports it
    pearson: float | None  # None (null) when undefined; notes say why
    spearman: float | None
    notes: tuple[str, ...] = ()
    unreadable: int = 0  # lines of the file that hold no pair (a score that is not a finite number: abc, nan)


@dataclass(frozen=True)
class EvalSideBySide(Document):
    """A benchmark file scored in several models under the same options, each on the questions (or pairs)
    that every model scored can answer: the numbers of one model stand beside another's on the same
    questions."""

    models: tuple[str, ...]
    file: str
    asked: int  # questions (analogy) or pairs (similarity) the file holds
    common: int  # those every scored model can answer: each result scores these alone, the rest skipped
    answerable: tuple[int, ...]  # in the order of models, how many each could answer on its own
    # in the order of models; None (null) for a model that can answer none (similarity: fewer than two)
    results: tuple[AnalogyEvalResult | None, ...] | tuple[PairsEvalResult | None, ...]
    sides: tuple[Side, ...]  # which model is static; a model left out, and why
