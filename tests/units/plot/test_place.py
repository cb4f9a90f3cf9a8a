"""plot/place.py: where a label is put beside its point, on known answers.

The eight places beside a point are tried in their order, and the gaps in turn. A place flush with the frame
counts as free. When no place beside a point is free, the nearest free place on a grid is taken. On a drawn
figure, the gap is in points at any dpi, the margin from the axes' frame is kept, and no label covers a
point."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from overlaps import overlap

pytest.importorskip("matplotlib")
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from gpt2emb.plot import place

FRAME = Bbox.from_extents(0, 0, 100, 100)
W, H = 20.0, 6.0  # a label's size in pixels, for the tests of _near


def held(*boxes: Bbox) -> np.ndarray:
    """Boxes as place.py holds what is taken: rows of (x0, y0, x1, y1)."""
    return np.array([b.extents for b in boxes], dtype=np.float64).reshape(-1, 4)


def free(box: Bbox, *taken: Bbox) -> bool:
    """Whether a label's box is a free place in FRAME, with these boxes taken."""
    return place._first_free([box.x0], [box.y0], box.width, box.height, FRAME, held(*taken)) == 0


def dot(left: float, bottom: float) -> Bbox:
    """A 1 x 1 box at the centre of a label's place: taken, that place is no longer free, and no other."""
    return Bbox.from_bounds(left + W / 2 - 0.5, bottom + H / 2 - 0.5, 1, 1)


def test_a_label_takes_the_first_free_place_beside_its_point_nearest_first() -> None:
    # 9 points from (50, 50): right, above right, below right, above, below, left, above left, below left
    order = [(59, 47), (59, 59), (59, 35), (40, 59), (40, 35), (21, 47), (21, 59), (21, 35)]
    taken: list[Bbox] = []
    for left, bottom in order:
        assert place._near(50, 50, W, H, 1.0, FRAME, held(*taken)) == (left, bottom, False)
        taken.append(dot(left, bottom))
    # all eight taken: 16 points away, where the right one holds the first dot; above right is free, and
    # past 9 points a label is far (a line joins it to its point)
    assert place._near(50, 50, W, H, 1.0, FRAME, held(*taken)) == (66, 66, True)
    # a gap is in points: at 144 dpi (2 pixels a point) the first place is 18 pixels off
    assert place._near(50, 50, W, H, 2.0, FRAME, held()) == (68, 47, False)


def test_past_9_points_a_label_is_far_and_the_last_gap_is_40_points() -> None:
    frame = Bbox.from_extents(0, 0, 200, 200)
    around = [Bbox.from_extents(3, 17, 97, 83)]  # covers every place up to 26 points, and right at 40
    assert place._near(50, 50, W, H, 1.0, frame, held(*around)) == (90, 90, True)
    assert place._near(50, 50, W, H, 1.0, frame, held(Bbox.from_extents(0, 0, 200, 200))) is None


def test_a_place_flush_with_the_frame_is_free_and_one_past_it_is_not() -> None:
    assert free(Bbox.from_extents(0, 0, 100, 100))
    for past in ((-0.5, 0, 100, 100), (0, -0.5, 100, 100), (0, 0, 100.5, 100), (0, 0, 100, 100.5)):
        assert not free(Bbox.from_extents(*past))
    assert not free(Bbox.from_bounds(10, 10, 10, 10), Bbox.from_bounds(15, 15, 10, 10))
    assert free(Bbox.from_bounds(10, 10, 10, 10), Bbox.from_bounds(30, 30, 10, 10))
    # touching counts as covering, as Bbox.overlaps has it: a box flush with a taken one is not free
    assert not free(Bbox.from_bounds(10, 10, 10, 10), Bbox.from_bounds(20, 20, 10, 10))
    assert free(Bbox.from_bounds(10, 10, 10, 10), Bbox.from_bounds(20.5, 10, 10, 10))


def test_with_no_place_beside_the_nearest_free_place_on_a_grid_of_half_a_line() -> None:
    # a 10 x 10 label: a grid of 5 pixels; the spot whose centre is nearest (52, 52) is centred on (50, 50)
    assert place._anywhere(52, 52, 10, 10, 1.0, FRAME, held()) == (45, 45, True)
    # flush with the right edge, or the top, of the frame when that is nearest
    assert place._anywhere(99, 50, 10, 10, 1.0, FRAME, held()) == (90, 45, True)
    assert place._anywhere(50, 99, 10, 10, 1.0, FRAME, held()) == (45, 90, True)
    # a label 2 pixels high: the grid is 2 points (not a line's half), its centres odd
    assert place._anywhere(50.2, 50.2, 10, 2, 1.0, FRAME, held()) == (46, 50, True)
    # the nearer spots taken: the nearest free one, just above them (centre (50, 65))
    assert place._anywhere(52, 53, 10, 10, 1.0, FRAME, held(Bbox.from_bounds(41, 41, 18, 18))) == (
        45,
        60,
        True,
    )
    # no spot in the frame at all (a label wider than it): beside the point, 4 points off, all the same
    assert place._anywhere(50, 50, 120, 10, 2.0, FRAME, held()) == (58, 45, False)


def laid_out(
    points: list[tuple[float, float]], labels: list[str], dpi: float
) -> tuple[Figure, list[Any], Any]:
    fig = Figure(figsize=(4, 3), dpi=dpi)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.scatter(*zip(*points, strict=True))
    ax.set(xlim=(0, 10), ylim=(0, 10))
    made = place.place(fig, [(ax, points, labels)], fontsize=10)
    return fig, made, place.renderer_of(fig)


def test_a_label_stands_right_of_its_point_centred_the_same_points_off_at_any_dpi() -> None:
    off = {}
    for dpi in (72, 144):
        fig, (made,), renderer = laid_out([(5.0, 5.0)], ["king"], dpi)
        x, y = fig.axes[0].transData.transform((5.0, 5.0))
        box = Text.get_window_extent(made, renderer)
        assert (box.y0 + box.y1) / 2 == pytest.approx(y, abs=0.6) and made.arrow_patch is None
        off[dpi] = (box.x0 - x) * 72 / dpi  # points between the point and the label's left edge
    # the first gap of the list, the same in points at both
    assert off[72] == pytest.approx(place.GAPS[0], abs=0.6) and off[144] == pytest.approx(off[72], abs=0.6)


@pytest.mark.parametrize("dpi", [72, 144])
def test_a_label_keeps_2_points_from_the_axes_frame(dpi: int) -> None:
    scale = dpi / 72  # pixels a point
    fig = Figure(figsize=(4, 3), dpi=dpi)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    width = ax.text(0, 0, "king", fontsize=10).get_window_extent(place.renderer_of(fig)).width
    ax.texts[0].remove()
    right = ax.get_window_extent().x1
    # right of the point, 9 points off (the first gap), the label would end 1 point inside the axes'
    # frame: inside the 2 points' margin
    x = right - (1 + place.GAPS[0]) * scale - width
    point = tuple(ax.transData.inverted().transform((x, ax.get_window_extent().y0 + 100 * scale)))
    (made,) = place.place(fig, [(ax, [point], ["king"])], fontsize=10)
    box = Text.get_window_extent(made, place.renderer_of(fig))
    assert box.x1 <= right - 2 * scale + 0.01 and box.x0 < x  # it went round the point: above or below
    assert made.arrow_patch is None


def test_no_label_covers_a_point() -> None:
    rng = np.random.default_rng(53)
    points = [(float(a), float(b)) for a, b in rng.uniform(0.5, 9.5, size=(40, 2))]
    fig, made, renderer = laid_out(points, [f"w{i}" for i in range(40)], 100)
    ax = fig.axes[0]
    r = 4 * 100 / 72
    squares = [Bbox.from_bounds(x - r, y - r, 2 * r, 2 * r) for x, y in ax.transData.transform(points)]
    covered = [
        (a.get_text(), i)
        for a in made
        for i, square in enumerate(squares)
        if overlap(Text.get_window_extent(a, renderer), square)
    ]
    assert covered == [] and len(made) == 40


def test_the_axes_limits_are_fixed_where_the_labels_were_placed() -> None:
    """What is drawn after place() (it should not be) moves no point away from its label."""
    fig = Figure(figsize=(4, 3), dpi=72)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.scatter([1.0, 2.0], [1.0, 2.0])  # the limits as matplotlib chooses them
    place.place(fig, [(ax, [(1.0, 1.0), (2.0, 2.0)], ["a", "b"])], fontsize=10)
    placed = ax.get_xlim(), ax.get_ylim()
    ax.scatter([50.0], [-50.0])
    place.renderer_of(fig)
    assert (ax.get_xlim(), ax.get_ylim()) == placed and placed[0][0] < 1 < 2 < placed[1][1] < 3


def around(dots: list[tuple[float, float]], label: str = "king") -> tuple[Figure, Any, Any]:
    """A point at the centre of 4 x 3 inch axes (72 dpi: a point a pixel) labelled, and unlabelled points
    at the given offsets (in points) from it; its label's annotation and box."""
    fig = Figure(figsize=(4, 3), dpi=72)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.set(xlim=(0, 10), ylim=(0, 10))
    x, y = ax.transData.transform((5.0, 5.0))
    points = [(5.0, 5.0), *(tuple(ax.transData.inverted().transform((x + dx, y + dy))) for dx, dy in dots)]
    made, *_ = place.place(fig, [(ax, points, [label] + [""] * len(dots))], fontsize=10)
    return fig, made, Text.get_window_extent(made, place.renderer_of(fig))


def test_a_point_s_square_reaches_4_points_each_way_and_no_further() -> None:
    # a point 3 points right of the labelled one: its square ends 7 points right, and the label 9 points
    # right is free
    fig, _, box = around([(3.0, 0.0)])
    x, y = fig.axes[0].transData.transform((5.0, 5.0))
    assert box.x0 == pytest.approx(x + 9, abs=0.6) and (box.y0 + box.y1) / 2 == pytest.approx(y, abs=0.6)


def test_a_label_far_from_its_point_has_a_thin_grey_line_to_it() -> None:
    # unlabelled points 8 points apart fill 60 points either side and 28 above and below: every place up
    # to 26 points off is taken, and the first free one is above right, 40 points off
    dots = [(8.0 * i, 8.0 * j) for i in range(-7, 8) for j in range(-3, 4) if (i, j) != (0, 0)]
    fig, made, box = around(dots)
    x, y = fig.axes[0].transData.transform((5.0, 5.0))
    assert (box.x0, box.y0) == (pytest.approx(x + 40, abs=0.6), pytest.approx(y + 40, abs=0.6))
    # the line runs from the label's edge to 3 points short of the point
    assert made.arrowprops == {"arrowstyle": "-", "color": "grey", "lw": 0.6, "shrinkA": 0, "shrinkB": 3}
    assert made.arrow_patch is not None and around([])[1].arrow_patch is None


def test_places_are_checked_a_chunk_at_a_time_and_the_first_free_one_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With chunks of 2 places, the first free place may lie in the second or third chunk, and a later free
    place never comes before it; none free at all is None."""
    monkeypatch.setattr(place, "CHUNK", 2)
    lefts, bottoms = [0.0, 10.0, 20.0, 30.0, 40.0], [0.0] * 5
    wall = Bbox.from_extents(0, 0, 24, 10)  # covers the first three places (each 5 x 5)
    assert place._first_free(lefts, bottoms, 5, 5, FRAME, held(wall)) == 3
    assert place._first_free(lefts, bottoms, 5, 5, FRAME, held(Bbox.from_extents(0, 0, 14, 10))) == 2
    assert place._first_free(lefts, bottoms, 5, 5, FRAME, held(Bbox.from_extents(0, 0, 100, 10))) is None
    assert place._first_free([], [], 5, 5, FRAME, held()) is None


def test_a_label_for_each_point_or_a_value_error() -> None:
    """Points and labels are paired one to one: a list of labels shorter than the points is a caller's
    mistake, told as a ValueError, never points silently left unlabelled and unguarded."""
    fig = Figure(figsize=(4, 3), dpi=72)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    with pytest.raises(ValueError, match="zip"):
        place.place(fig, [(ax, [(1.0, 1.0), (2.0, 2.0)], ["one"])], fontsize=10)
