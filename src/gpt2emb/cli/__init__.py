"""The command line `gpt2emb`: app.py assembles the app, a module per stem holds its commands (each imports
the heavy modules inside its body, so --help stays instant)."""

import gc

# A command makes some hundreds of thousands of objects while it imports (typer, numpy, its own modules),
# none of them garbage: at Python's default threshold (700 new objects) the collector goes over them hundreds
# of times, a tenth of a warm query's own work. Every 100,000 it still runs often enough for a long stream's
# garbage, and app.main leaves without a last collection (gc.freeze).
gc.set_threshold(100_000, *gc.get_threshold()[1:])

from gpt2emb.cli.app import app, main  # noqa: E402  (after the threshold: typer's import is the largest)

__all__ = ["app", "main"]
