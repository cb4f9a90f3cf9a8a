"""plot/positions.py on known answers (issue 53): whether a quantity is flat is a bool, False where nothing
is finite to compare."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from gpt2emb.plot import positions

from drawn import legend_texts


def test_nothing_finite_is_not_flat_and_the_answer_is_a_bool() -> None:
    for values in (np.array([np.nan, np.inf]), np.array([])):
        assert positions.flat(values) is False and positions.flat(values, scale=1.0) is False
    assert positions.flat(np.array([2.0, 2.0])) is True


def test_a_quantity_is_flat_within_a_millionth_of_its_size() -> None:
    assert positions.flat(np.zeros(3)) and positions.flat(np.array([5.0, 5.0]))
    assert not positions.flat(np.array([np.nan, np.nan])) and not positions.flat(np.array([]))
    assert positions.flat(np.array([0.0, 1e-7]), scale=1.0) and not positions.flat(np.array([0.0, 1e-7]))
    assert positions.flat(np.array([1.0, 1.0 + 5e-7, np.nan]))


def test_only_the_principal_components_that_vary_are_drawn() -> None:
    components = np.array([[0.0, 1.0, 5.0], [0.0, 2.0, 5.0], [0.0, 3.0, 5.0]])
    fig = positions.figure(np.eye(3), np.array([1.0, 2.0, 3.0]), components, "m")
    pca = fig.axes[2]
    assert [t.get_text() for t in legend_texts(pca)] == ["PC2"]
    assert [list(np.asarray(ln.get_ydata())) for ln in pca.lines] == [
        [1.0, 2.0, 3.0]
    ] and pca.get_xlabel() == "position"
    alike = positions.figure(np.eye(3), np.array([1.0, 2.0, 3.0]), np.ones((3, 2)), "m").axes[2]
    assert [t.get_text() for t in alike.texts] == ["every position projects alike:\nthe rows are one point"]
    assert len(alike.lines) == 0 and alike.get_legend() is None and alike.get_xticks().tolist() == []
    flat = positions.figure(np.eye(3), np.full(3, 2.5), components, "m").axes[1]
    assert flat.texts[0].get_text() == (
        "every row's norm is 2.5\n(it varies by less than 1e-06 of it:\nrounding, not drawn)"
    )
    heat = fig.axes[0]
    assert heat.images[0].get_clim() == (-1, 1) and heat.images[0].get_interpolation() == "nearest"


def test_a_norm_that_varies_a_little_is_drawn_and_read_on_its_axis_as_it_is() -> None:
    """Norms of 2 that vary by a ten-thousandth are drawn, on axes that say what they are, and the ticks read
    as the norms themselves: no offset (such as "+2") stands above the axis."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    norms = 2.0 + np.array([0.0, 1e-4, 2e-4, 3e-4])
    fig = positions.figure(np.eye(4), norms, np.arange(8.0).reshape(4, 2), "m")
    FigureCanvasAgg(fig).draw()  # type: ignore[no-untyped-call]
    norm = fig.axes[1]
    assert [list(np.asarray(line.get_ydata())) for line in norm.lines] == [list(norms)]
    assert (norm.get_xlabel(), norm.get_ylabel()) == ("position", "L2 norm")
    assert norm.yaxis.get_offset_text().get_text() == ""
    ticks = [float(t.get_text().replace("\u2212", "-")) for t in norm.get_yticklabels() if t.get_text()]
    assert len(ticks) >= 2 and all(1.9999 <= v <= 2.0004 for v in ticks)
