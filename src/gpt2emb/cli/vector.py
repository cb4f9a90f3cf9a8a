"""The vector command: the raw row of wte for each word, its first numbers and statistics."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every run
# (inspect.signature with eval_str, then get_type_hints), evaluating each string twice, half of what making
# the command costs; as objects they are made once, at import (tests/test_imports.py checks they are not
# strings).

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Pool
from gpt2emb.cli.options import (
    Command,
    Encoding,
    Exact,
    Figure,
    Json,
    Jsonl,
    Model,
    PoolOpt,
    Revision,
    Strict,
    WordsOrStdin,
    figure_of,
    whole,
)
from gpt2emb.cli.stdin import from_stdin, stdin_blocks, stream
from gpt2emb.errors import ExitCode
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    cls=Command,
    epilog="Examples:\n\n  gpt2emb vector king\n\n  gpt2emb vector king queen --dims 4\n\n  "
    "gpt2emb vector id:5822 --full --json\n\n  gpt2emb vector - --jsonl < words.txt",
)
def vector(
    words: WordsOrStdin,
    model: Model = DEFAULT_MODEL,
    dims: Annotated[
        int,
        typer.Option(
            "--dims",
            help="How many numbers the table shows (--json has them all).",
            parser=whole(1),
            metavar="<int range> [x>=1]",
        ),
    ] = output.DIMS,
    full: Annotated[bool, typer.Option("--full", help="Show every number.")] = False,
    exact: Exact = False,
    pool: PoolOpt = Pool.mean,
    revision: Revision = None,
    encoding: Encoding = None,
    json: Json = False,
    jsonl: Jsonl = False,
    strict: Strict = False,
    figure: Figure = None,
) -> int:
    """The raw row of wte for each word: its first numbers, norm, mean, std, min and max."""
    from gpt2emb import registry
    from gpt2emb.core import vector as core

    shown = None if full else dims
    figure = figure_of(figure, stdin="-" in words, jsonl=jsonl)
    if from_stdin(words, json, jsonl, strict):
        ref = registry.resolve(model, revision, encoding)
        answers = core.each_vector(ref, stdin_blocks(), exact, pool, output.reporter(json or jsonl))
        return stream(answers, json, jsonl, strict, shown)
    ref = registry.resolve(model, revision, encoding)
    result = core.vector(ref, words, exact, pool, output.reporter(json or jsonl), figure)
    output.render(result, json, shown, jsonl)
    return ExitCode.OK
