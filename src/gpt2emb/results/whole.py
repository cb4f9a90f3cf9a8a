"""The records of a text as a whole model receives it (input and context, tying --grad): its tokens with their
positions. Not in common.py: a warm word command does not build them."""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document


@dataclass(frozen=True)
class SentenceToken(Document):
    """A token of a text as the model receives it."""

    position: int
    id: int
    token: str
