"""The lab command: the course's lab in one run (vector, neighbors, analogy twice, sizes, tying)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.cli.options import Json, Revision, _complete_model

app = typer.Typer()


@app.command(
    epilog="Examples:\n\n  gpt2emb lab\n\n  gpt2emb lab --word queen\n\n  gpt2emb lab -m xl --load\n\n  "
    "gpt2emb lab --json | jq '.analogy.results[0].token'\n\n  gpt2emb lab --html lab.html"
)
def lab(
    model: Annotated[
        str | None,
        typer.Option(
            "-m",
            "--model",
            help="gpt2 (the default), medium, large, xl, roberta, ... (gpt2emb models), a Hub repo id or a "
            "folder; part 4 then counts its parameters instead of the four GPT-2 sizes.",
            autocompletion=_complete_model,
            show_default=False,
        ),
    ] = None,
    word: Annotated[
        str,
        typer.Option(
            "--word", help="The word of parts 1 and 2 (its row, its nearest tokens).", metavar="WORD"
        ),
    ] = "king",
    load: Annotated[
        bool,
        typer.Option(
            "--load", help="Part 5 also loads the real model and compares data_ptr() (downloads all weights)."
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
    html: Annotated[
        str | None,
        typer.Option(
            "--html",
            help="Also write the lab as one page into FILE, which a browser opens offline: each part's "
            'question, table, figure and answer (needs "gpt2emb\\[plot]").',
            metavar="FILE",
            show_default=False,
        ),
    ] = None,
) -> None:
    """The course's lab in one run: a word's row (first 12 numbers), its 10 nearest tokens, king - man + woman with the inputs kept and then left out, the four GPT-2 sizes with wte's share, the tying check.

    --json prints one document whose keys vector, neighbors, analogy_kept, analogy, sizes and tying each hold what that command prints with --json. A part that fails stops the run with its exit code, its message starting with the part's number.

    --html FILE also writes the lab as one self-contained page (open it with start FILE on Windows, open FILE on macOS, xdg-open FILE on Linux)."""  # noqa: E501 (a paragraph a line: --help wraps them; the command list keeps a summary's line breaks)
    from gpt2emb.core import lab as core

    page = None
    if html is not None:  # checked before any model is opened
        from gpt2emb import plot
        from gpt2emb.output import pages

        plot.check_available("html")
        page = pages.check(html)
    reporter = output.reporter(json)
    result = core.lab(model, word, load, revision, reporter)
    if page is not None:
        from gpt2emb.output.pages import lab as lab_page

        pages.write(lab_page.page(core.page(result, model, revision, reporter)), page)
    output.render(result, json)
    if page is not None and not json:
        output.written("page", page)
