"""Results as Jupyter and IPython display them: the tables their commands print."""

from __future__ import annotations

import importlib
import io
import pkgutil
import re
from typing import Any

from rich.console import JUPYTER_DEFAULT_COLUMNS as JUPYTER_WIDTH
from rich.console import Console
from rich.jupyter import JUPYTER_HTML_FORMAT

from gpt2emb.output import views
from gpt2emb.output.console import AS_IS, captured_text, fitted_to, unpadded_lines
from gpt2emb.output.views import DIMS, view


def viewed() -> list[type]:
    """The result types that have a view: every views module imported, found in the package (no list)."""
    for found in pkgutil.iter_modules(views.__path__):
        importlib.import_module(f"{views.__name__}.{found.name}")
    return [kind for kind in view.registry if kind is not object]


def bundle(result: Any) -> dict[str, str]:
    """A result as Jupyter displays it: the table its command prints (at rich's width for Jupyter), as text
    and as HTML in the command's colours, without the blank lines that part tables on a terminal."""
    console = Console(
        file=io.StringIO(),
        width=JUPYTER_WIDTH,
        record=True,
        force_terminal=True,
        force_jupyter=False,  # else, in a notebook, rich would display the table itself as well
        color_system="truecolor",
        **AS_IS,
    )
    console.print(view(result, DIMS), crop=False)
    html = console.export_html(inline_styles=True, code_format=JUPYTER_HTML_FORMAT, clear=False)
    return {
        "text/plain": unpadded_lines(console.export_text(clear=False)).rstrip("\n"),
        "text/html": re.sub(r"\s+</pre>", "</pre>", html, count=1),
    }


def in_terminal(result: Any) -> dict[str, str]:
    """A result as IPython in a terminal displays it: as the command prints it there (the terminal's width,
    colours and encoding)."""
    console = Console(**AS_IS)
    return {
        "text/plain": captured_text(console, view(fitted_to(result, console.encoding), DIMS)).rstrip("\n")
    }
