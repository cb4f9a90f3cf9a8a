"""The logits command: the model's scores of the next token (--layers: the logit lens; --figure: its grid)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Through
from gpt2emb.cli import stdin
from gpt2emb.cli.options import Command, Figure, Json, Model, Revision, Top, figure_of, whole
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    cls=Command,
    epilog='Examples:\n\n  gpt2emb logits "The cat sat on the"\n\n  gpt2emb logits The cat sat on the '
    '--layers\n\n  gpt2emb logits "The cat sat on the mat" --at 3 -k 5 --json\n\n'
    '  gpt2emb logits "The cat sat on the" -m EleutherAI/pythia-70m --through wte\n\n'
    '  gpt2emb logits "The cat sat on the mat" --figure lens.png\n\n'
    '  gpt2emb logits "Paris is the <mask> of France." -m roberta --layers',
)
def logits(
    words: Annotated[
        list[str],
        typer.Argument(
            help="The text, given to the model's tokenizer as it is (no space put in front), as the model is "
            "used: with a BOS token where its tokenizer adds one (a masked model: <s> … </s> or [CLS] … "
            "[SEP]). For RoBERTa, BERT and DistilBERT it holds the mask, as the tokenizer writes it: <mask> "
            "(RoBERTa) or [MASK] (BERT, DistilBERT); several masks are scored each in turn. Its words may "
            "come unquoted: they are joined by single spaces. - alone reads it from stdin.",
            metavar="TEXT",
            show_default=False,
        ),
    ],
    model: Model = DEFAULT_MODEL,
    top: Top = 10,
    at: Annotated[
        int | None,
        typer.Option(
            "--at",
            help="Score the token after position N instead of after the last: N counts the text's own tokens "
            "from 0, as gpt2emb input shows them, whatever the model puts in front. For a masked model "
            "(RoBERTa, BERT, DistilBERT), position N itself is scored instead of the masks.",
            parser=whole(0),
            metavar="N",
            show_default=False,
        ),
    ] = None,
    through: Annotated[
        Through | None,
        typer.Option(
            "--through",
            help="Also score with wte: for an untied model, the two top-k lists side by side and their "
            "overlap (what tying would have given); a tied one (a masked model's decoder is wte) shows one.",
            show_default=False,
        ),
    ] = None,
    layers: Annotated[
        bool,
        typer.Option(
            "--layers",
            help="The logit lens: every layer's hidden state at the position, through the final layer norm "
            "and the output table (a masked model: through its head, with no final norm): its top 5, and "
            "where the last layer's top token stands.",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
    figure: Figure = None,
) -> None:
    """The model's scores for the token after TEXT: logits = h_final · W_eᵀ, the output layer at work.

    gpt2emb computes them from the last hidden state and the output table it read (wte for a tied model, lm_head for an untied one), and says which table scored. For a masked language model (RoBERTa, BERT, DistilBERT), the scores of the masked token in TEXT, through the model's own head (dense, activation, layer norm, the decoder tied to wte and its bias), read from the checkpoint's tensors; a checkpoint saved without that head is refused. It runs the whole model with transformers: the first use fetches all of its weights."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb import batch
    from gpt2emb.core import logits as core

    text = " ".join(words)
    if text == "-":
        text = batch.text(batch.chunks(stdin.descriptor("the text")))
    figure = figure_of(figure)
    result = core.logits(text, model, top, at, through, layers, output.reporter(json), revision, figure)
    output.render(result, json)
