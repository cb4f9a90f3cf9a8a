"""What every figure starts from: a matplotlib Figure of no window, and a title that fits its width."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TITLE_SIZE = 12  # points
CHARACTER = 0.6  # a character's width, in font sizes (DejaVu Sans averages about 0.55)


def new_figure(width: float, height: float) -> Figure:
    """A figure of no window (no pyplot, no backend chosen): it is only ever written to a file."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def suptitle(fig: Figure, text: str, size: float = TITLE_SIZE) -> None:
    """The figure's title, on as many lines as its width needs (a long model name, a folder's path, would
    otherwise run past both edges)."""
    width = fig.get_figwidth() * 72 - 20  # points, less a margin
    per_line = max(20, int(width / (size * CHARACTER)))
    if len(text) > per_line:  # cut only where needed, every character kept (a token's tab, its spaces)
        lines = textwrap.wrap(
            text, per_line, expand_tabs=False, replace_whitespace=False, drop_whitespace=False
        )
        text = "\n".join(line.rstrip(" ") for line in lines)
    fig.suptitle(text, fontsize=size)
