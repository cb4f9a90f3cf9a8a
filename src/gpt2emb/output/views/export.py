"""The view of export: the files written."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.layout import (
    note_lines,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.results.export import ExportResult


@view.register
def _(result: ExportResult, dims: int | None) -> RenderableType:
    chosen = ["whole words only"] if result.whole_words else []
    if result.limit is not None and result.limit <= result.rows:  # a limit past the rows left cut nothing
        chosen.append(f"the first {result.limit:,}")
    which = f" ({', '.join(chosen)})" if chosen else ""
    title = f"{result.table} of {result.model}: {result.rows:,} rows{which} of {result.dims:,} numbers"
    rows = [[f.path, f"{f.bytes:,}"] for f in result.files]
    parts: list[RenderableType] = [
        *note_lines(list(result.notes)),
        titled_table(f"{title}, as {result.format}", "file bytes>", rows),
    ]
    if result.format == "projector":
        parts.append(
            Text("to see them: https://projector.tensorflow.org, Load, then vectors.tsv and metadata.tsv")
        )
    return Group(*parts)
