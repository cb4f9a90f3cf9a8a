"""What every figure starts from: a matplotlib Figure of no window."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def new_figure(width: float, height: float) -> Figure:
    """A figure of no window (no pyplot, no backend chosen): it is only ever written to a file."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")
