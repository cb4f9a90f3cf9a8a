"""What the views of neighbors and analogy share: the line naming the candidates ranked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text

from gpt2emb.errors import option

if TYPE_CHECKING:  # a result holds one only where candidates were narrowed (candidates.py builds it)
    from gpt2emb.results.candidates import Candidates


def candidates_line(c: Candidates | None) -> list[RenderableType]:
    """The line that says which tokens were ranked, when not all."""
    if c is None:
        return []
    chosen = [option("among", c.among) if c.among is not None else ""]
    chosen += [option("restrict", c.restrict) if c.restrict is not None else ""]
    chosen += [option("whole_words", True) if c.whole_words else ""]
    return [
        Text(
            f"candidates: {c.count:,} token{'s' if c.count != 1 else ''} ({', '.join(filter(None, chosen))})"
        )
    ]
