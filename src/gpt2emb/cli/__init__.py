"""The command line: `gpt2emb` (the Typer app in app.py, each stem's commands in a module of its name)."""

from gpt2emb.cli.app import app, main

__all__ = ["app", "main"]
