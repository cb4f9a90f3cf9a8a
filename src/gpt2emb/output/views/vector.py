"""The view of vector: each word's row, its first numbers and its statistics."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.errors import spelt
from gpt2emb.output.layout import note_lines, num, signed_cell, split, titled_table
from gpt2emb.output.views import view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.vector import VectorResult


@view.register
def _(result: VectorResult, dims: int | None) -> RenderableType:
    parts: list[RenderableType] = []
    for item in result.items:
        stats = [num(getattr(item, f)) for f in ("norm", "mean", "std", "min", "max")]
        shown = item.vector if dims is None else item.vector[:dims]
        more = len(item.vector) - len(shown)
        numbers = f"[{', '.join(map(signed_cell, shown))}]" + (
            f"  ... ({more:,} more{spelt('; --full', ' in .vector')})" if more else ""
        )
        parts += note_lines([item.note])
        plain = item.word.strip() == item.word and item.word.isprintable()  # else quoted: --exact " "
        title = f"{item.word if plain else tok(item.word)} in {result.model}: {split(item.tokens)}"
        parts += [
            titled_table(title, "norm> mean> std> min> max> dims>", [[*stats, f"{len(item.vector):,}"]]),
            Text(numbers),
        ]
        parts.append(Text(""))
    return Group(*parts)
