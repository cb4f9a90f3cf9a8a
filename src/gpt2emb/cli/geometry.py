"""The geometry command: wte and wpe measured (norms, cosines, principal components, content vs position)."""

from __future__ import annotations

import typer

from gpt2emb import output
from gpt2emb.cli.options import Encoding, Figure, Json, Model, Revision, figure_of
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    epilog="Examples:\n\n  gpt2emb geometry\n\n  gpt2emb geometry -m xl\n\n"
    "  gpt2emb geometry --json | jq .wte_vs_wpe"
)
def geometry(
    model: Model = DEFAULT_MODEL,
    revision: Revision = None,
    json: Json = False,
    figure: Figure = None,
    encoding: Encoding = None,
) -> None:
    """wte and wpe measured: norms, mean cosine, principal components, and content against position.

    Content against position: the |cosine| of every wte row with every wpe row, next to what random directions in the same dimension give."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb.core import geometry as core

    figure = figure_of(figure)
    output.render(core.geometry(model, output.reporter(json), revision, figure, encoding), json)
