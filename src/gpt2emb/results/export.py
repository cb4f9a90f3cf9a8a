"""Results of export.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document


@dataclass(frozen=True)
class ExportedFile(Document):
    path: str
    bytes: int


@dataclass(frozen=True)
class ExportResult(Document):
    """`export`: which rows of which table went to which files."""

    model: str
    format: str  # word2vec, word2vec-binary or projector
    table: str  # wte or wpe
    path: str  # -o as given: the file, or the projector's folder
    rows: int
    dims: int
    files: tuple[ExportedFile, ...]  # each file written
    bytes: int  # their sizes together
    whole_words: bool
    limit: int | None
    notes: tuple[str, ...]  # e.g. rows keyed by id
