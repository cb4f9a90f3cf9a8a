"""The command line `gpt2emb`: root.py assembles the app (`app`; its commands are made from their stems'
modules as a run asks for them), a module per stem holds its commands (each imports the heavy modules inside
its body, so --help stays instant)."""

import gc
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

    app: typer.Typer

__all__ = ["app", "main"]


def main() -> None:
    """The console script: one run, then the process ends (root.main)."""
    # A command makes some hundreds of thousands of objects while it imports (typer, numpy, its own modules),
    # none of them garbage: at Python's default threshold (700 new objects) the collector goes over them
    # hundreds of times, a tenth of a warm query's own work. Every 100,000 it still runs often enough for a
    # long stream's garbage; root.main leaves without a last collection (gc.freeze). Set here, for the
    # command line's process alone: importing gpt2emb.cli (tests, notebooks) leaves it as it is.
    gc.set_threshold(100_000, *gc.get_threshold()[1:])
    from gpt2emb.cli.root import main as run

    run()


def __getattr__(name: str) -> Any:
    # imported when asked for: importing gpt2emb.cli imports no typer
    if name == "app":
        from gpt2emb.cli.root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
