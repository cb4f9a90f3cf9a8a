"""The candidates an answer was chosen from (--among, --restrict, --whole-words): part of neighbors' and
analogy's results.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document


@dataclass(frozen=True)
class Candidates(Document):
    """The tokens an answer was chosen from, when --among, --restrict or --whole-words narrow them."""

    count: int  # candidate tokens
    among: str | None  # the --among file
    restrict: int | None  # --restrict N: token ids 0 to N - 1
    whole_words: bool
    split: tuple[str, ...]  # words of the --among file left out: not one token, so not rankable as one
