"""The export command: a table's rows for word2vec tools, gensim or the Embedding Projector."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Format, Table
from gpt2emb.cli.options import Encoding, Json, Model, Revision, whole
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    epilog="Examples:\n\n  gpt2emb export --format word2vec -o gpt2.txt\n\n"
    "  gpt2emb export -m xl --format word2vec-binary -o gpt2-xl.bin\n\n"
    "  gpt2emb export --format projector --whole-words --limit 10000 -o projector/\n\n"
    "  gpt2emb export --format projector --table wpe -o positions/"
)
def export(
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            help="word2vec (text: a 'rows dims' line, then 'key v1 v2 ...' per row), word2vec-binary (the "
            "same with float32 bytes) or projector (a folder holding the Embedding Projector's vectors.tsv "
            "and metadata.tsv).",
            metavar="FORMAT",
            show_default=False,
        ),
    ],
    out: Annotated[
        str,
        typer.Option(
            "-o",
            "--output",
            help="The file to write (word2vec), or the folder (projector, made if need be).",
            metavar="PATH",
            show_default=False,
        ),
    ],
    model: Model = DEFAULT_MODEL,
    table: Annotated[
        Table, typer.Option("--table", help="wte: a row per token; wpe: a row per position (keys pos0, ...).")
    ] = Table.wte,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            help="Keep only the first N rows.",
            parser=whole(1),
            metavar="N [x>=1]",
            show_default=False,
        ),
    ] = None,
    whole_words: Annotated[
        bool,
        typer.Option(
            "--whole-words",
            help="Only tokens that start a word (shown with a leading space) and hold whole characters; "
            "applied before --limit.",
        ),
    ] = False,
    revision: Revision = None,
    encoding: Encoding = None,
    json: Json = False,
) -> None:
    """Write a table's rows, in token-id order, for gensim, word2vec tools or the Embedding Projector.

    word2vec keys are the tokenizer's own entries (Ġking); the values read back exactly as stored."""
    from gpt2emb.core import export as core

    result = core.export(
        model, fmt, out, table, limit, whole_words, output.reporter(json), revision, encoding
    )
    output.render(result, json)
