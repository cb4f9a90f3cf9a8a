"""What a figure drew, read back from its matplotlib artists, not from pixels: the figure tests compare it
with numpy's own computation, and scripts/gen_figures.py writes it beside each picture of docs/img/
(NAME.json), so that a test can draw the picture again and compare the data on any CPU, not the bytes. Its
look (sizes, colours, markers, dashes, where texts and panels stand) is read back too: the picture that shows
a claim at a glance (issue 53) cannot change unnoticed."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any, cast
from unittest import mock

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle, StepPatch
from matplotlib.text import Annotation, Text


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
        "look": look(ax),
    }


def hexes(colours: Any) -> list[list[Any]]:
    """Colours as hex strings (alpha kept), a run of one colour as [colour, count]: a point set's colours are
    often one for all, or one for the first point and another for the rest."""
    runs: list[list[Any]] = []
    for c in np.atleast_2d(colours) if len(colours) else []:
        named = to_hex(c, keep_alpha=True)
        if runs and runs[-1][0] == named:
            runs[-1][1] += 1
        else:
            runs.append([named, 1])
    return runs


def text_look(t: Text) -> list[Any]:
    return [
        t.get_fontsize(),
        to_hex(t.get_color()),
        t.get_horizontalalignment(),
        t.get_verticalalignment(),
        t.get_rotation(),
        t.get_wrap(),
    ]


def line_colour(ln: Line2D) -> list[Any]:
    return [to_hex(ln.get_color()), ln.get_zorder(), ln.get_alpha()]


def look(ax: Axes) -> dict[str, Any]:
    """How a panel draws its data, as a reader sees it: the sizes, colours, markers and styles of its point
    sets, lines, bars and texts, where an annotation's text stands, its images' colour scales, its grid,
    limits and margins, its ticks' and legend's text."""
    ticks = [(axis.get_ticklabels() or [Text()])[0] for axis in (ax.xaxis, ax.yaxis)]
    grid = [(axis.get_gridlines() or [Line2D([], [], visible=False)])[0] for axis in (ax.xaxis, ax.yaxis)]
    legend = ax.get_legend()
    return {
        "points": [
            [plain(c.get_sizes()), hexes(c.get_facecolors()), len(c.get_paths()[0].vertices), c.get_zorder()]
            for c in cast(list[Any], ax.collections)
            if c.get_paths()
        ],
        "lines": [
            [
                *(ln.get_linestyle(), str(ln.get_marker()), ln.get_markersize(), ln.get_linewidth()),
                *line_colour(ln),
            ]
            for ln in ax.lines
        ],
        "patches": [[hexes([p.get_facecolor()]), p.get_fill(), p.get_alpha()] for p in ax.patches],
        "texts": [text_look(t) for t in ax.texts],
        "annotations": [
            [*plain([*a.xy, *a.xyann]), str(a.xycoords), str(a.anncoords)]
            for a in ax.texts
            if isinstance(a, Annotation)
        ],
        "images": [[im.get_cmap().name, plain(im.get_clim()), im.get_interpolation()] for im in ax.images],
        "grid": [[g.get_visible(), g.get_alpha()] for g in grid],
        "xlim": plain(ax.get_xlim()),
        "margins": plain(ax.margins()),
        "ticks": [text_look(t) for t in ticks],
        "legend": [text_look(t) for t in legend.get_texts()] if legend else [],
    }


def drawn(fig: Figure) -> dict[str, Any]:
    """A figure's title, its caption (what it says under its panels) and the drawn data of each of its
    panels (a colour bar's axes left out)."""
    return {
        "title": fig.get_suptitle(),
        "caption": fig.get_supxlabel(),
        "panels": [panel(ax) for ax in fig.axes if ax.get_label() != "<colorbar>"],
        "look": {  # its size, its own texts' (title, caption) and every axes' place, colour bars too
            "size": plain(fig.get_size_inches()),
            "texts": [text_look(t) for t in fig.texts],
            "axes": [[ax.get_label(), ax.get_ylabel(), *plain(ax.get_position().bounds)] for ax in fig.axes],
        },
    }


# what the recorded fixture (conftest.py) gives: a command line's result, rows and figure
Recorded = Callable[..., tuple[Any, tuple[Any, ...], Figure]]


def legend_texts(ax: Any) -> list[Any]:
    """The texts of a panel's legend (a panel drawn with one)."""
    legend = ax.get_legend()
    assert legend is not None
    return list(legend.get_texts())
