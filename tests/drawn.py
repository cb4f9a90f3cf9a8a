"""What a figure drew, read back from its matplotlib artists, not from pixels: the figure tests compare it
with numpy's own computation, and scripts/gen_figures.py writes it beside each picture of docs/img/
(NAME.json), so that a test can draw the picture again and compare the data on any CPU, not the bytes."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle, StepPatch
from matplotlib.text import Annotation


@contextlib.contextmanager
def captured() -> Iterator[list[Figure]]:
    """Every figure gpt2emb writes while open, kept as drawn (it is written to its file as ever)."""
    from gpt2emb import plot

    figures: list[Figure] = []
    save = plot.save

    def keep(fig: Figure, path: str, name: str = "png") -> None:
        figures.append(fig)
        save(fig, path, name)

    with mock.patch.object(plot, "save", keep):
        yield figures


def plain(values: Any) -> Any:
    """Numbers as JSON holds them: NaN (a gap in a line, an undefined cell) as None."""
    array = np.ma.filled(np.ma.asarray(values, dtype=np.float64), np.nan)
    return [plain(v) for v in array] if array.ndim else (None if math.isnan(array) else float(array))


def panel(ax: Axes) -> dict[str, Any]:
    """One panel's drawn data: its title, images, lines, point sets, steps, bars, texts and arrows."""
    annotations = [t for t in ax.texts if isinstance(t, Annotation)]
    return {
        "title": ax.get_title(),
        "images": [plain(im.get_array()) for im in ax.images if isinstance(im, AxesImage)],
        "lines": [plain(line.get_xydata()) for line in ax.lines],
        "points": [plain(c.get_offsets()) for c in ax.collections],
        "steps": [plain(p.get_data()[0]) for p in ax.patches if isinstance(p, StepPatch)],
        "bars": [
            plain([p.get_x(), p.get_y(), p.get_width(), p.get_height()])
            for p in ax.patches
            if isinstance(p, Rectangle)
        ],
        "texts": [t.get_text() for t in ax.texts if t.get_text()],
        "arrows": [
            plain([a.xyann, a.xy]) for a in annotations if a.arrow_patch is not None and not a.get_text()
        ],
        "xlabel": ax.get_xlabel(),
        "ylim": plain(ax.get_ylim()),
        "legend": [t.get_text() for t in legend.get_texts()] if (legend := ax.get_legend()) else [],
        "xlabels": [t.get_text() for t in ax.get_xticklabels()],
        "ylabels": [t.get_text() for t in ax.get_yticklabels()],
    }


def drawn(fig: Figure) -> dict[str, Any]:
    """A figure's title, its caption (what it says under its panels) and the drawn data of each of its
    panels (a colour bar's axes left out)."""
    return {
        "title": fig.get_suptitle(),
        "caption": fig.get_supxlabel(),
        "panels": [panel(ax) for ax in fig.axes if ax.get_label() != "<colorbar>"],
    }
