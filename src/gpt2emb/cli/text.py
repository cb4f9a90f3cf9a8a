"""The text commands: input (a text's real input, h0) and context (static against contextual vectors)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Pool
from gpt2emb.cli import stdin
from gpt2emb.cli.options import Command, Figure, Json, Model, PoolOpt, Revision, figure_of
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    "input",
    cls=Command,
    epilog='Examples:\n\n  gpt2emb input O Brasil é gigante\n\n  gpt2emb input "The cat sat on the mat" '
    '--json\n\n  gpt2emb input "Hello world" --full --json\n\n'
    "  gpt2emb input - --truncate < chapter.txt",
)
def input_(
    words: Annotated[
        list[str],
        typer.Argument(
            help="The text, given to the model's tokenizer as it is (a word looked up gets a space put in "
            "front; a text does not). Its words may come unquoted: they are joined by single spaces, as echo "
            "joins them (quote the text to keep other spacing, or a word that starts with a dash, which "
            "would be read as an option). - alone reads it from stdin.",
            metavar="TEXT",
            show_default=False,
        ),
    ],
    model: Model = DEFAULT_MODEL,
    full: Annotated[
        bool, typer.Option("--full", help='Show every number of h0 (in the JSON: "h0").')
    ] = False,
    truncate: Annotated[
        bool,
        typer.Option(
            "--truncate",
            help="Keep as many tokens as the model has positions (GPT-2: the first 1024) of a longer text.",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """The model's real input for a text: its tokens, and h0 = wte\\[ids] + wpe\\[0..n-1] with its norms.

    And the cosine of each token's wte row with its position's wpe row.

    A text longer than the model's positions cannot go in (GPT-2: position 1024 does not exist)."""
    from gpt2emb import batch
    from gpt2emb.core import text as core

    text = " ".join(words)
    if text == "-":
        text = batch.text(batch.chunks(stdin.descriptor("the text")))
    output.render(core.model_input(model, text, full, truncate, output.reporter(json), revision), json)


@app.command(
    cls=Command,
    epilog='Examples:\n\n  gpt2emb context bank "I sat on the river bank" "I paid at the bank"\n\n'
    '  gpt2emb context banco "Sentei no banco da praça" "Fui ao banco pagar a conta"\n\n'
    '  gpt2emb context bank "the river bank" "the bank manager" -m medium --json',
)
def context(
    word: Annotated[
        str,
        typer.Argument(
            help="The word, as inside running text: bank is the token ' bank'.",
            metavar="WORD",
            show_default=False,
        ),
    ],
    sentences: Annotated[
        list[str],
        typer.Argument(
            help="Two or more sentences that hold the word, each quoted: one argument a sentence.",
            metavar="SENTENCE",
            show_default=False,
        ),
    ],
    model: Model = DEFAULT_MODEL,
    pool: PoolOpt = Pool.mean,
    revision: Revision = None,
    json: Json = False,
    figure: Figure = None,
) -> None:
    """Static against contextual: WORD's vector in each SENTENCE, layer by layer, against its wte row.

    At every layer, from h0 (wte + wpe) to the last hidden state, WORD's vectors are compared between sentences and with WORD's row of wte. It runs the whole model with transformers: the first use fetches all of its weights."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb.core import text as core

    figure = figure_of(figure)
    output.render(core.context(word, sentences, model, pool, output.reporter(json), revision, figure), json)
