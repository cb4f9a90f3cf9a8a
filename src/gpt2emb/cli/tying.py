"""The tying command: whether the output layer reuses wte (--load, --grad, --compare)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from gpt2emb import output
from gpt2emb.cli.options import Json, Model, Revision
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


class GradText(TyperCommand):
    """tying's command: --grad takes its text's words unquoted, as input takes its TEXT (tying has no other
    words): the words after its value, up to the next option, are joined to it by single spaces."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, joined_text(args, "--grad"))


def joined_text(args: list[str], flag: str) -> list[str]:
    joined: list[str] = []
    i = 0
    while i < len(args):
        arg, i = args[i], i + 1
        if arg == "--":
            return [*joined, *args[i - 1 :]]
        if arg.startswith(flag + "=") or (arg == flag and i < len(args)):
            words = [arg.split("=", 1)[1]] if "=" in arg else [args[i]]
            i += 0 if "=" in arg else 1
            while i < len(args) and not (args[i].startswith("-") and args[i] != "-"):
                words.append(args[i])
                i += 1
            joined += [flag, " ".join(words)]
        else:
            joined.append(arg)
    return joined


@app.command(
    cls=GradText,
    epilog="Examples:\n\n  gpt2emb tying\n\n  gpt2emb tying -m xl --json\n\n  gpt2emb tying --load\n\n"
    '  gpt2emb tying --grad "The cat sat on the mat"\n\n  gpt2emb tying -m EleutherAI/pythia-70m --compare',
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
            "weights). Its words may come unquoted, joined by single spaces as input joins them.",
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
