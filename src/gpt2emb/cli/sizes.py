"""The sizes command (parameter counts, of GPT-2's sizes or any model's headers) and models (the registry)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import DType
from gpt2emb.cli.options import Figure, Json, Revision, complete_model, figure_of
from gpt2emb.errors import BadModel, UsageError

app = typer.Typer()


@app.command(
    epilog="Examples:\n\n  gpt2emb sizes\n\n  gpt2emb sizes --dtype fp16\n\n  "
    "gpt2emb sizes --verify --json\n\n  gpt2emb sizes -m roberta-base -m gpt2"
)
def sizes(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "-m",
            "--model",
            help="Count this model's parameters exactly from its checkpoint headers (no weights read): "
            "a registry name, a Hub repo id or a folder; give it more than once for columns side by side.",
            autocompletion=complete_model,
            show_default=False,
        ),
    ] = None,
    dtype: Annotated[
        DType, typer.Option("--dtype", help="Byte size used for the megabytes rows.")
    ] = DType.fp32,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Check every figure against the checkpoint headers "
            "on the Hub (about 100 KB each, no weights).",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
    figure: Figure = None,
) -> None:
    """Vocabulary, width, layers and parameter counts of the four GPT-2 sizes, and wte's share of them.

    With -m, any model's: its parameters counted from its checkpoint headers, the token table's share."""
    from gpt2emb.core import sizes as sizes_module

    figure = figure_of(figure, models=len(model or []))
    if model:
        if verify:
            raise UsageError(
                "--verify checks the four GPT-2 sizes' formula; -m counts from the headers already"
            )
        from gpt2emb import registry

        names = registry.distinct_models(model, revision, output.reporter(json))
        output.render(sizes_module.of_models(names, dtype.value, revision, figure), json)
        return
    if revision is not None:
        raise UsageError("--revision is for a model given with -m")
    result = sizes_module.sizes(dtype.value, verify, figure)
    output.render(result, json)
    if any(m.verified is False for m in result.models):
        raise BadModel("a figure disagrees with the checkpoint on the Hub (see the table)")


@app.command(epilog="Examples:\n\n  gpt2emb models\n\n  gpt2emb models --json")
def models(json: Json = False) -> None:
    """The named models (GPT-2's four sizes and others): family, aliases, shapes, and which are cached."""
    from gpt2emb.core import sizes as core

    output.render(core.models(), json)
