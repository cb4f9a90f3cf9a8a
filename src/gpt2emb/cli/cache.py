"""The cache group: cache list, clear, verify, refresh and path."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gpt2emb import output
from gpt2emb.cli.options import Json, complete_model
from gpt2emb.errors import DamagedEntry, InUse, error_for

app = typer.Typer(
    name="cache",
    help="Where gpt2emb keeps the embeddings it fetched, how to check them and how to free the space.",
    no_args_is_help=True,
)


@app.command("list", epilog="Examples:\n\n  gpt2emb cache list\n\n  gpt2emb cache list --json")
def cache_list(json: Json = False) -> None:
    """The cached models: name, commit, size on disk and folder."""
    from gpt2emb.core import cache as core

    output.render(core.cache_list(), json)


def _cached_model(help: str) -> Any:
    """The optional MODEL of a cache command."""
    return typer.Argument(help=help, show_default=False, autocompletion=complete_model)


@app.command(
    "clear",
    epilog="Examples:\n\n  gpt2emb cache clear xl\n\n  gpt2emb cache clear --outdated\n\n"
    "  gpt2emb cache clear",
)
def cache_clear(
    model: Annotated[
        str | None, _cached_model("Only this model (all of its commits); without it, everything.")
    ] = None,
    outdated: Annotated[
        bool,
        typer.Option(
            "--outdated",
            help="Only the entries of local folders whose files have changed since they were cached, or "
            "are gone (cache list marks them).",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Remove cached embeddings (the Hugging Face cache is left alone); the next use fetches them again.

    Exits 6 when one could not be removed (on Windows: in use by a program); it then stays whole. On Linux
    and macOS an entry in use is removed all the same, and the command using it may then fail: clear what
    nothing is running on."""
    from gpt2emb.core import cache as core

    result = core.cache_clear(model, outdated)
    output.render(result, json)
    if result.kept:
        held = ", ".join(f"{k.name} ({k.commit[:12]}): {k.reason}" for k in result.kept)
        again = " ".join(
            ["gpt2emb cache clear", *([model] if model else []), *(["--outdated"] if outdated else [])]
        )
        raise InUse(f"could not remove {held}; close the programs using it, then run {again} again")


@app.command(
    "verify",
    epilog="Examples:\n\n  gpt2emb cache verify\n\n  gpt2emb cache verify xl --repair\n\n  "
    "gpt2emb cache verify --json | jq '.entries[] | select(.ok | not)'",
)
def cache_verify(
    model: Annotated[
        str | None, _cached_model("Only this model (all of its commits); without it, every entry.")
    ] = None,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Rebuild each damaged entry from its source (the Hub or the folder), same commit.",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Read every byte of the cached embeddings against the checksums written with them: ok or damaged.

    Exits 6 while an entry is damaged (after --repair: one that could not be rebuilt)."""
    from gpt2emb.core import cache as core

    result = core.cache_verify(model, repair, output.reporter(json))
    output.render(result, json)
    bad = [f"{e.name} ({e.commit[:12]})" for e in result.entries if not e.ok]
    if bad:
        fix = "see the notes above, then run" if repair else "run"
        raise DamagedEntry(f"damaged in the cache: {', '.join(bad)}; {fix} gpt2emb cache verify --repair")


@app.command("refresh", epilog="Examples:\n\n  gpt2emb cache refresh\n\n  gpt2emb cache refresh gpt2 --json")
def cache_refresh(
    model: Annotated[
        str | None, _cached_model("Only this model; without it, every cached Hub model.")
    ] = None,
    json: Json = False,
) -> None:
    """Ask the Hub again which commit main (and each other branch or tag used) names; rebuild what moved.

    Otherwise a branch is looked up on first use only, and its commit kept until this or cache clear."""
    from gpt2emb.core import cache as core

    result = core.cache_refresh(model, output.reporter(json))
    output.render(result, json)
    if result.failed:  # the exit code of the first failure, once every other repo was asked
        first = result.failed[0]
        raise error_for(first.code, first.message)  # the message names the repo


@app.command("path", epilog='Examples:\n\n  gpt2emb cache path\n\n  du -sh "$(gpt2emb cache path)"')
def cache_path(json: Json = False) -> None:
    """The cache folder (set GPT2EMB_CACHE_DIR to move it)."""
    from gpt2emb.core import cache as core

    output.render(core.cache_path(), json)
