"""The positions command: rows of the position embedding wpe, compared; the heatmap and the figure."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.cli.options import Figure, Json, Model, Revision, figure_of, whole
from gpt2emb.errors import UsageError
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


# A negative number (positions -1) reaches the core, which says that the position does not exist, rather than
# click's "No such option: -1"; an unknown option given here is still refused as one (in positions()).
@app.command(
    context_settings={"ignore_unknown_options": True},
    epilog="Examples:\n\n  gpt2emb positions 0 1 2 500\n\n  gpt2emb positions 0-5 1023 --json\n\n"
    "  gpt2emb positions --heatmap\n\n  gpt2emb positions --figure wpe.png",
)
def positions(
    ctx: typer.Context,
    positions: Annotated[
        list[str] | None, typer.Argument(help="Positions 0..1023, or ranges like 0-5.", show_default=False)
    ] = None,
    model: Model = DEFAULT_MODEL,
    heatmap: Annotated[
        bool, typer.Option("--heatmap", help="Draw the whole cosine matrix of all positions, in blocks.")
    ] = False,
    cells: Annotated[
        int,
        typer.Option(
            "--cells", help="Cells per side of the heatmap, 2 to 256.", parser=whole(), metavar="<int>"
        ),
    ] = 32,
    png: Annotated[
        str | None,
        typer.Option(
            "--png",
            help="The old name of --figure, kept as an alias for one release: use --figure.",
            metavar="FILE",
        ),
    ] = None,
    figure: Figure = None,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """Cosine similarity between rows of the position embedding wpe, with each row's norm."""
    from gpt2emb.core import positions as core

    unknown = [p for p in positions or [] if p.startswith("-") and not p[1:].replace("-", "").isdigit()]
    if unknown:
        options = [o for p in ctx.command.params for o in p.opts if o.startswith("--")]
        raise UsageError(_no_such_option(unknown[0], options))
    if png is not None and figure is not None:
        raise UsageError("--png is the old name of --figure: give one of them")
    if heatmap or png is not None or figure is not None:
        if positions:
            raise UsageError("give positions, or --heatmap/--figure for all of them, not both")
        figure = figure_of(figure)  # --png's file: checked by the core, as the handle's png= is
        output.render(core.position_map(model, cells, png, output.reporter(json), revision, figure), json)
    else:
        output.render(core.positions(model, positions or [], output.reporter(json), revision), json)


def _no_such_option(name: str, options: list[str]) -> str:
    """click's refusal of an unknown option, with its suggestion: positions lets unknown options through so
    that a negative position reaches the core."""
    import difflib

    close = difflib.get_close_matches(name.split("=")[0], options, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"No such option: {name}{hint} (see: gpt2emb positions --help)"
