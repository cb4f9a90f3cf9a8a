"""The command line `gpt2emb`: root.py assembles the app (`app`, the whole app, made when first asked for),
a module per stem holds its commands (each imports the heavy modules inside its body, so --help stays
instant)."""

import gc

# A command makes some hundreds of thousands of objects while it imports (typer, numpy, its own modules),
# none of them garbage: at Python's default threshold (700 new objects) the collector goes over them hundreds
# of times, a tenth of a warm query's own work. Every 100,000 it still runs often enough for a long stream's
# garbage, and app.main leaves without a last collection (gc.freeze).
gc.set_threshold(100_000, *gc.get_threshold()[1:])

from typing import TYPE_CHECKING, Any  # noqa: E402

from gpt2emb.cli.root import main  # noqa: E402  (after the threshold: typer's import is the largest)

if TYPE_CHECKING:
    import typer

    app: typer.Typer

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if (
        name == "app"
    ):  # a run imports its own stem's module alone (root.for_run): the whole app when asked for
        from gpt2emb.cli.root import whole

        return whole()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
