"""The views of analogy: the answers and where the inputs rank; a stream's answers one after another."""

from __future__ import annotations

from rich.console import Group, RenderableType

from gpt2emb.output.layout import note_lines, num, titled_table
from gpt2emb.output.views import view
from gpt2emb.output.views.words import candidates_line
from gpt2emb.quoting import quote as tok
from gpt2emb.results.analogy import AnalogyBatch, AnalogyResult


@view.register
def _(result: AnalogyBatch, dims: int | None) -> RenderableType:
    return Group(*(view(item, dims) for item in result.items))


@view.register
def _(result: AnalogyResult, dims: int | None) -> RenderableType:
    kept = "inputs kept, marked *" if result.keep_inputs else "inputs left out"
    score = "score" if result.method == "3cosmul" else "cosine"
    rows = [
        [str(r.rank), tok(r.token) + (" *" if r.input else ""), str(r.id), num(r.score)]
        for r in result.results
    ]
    inputs = [[i.word, tok(i.token), str(i.id), str(i.rank), num(i.score)] for i in result.inputs]
    unit = "key" if result.static else "token"  # a static word table's rows are its keys
    among = f"all {unit}s" if result.candidates is None else "the candidates"
    return Group(
        *candidates_line(result.candidates),
        *note_lines(list(result.notes)),
        titled_table(
            f"{result.expression} in {result.model} ({result.method}, {kept})",
            f"rank> {unit} id> {score}>",
            rows,
        ),
        titled_table(f"where the inputs rank (among {among})", f"word {unit} id> rank> {score}>", inputs),
    )
