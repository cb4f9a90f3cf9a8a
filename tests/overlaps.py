"""Where a figure's labels stand, measured by the renderer (Agg, each text's get_window_extent): the labels
whose boxes intersect, those past the figure's edge, and annotations past their axes. tests/test_overlaps.py
runs it over every figure; a legend counts as one box (its texts are inside it by construction)."""

from __future__ import annotations

from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Annotation, Text
from matplotlib.transforms import BboxBase as Bbox

SLACK = 0.5  # pixels: two boxes that merely touch (a tick label's edge on the next) do not overlap


def labels(fig: Figure) -> list[tuple[str, Bbox, Any]]:
    """Every text the figure draws (and each legend, as one box), with its box in pixels and the axes an
    annotation belongs to (None for the others). A tick's label is counted when its tick is in view."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
    legends = [x for x in fig.findobj(Legend)]
    inside_legend = {id(t) for legend in legends for t in legend.findobj(Text)}
    ticks: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low - 1e-9 * (high - low) <= tick.get_loc() <= high + 1e-9 * (high - low):
                    ticks.update(id(t) for t in (tick.label1, tick.label2))
    found: list[tuple[str, Bbox, Any]] = []
    for t in fig.findobj(Text):
        if not (t.get_visible() and t.get_text().strip()) or id(t) in inside_legend or id(t) in ticks:
            continue
        owner = t.axes if isinstance(t, Annotation) else None
        # an annotation's own extent holds its leader line too: the label is its text's box
        found.append((repr(t.get_text()), Text.get_window_extent(t, renderer), owner))
    found += [(f"legend {i}", legend.get_window_extent(renderer), None) for i, legend in enumerate(legends)]
    return found


def clashes(fig: Figure) -> list[str]:
    """What is wrong with where fig's labels stand: each pair of labels whose boxes intersect, each label
    past the figure's edge, each annotation past its axes; [] when every label can be read."""
    found = labels(fig)
    edge = fig.bbox
    problems = []
    for i, (text, box, owner) in enumerate(found):
        if not inside(box, edge):
            problems.append(f"{text} leaves the figure: {at(box)} in {at(edge)}")
        if owner is not None and not inside(box, owner.bbox):
            problems.append(f"{text} leaves its axes: {at(box)} in {at(owner.bbox)}")
        for other, other_box, _ in found[i + 1 :]:
            if overlap(box, other_box):
                problems.append(f"{text} overlaps {other}")
    return problems


def inside(box: Bbox, edge: Bbox) -> bool:
    return bool(
        box.x0 >= edge.x0 - SLACK
        and box.y0 >= edge.y0 - SLACK
        and box.x1 <= edge.x1 + SLACK
        and box.y1 <= edge.y1 + SLACK
    )


def overlap(a: Bbox, b: Bbox) -> bool:
    return bool(min(a.x1, b.x1) - max(a.x0, b.x0) > SLACK and min(a.y1, b.y1) - max(a.y0, b.y0) > SLACK)


def at(box: Bbox) -> str:
    """A box as a message says it: its corners in whole pixels."""
    return f"({box.x0:.0f}, {box.y0:.0f})-({box.x1:.0f}, {box.y1:.0f})"
