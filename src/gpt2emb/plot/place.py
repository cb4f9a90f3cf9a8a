"""Labels beside points, none over another, over a point or past its axes: each label, in the order given,
takes the first free place in a fixed list of places around its point (nearest first), measured by the
renderer; a label with no free place near its point takes the nearest free place in its axes, with a line
to its point. Deterministic: the same points and labels draw the same figure.

Why not adjustText (measured on neighbors of ten words on a GPT-2-shaped model, 100 labels; see
docs/development.md): it moves labels by repulsion until they stop, which left labels overlapping there,
and it brings scipy (about 113 MB) into the plot extra; this placement guarantees what it returns and
needs nothing but matplotlib."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation
    from matplotlib.transforms import Bbox

# offsets (in multiples of the gap) of a label's anchor from its point, with the label's alignment there:
# right, above, left, below and the four corners, nearest first
DIRECTIONS = (
    (1, 0, "left", "center"),
    (1, 1, "left", "bottom"),
    (1, -1, "left", "top"),
    (0, 1, "center", "bottom"),
    (0, -1, "center", "top"),
    (-1, 0, "right", "center"),
    (-1, 1, "right", "bottom"),
    (-1, -1, "right", "top"),
)
# The points between a point and its label's nearest edge, tried in turn. The first is more than POINT: a
# label that touches a point's square is not free (Bbox.overlaps counts touching), so a gap of POINT itself
# could never be taken.
GAPS = (9.0, 16.0, 26.0, 40.0)
MARGIN = 2.0  # points a label keeps from the axes' frame
POINT = 4.0  # points around each point that no label covers (a marker's radius, about)
CHUNK = 2048  # places checked at a time against every box taken (_first_free)


def renderer_of(fig: Figure) -> Any:
    """A renderer for the figure laid out as it will be written (Agg: it measures as the files are)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    return canvas.get_renderer()  # type: ignore[no-untyped-call]


Job = tuple["Axes", Sequence[tuple[float, float]], Sequence[str]]


def place(fig: Figure, jobs: Sequence[Job], **text: Any) -> list[Annotation]:
    """For each (axes, points, labels) of jobs, annotate each point (data coordinates) with its label, in
    order (the first placed first: give the most important first; an empty label leaves its point unnamed,
    but clear of labels); text: the annotations' text properties
    (fontsize, colour...). The figure is laid out once, as it stands, and each axes' limits fixed: call it
    once everything else is drawn."""
    for ax, _, _ in jobs:
        ax.set_xlim(ax.get_xlim())  # the scale is fixed: labels added never move the points
        ax.set_ylim(ax.get_ylim())
    renderer = renderer_of(fig)
    return [a for ax, xy, labels in jobs for a in _place(ax, xy, labels, renderer, fig.dpi / 72, text)]


def _place(
    ax: Axes, xy: Sequence[tuple[float, float]], labels: Sequence[str], renderer: Any, scale: float, text: Any
) -> list[Annotation]:
    import numpy as np

    frame = ax.get_window_extent(renderer).padded(-MARGIN * scale)
    at = [ax.transData.transform(p) for p in xy]
    r = POINT * scale
    # What no label may cover, as rows of (x0, y0, x1, y1) in display units: each point's square, then
    # each label placed. Kept as an array, so that a place is checked against all of them at once.
    taken = np.array([(x - r, y - r, x - r + 2 * r, y - r + 2 * r) for x, y in at], np.float64).reshape(-1, 4)
    made = []
    for (x, y), label in zip(at, labels, strict=True):
        if not label:  # a point no label names (its legend does): kept clear, no more
            continue
        probe = ax.text(0, 0, label, **text)
        size = probe.get_window_extent(renderer)
        probe.remove()
        w, h = size.width, size.height
        left, bottom, far = _near(x, y, w, h, scale, frame, taken) or _anywhere(
            x, y, w, h, scale, frame, taken
        )
        taken = np.vstack([taken, (left, bottom, left + w, bottom + h)])
        line = {"arrowstyle": "-", "color": "grey", "lw": 0.6, "shrinkA": 0, "shrinkB": 3}
        made.append(
            ax.annotate(
                label,
                tuple(ax.transData.inverted().transform((x, y))),
                xytext=((left + w / 2 - x) / scale, (bottom + h / 2 - y) / scale),
                textcoords="offset points",
                ha="center",
                va="center",
                arrowprops=line if far else None,
                **text,
            )
        )
    return made


def _first_free(
    lefts: Sequence[float] | np.ndarray,
    bottoms: Sequence[float] | np.ndarray,
    w: float,
    h: float,
    frame: Bbox,
    taken: np.ndarray,
) -> int | None:
    """The index of the first of these places (lower-left corners of a w x h label) that lies inside the
    frame and touches nothing taken, or None. Touching counts, as Bbox.overlaps counts it.

    The places are checked CHUNK at a time, in order, so that the search stops at the first chunk that
    holds a free one, and its memory stays bounded (CHUNK x the boxes taken) however crowded the axes."""
    import numpy as np

    left_all, bottom_all = np.asarray(lefts, dtype=np.float64), np.asarray(bottoms, dtype=np.float64)
    for begin in range(0, len(left_all), CHUNK):
        left, bottom = left_all[begin : begin + CHUNK], bottom_all[begin : begin + CHUNK]
        right, top = left + w, bottom + h
        free = (left >= frame.x0) & (bottom >= frame.y0) & (right <= frame.x1) & (top <= frame.y1)
        hit = (
            (left[:, None] <= taken[:, 2])
            & (taken[:, 0] <= right[:, None])
            & (bottom[:, None] <= taken[:, 3])
            & (taken[:, 1] <= top[:, None])
        )
        free &= ~hit.any(axis=1)
        found = np.flatnonzero(free)
        if len(found):
            return begin + int(found[0])
    return None


def _near(
    x: float, y: float, w: float, h: float, scale: float, frame: Bbox, taken: np.ndarray
) -> tuple[float, float, bool] | None:
    """The first free place beside the point (x, y), nearest first: the label's lower-left corner."""
    places = []
    for gap in GAPS:
        for dx, dy, ha, va in DIRECTIONS:
            ax_, ay = x + dx * gap * scale, y + dy * gap * scale
            left = {"left": ax_, "center": ax_ - w / 2, "right": ax_ - w}[ha]
            bottom = {"bottom": ay, "center": ay - h / 2, "top": ay - h}[va]
            places.append((left, bottom, gap > GAPS[0]))
    i = _first_free([p[0] for p in places], [p[1] for p in places], w, h, frame, taken)
    return None if i is None else places[i]


def _anywhere(
    x: float, y: float, w: float, h: float, scale: float, frame: Bbox, taken: np.ndarray
) -> tuple[float, float, bool]:
    """The free place in the frame nearest to (x, y), on a grid of half a line; where there is none, beside
    the point all the same (the figure's tests catch it)."""
    import numpy as np

    step = max(h / 2, 2 * scale)
    lefts, bottoms = _steps(frame.x0, step, w, frame.x1), _steps(frame.y0, step, h, frame.y1)
    left, bottom = np.tile(lefts, len(bottoms)), np.repeat(bottoms, len(lefts))
    far = (left + w / 2 - x) ** 2 + (bottom + h / 2 - y) ** 2
    order = np.lexsort((bottom, left, far))  # nearest first; a tie goes to the left, then down
    i = _first_free(left[order], bottom[order], w, h, frame, taken)
    if i is not None:
        return float(left[order[i]]), float(bottom[order[i]]), True
    return x + POINT * scale, y - h / 2, False


def _steps(start: float, step: float, size: float, end: float) -> np.ndarray:
    """start, start + step, ... while a label of this size from there ends by end. Each is the sum of the one
    before and step, as a loop adding step makes them, so the places are the same to the last bit."""
    import numpy as np

    n = max(0, int((end - size - start) // step) + 2)  # two past the last: the sums may round either way
    at = np.add.accumulate(np.concatenate([[start], np.full(n, step)]))
    return at[at + size <= end]
