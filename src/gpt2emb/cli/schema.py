"""The schema command: the JSON Schema of what a command prints with --json (or --jsonl, ...), or their
index, so that a script can check the output of the version it runs."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb.cli.options import Command

app = typer.Typer()


def _given(ctx: typer.Context) -> list[str]:
    """The words of COMMAND typed so far (completing --mode, click leaves them in ctx.args)."""
    return list(ctx.params.get("command") or ctx.args)


def _complete_command(ctx: typer.Context, incomplete: str) -> list[str]:
    from gpt2emb.core import schema as core

    given = _given(ctx)
    names = [n.split() for n in core.names()]
    following = [n[len(given)] for n in names if n[: len(given)] == given and len(n) > len(given)]
    return [w for w in dict.fromkeys(following) if w.startswith(incomplete)]


def _complete_mode(ctx: typer.Context, incomplete: str) -> list[str]:
    from gpt2emb.core import schema as core

    return [m for m in core.modes(_given(ctx)) if m.startswith(incomplete)]


@app.command(
    cls=Command,
    epilog="Examples:\n\n  gpt2emb schema\n\n  gpt2emb schema neighbors\n\n  "
    "gpt2emb schema neighbors --mode jsonl\n\n  gpt2emb schema analogy --mode eval\n\n  "
    "gpt2emb schema cache verify\n\n  gpt2emb schema error\n\n  "
    "gpt2emb schema neighbors > neighbors.schema.json",
)
def schema(
    command: Annotated[
        list[str] | None,
        typer.Argument(
            help="A command (neighbors, cache verify, ...), or error or note (stderr's lines); none: the "
            "index of every command and mode.",
            metavar="COMMAND",
            autocompletion=_complete_command,
            show_default=False,
        ),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="json (the default), jsonl (each line), side-by-side (-m A -m B), stdin (- --json), eval "
            "(--eval FILE), heatmap: the command's modes are in the index.",
            metavar="MODE",
            autocompletion=_complete_mode,
            show_default=False,
        ),
    ] = None,
    json: Annotated[  # read by the app's error boundary (App.main), from the command line
        bool,
        typer.Option("--json", help="Say a failure as a JSON object on stderr (the schema is JSON always)."),
    ] = False,
) -> None:
    """The JSON Schema (draft 2020-12) of what a command prints with --json: every key it has today is required, more may come.

    Without a command, the index: which schema each command and mode prints."""  # noqa: E501 (a summary is one line: the command list keeps its line breaks)
    from gpt2emb.core import schema as core

    typer.echo(core.schema(command or [], mode), nl=False)
