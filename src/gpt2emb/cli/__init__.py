"""The command line `gpt2emb`: app.py assembles the app, a module per stem holds its commands (each imports
the heavy modules inside its body, so --help stays instant)."""

from gpt2emb.cli.app import app, main

__all__ = ["app", "main"]
