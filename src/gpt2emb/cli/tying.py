"""The tying command: whether the output layer reuses wte (--load, --grad, --compare)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.cli.options import Json, Model, Revision
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    epilog="Examples:\n\n  gpt2emb tying\n\n  gpt2emb tying -m xl --json\n\n  gpt2emb tying --load\n\n"
    '  gpt2emb tying --grad "The cat sat on the mat"\n\n  gpt2emb tying -m EleutherAI/pythia-70m --compare'
)
def tying(
    model: Model = DEFAULT_MODEL,
    load: Annotated[
        bool,
        typer.Option(
            "--load", help="Also load the real model and compare data_ptr() (downloads all weights)."
        ),
    ] = False,
    grad: Annotated[
        str | None,
        typer.Option(
            "--grad",
            help="Exercise 4: one forward and backward pass of the language-model loss on TEXT, with the "
            "gradient reaching wte by the input lookup and by the output layer shown apart (downloads all "
            "weights).",
            metavar="TEXT",
            show_default=False,
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="For an untied model: fetch its output layer's rows (all up to 1 GB, else a seeded sample "
            "of 4,096) and compare each with its row of wte and with a random other row.",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """Whether the output layer reuses wte: config, a model on the meta device, the header."""
    from gpt2emb.core import tying as core

    result = core.tying(model, load, revision, grad, output.reporter(json), compare)
    output.render(result, json)
