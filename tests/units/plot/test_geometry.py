"""plot/geometry.py, geometry --figure: histograms of cosines against random directions. Pinned on known
answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import dataclasses

from gpt2emb.plot import geometry

from drawn import Recorded, legend_texts


def test_a_table_past_2048_rows_is_counted_on_2048_drawn_at_random() -> None:
    rng = np.random.default_rng(5)
    wte, wpe = rng.normal(size=(3000, 8)), rng.normal(size=(3, 8))
    model = SimpleNamespace(wte=wte, wpe=wpe, shape=SimpleNamespace(position_table=True))
    found = geometry.histograms(cast(Any, SimpleNamespace(model=model)))
    assert list(found) == [
        "token pairs (2,048 drawn at random tokens)",
        "position pairs (all positions)",
        "token against position (2,048 drawn at random tokens)",
    ]
    assert [pairs for _, pairs in found.values()] == [2048 * 2047 // 2, 3, 2048 * 3]
    assert [int(counts.sum()) for counts, _ in found.values()] == [2048 * 2047 // 2, 3, 2048 * 3]


def test_the_token_rows_of_a_large_table_are_2048_drawn_once_and_in_order() -> None:
    assert geometry.sample(2048).tolist() == list(range(2048))
    drawn_rows = geometry.sample(50_257)
    assert len(set(drawn_rows.tolist())) == 2048 and drawn_rows.tolist() == sorted(drawn_rows.tolist())
    assert drawn_rows[-1] < 50_257 and drawn_rows.tolist() == geometry.sample(50_257).tolist()


def test_unit_rows_leave_out_zeros_and_what_is_not_finite() -> None:
    rows = np.array([[3.0, 4.0], [0.0, 0.0], [np.inf, 1.0], [np.nan, 0.0], [0.0, -2.0]])
    assert geometry.units(rows).tolist() == [[0.6, 0.8], [0.0, -1.0]]


def test_random_directions_density_on_known_dimensions() -> None:
    c = np.array([-0.5, 0.0, 0.5])
    assert geometry.random_density(c, 3) == pytest.approx([0.5, 0.5, 0.5])  # uniform on [-1, 1]
    assert geometry.random_density(c, 4) == pytest.approx(2 / np.pi * np.sqrt(1 - c * c))
    assert geometry.random_density(c, 2) == pytest.approx(1 / (np.pi * np.sqrt(1 - c * c)))
    grid = np.linspace(-0.999, 0.999, 20001)
    density = geometry.random_density(grid, 768)  # the trapezoid rule by hand: numpy 1.26 lacks trapezoid
    assert float(np.sum((density[1:] + density[:-1]) / 2 * np.diff(grid))) == pytest.approx(1.0, abs=1e-6)


def test_each_pair_of_distinct_rows_counted_once_a_cosine_of_1_too() -> None:
    wte = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [3.0, 1.0, 4.0], [3.0, 1.0, 4.0], [1.0, -1.0, 0.0]])
    wpe = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    model = SimpleNamespace(wte=wte, wpe=wpe, shape=SimpleNamespace(position_table=True))
    found = geometry.histograms(cast(Any, SimpleNamespace(model=model)))
    tokens, positions, across = found.values()
    assert (
        tokens[1] == 10 and tokens[0].sum() == 10
    )  # 5 rows: 10 pairs, the two alike (cosine 1) in the last bin
    assert tokens[0][-1] == 2  # [1 1 1] twice, [3 1 4] twice: on 1 (or a rounding past it), the last bin
    assert positions[1] == 1 and positions[0].sum() == 1 and across[1] == 10 and across[0].sum() == 10
    assert next(iter(found)) == "token pairs (all tokens)"
    without = SimpleNamespace(model=SimpleNamespace(wte=wte, shape=SimpleNamespace(position_table=False)))
    assert list(geometry.histograms(cast(Any, without))) == ["token pairs (all tokens)"]


def test_geometry_draws_the_random_curve_from_2_dimensions(recorded: Recorded) -> None:
    result, rows, fig = recorded("geometry")
    (ax, *_) = fig.axes
    assert list(fig.get_size_inches()) == [6.0 * len(fig.axes), 4.8]
    assert [len(a.lines) for a in geometry.figure(dataclasses.replace(result, d_model=2), *rows).axes] == [
        1
    ] * 3
    assert [len(a.lines) for a in geometry.figure(dataclasses.replace(result, d_model=1), *rows).axes] == [
        0
    ] * 3
    (curve,) = ax.lines
    pairs = int(legend_texts(ax)[0].get_text().split()[0].replace(",", ""))
    x, y = np.asarray(curve.get_xdata()), np.asarray(curve.get_ydata())
    assert x[0] == -0.998 and x[-1] == 0.998 and len(x) == 401
    assert y == pytest.approx(pairs * 0.01 * geometry.random_density(x, result.d_model))


def test_a_cosine_that_rounds_past_minus_1_or_1_is_counted_in_the_end_bin() -> None:
    """A row, its opposite and its copy: cosines -1, -1 and 1, which float64 makes a step past -1 and 1.
    The row (1, 2^-26) has norm 1 in float64 (its square root rounds to 1), so its "unit" row is itself, and
    its product with itself is 1 + 2^-52 exactly, on any machine: both terms and their sum are exact. Each
    such pair is counted in the first or last bin, never lost."""
    v = np.array([1.0, 2.0**-26])
    assert np.linalg.norm(v) == 1.0 and float(v @ v) == 1 + 2.0**-52  # exact, whatever the kernels
    model = SimpleNamespace(
        wte=np.stack([v, -v, v]), wpe=v[None], shape=SimpleNamespace(position_table=False)
    )
    [(counts, pairs)] = geometry.histograms(cast(Any, SimpleNamespace(model=model))).values()
    assert pairs == 3 and int(counts.sum()) == 3
    assert (counts[0], counts[-1]) == (2, 1)  # v with -v twice, v with its copy once
