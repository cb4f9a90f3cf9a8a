"""The view of lab: the five parts under numbered headings, each part shown by its own command's view."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.views import DIMS, view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.lab import LabResult


@view.register
def _(result: LabResult, dims: int | None) -> RenderableType:
    item = result.vector.items[0]
    word = item.word if item.word.strip() == item.word and item.word.isprintable() else tok(item.word)
    kept, left_out = result.analogy_kept, result.analogy
    sizes = (
        f"{result.sizes.models[0].name}'s size and wte's share of it"
        if result.sizes.source == "checkpoint"
        else "The four GPT-2 sizes and wte's share of each"
    )
    parts: list[tuple[str, list[RenderableType]]] = [
        (f"The first {DIMS} numbers of {word}'s row of wte", [view(result.vector, DIMS)]),
        (
            f"The {len(result.neighbors.items[0].neighbors):,} nearest tokens to {word}",
            [view(result.neighbors, None)],
        ),
        (
            f"{kept.expression}: the inputs kept, then left out",
            [view(kept, None), Text(""), view(left_out, None)],
        ),
        (sizes, [view(result.sizes, None)]),
        ("The tying check: does the output layer reuse wte?", [view(result.tying, None)]),
    ]
    shown: list[RenderableType] = []
    for n, (heading, views) in enumerate(parts, 1):
        if n > 1:
            shown.append(Text(""))
        shown += [Text(f"{n}. {heading}", style="bold underline"), Text(""), *views]
    return Group(*shown)
