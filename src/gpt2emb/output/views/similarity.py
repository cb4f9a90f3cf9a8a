"""The view of similarity: the matrix of cosines (or, when too wide, each word's norm)."""

from __future__ import annotations

from rich.console import Group, RenderableType

from gpt2emb.output.layout import Matrix, cosine_cell, note_lines, num, split, titled_table
from gpt2emb.output.views import view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.similarity import SimilarityResult


@view.register
def _(result: SimilarityResult, dims: int | None) -> RenderableType:
    norms = [[split(i.tokens), num(n)] for i, n in zip(result.items, result.norms, strict=True)]
    unit = "key" if result.static else "token"  # a static word table's rows are its keys
    matrix = Matrix(
        f"cosine similarity in {result.model}",
        [unit],
        [[split(i.tokens)] for i in result.items],
        [tok("".join(t.token for t in i.tokens)) + ">" for i in result.items],  # the text its tokens spell
        result.matrix,
        cosine_cell,
        instead=titled_table(f"norms of the words' vectors in {result.model}", f"{unit} norm>", norms),
    )
    return Group(*note_lines([i.note for i in result.items]), matrix)
