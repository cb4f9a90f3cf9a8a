"""The result of lab: each part the result of its own command, so each key's document is that command's.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.common import Document
from gpt2emb.results.neighbors import NeighborsResult
from gpt2emb.results.sizes import SizesResult
from gpt2emb.results.tying import TyingResult
from gpt2emb.results.vector import VectorResult


@dataclass(frozen=True)
class LabResult(Document):
    vector: VectorResult  # part 1: `vector WORD`
    neighbors: NeighborsResult  # part 2: `neighbors WORD -k 10`
    analogy_kept: AnalogyResult  # part 3: `analogy king man woman --keep-inputs`
    analogy: AnalogyResult  # part 3, then: `analogy king man woman`
    sizes: SizesResult  # part 4: `sizes`, or `sizes -m MODEL` when a model is given
    tying: TyingResult  # part 5: `tying`, or `tying --load`

    def to_dict(self) -> dict[str, Any]:
        """Each part's own document, as its command prints it: its notes (a value that is not a finite
        number, shown as null) in the part that holds it, not gathered at the top."""
        return {f.name: getattr(self, f.name).to_dict() for f in fields(self)}


@dataclass(frozen=True)
class LabPage:
    """lab --html's page: the lab's result, where its model came from, and each part's figure as --figure
    draws it for that part's command (SVG text; None for tying, which has none). No JSON document."""

    lab: LabResult
    source: str  # the model as given to -m, or the default's name
    repo: str | None  # the Hub repo; None for a folder
    revision: str | None  # the branch, tag or commit asked for; None for a folder
    commit: str  # the commit the tables were read from (a folder: its files' fingerprint)
    figures: tuple[str | None, ...]  # by part, 1 to 5
