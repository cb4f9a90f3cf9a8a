"""What the modules of plot/ draw, pinned on known answers where a mutation run found them loose (issue 53):
how panels are laid out for several words, the titles past six words, a strip's colour scale, the lines of
many pairs and a scale that goes below 0, which cells hold their number, the single pieces of a model and the
counts beside them, the title's wrapping, a cell's token cut short and the pixels of a PNG."""

from __future__ import annotations

import dataclasses
import re
import struct
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from conftest import run_cli
from drawn import captured, drawn
from fakehub import FakeHub
from tinymodel import Tiny, save_local

pytest.importorskip("matplotlib")
from matplotlib.figure import Figure

from gpt2emb import plot
from gpt2emb.errors import COMMAND_LINE, UsageError
from gpt2emb.plot import canvas, context, geometry, logits, neighbors, positions, similarity, sizes, vector

Recorded = Callable[..., tuple[Any, tuple[Any, ...], Figure]]


def legend_texts(ax: Any) -> list[Any]:
    """The texts of a panel's legend (a panel drawn with one)."""
    legend = ax.get_legend()
    assert legend is not None
    return list(legend.get_texts())


@pytest.fixture
def recorded(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Recorded:
    """A command line run with --figure: the result and rows plot.draw was given, and the figure drawn."""

    def run(*args: str, name: str = "f.png") -> tuple[Any, tuple[Any, ...], Figure]:
        got: list[tuple[Any, tuple[Any, ...]]] = []
        draw = plot.draw

        def keep(stem: str, result: Any, path: str, *rows: Any) -> Any:
            got.append((result, rows))
            return draw(stem, result, path, *rows)

        monkeypatch.setattr(plot, "draw", keep)
        with captured() as figures:
            done = run_cli(*args, "--figure", str(tmp_path / name))
        monkeypatch.setattr(plot, "draw", draw)
        assert done.exit_code == 0, done.stderr
        ((result, rows),), (fig,) = got, figures
        return result, rows, fig

    return run


def bounds(fig: Figure) -> list[tuple[float, ...]]:
    return [tuple(round(v, 6) for v in ax.get_position().bounds) for ax in fig.axes]


# ---- neighbors


def test_neighbors_of_four_words_stand_three_a_row_each_panel_7_by_6_inches(recorded: Recorded) -> None:
    result, _, fig = recorded("neighbors", "king", "queen", "man", "woman", "-k", "3")
    assert list(fig.get_size_inches()) == [21.0, 12.4]  # 3 panels across, 2 rows, and the caption
    (a, b, c, d) = bounds(fig)
    assert a[1] == b[1] == c[1] > d[1] and a[0] == d[0] < b[0] < c[0]
    assert fig.get_suptitle() == f"{result.model}: which tokens lie nearest to king, queen, man, woman?"


def test_neighbors_title_names_six_words_and_says_there_are_more(recorded: Recorded) -> None:
    result, rows, _ = recorded("neighbors", "king", "queen", "man", "-k", "2")
    six = neighbors.figure(dataclasses.replace(result, items=result.items * 2), *rows)
    seven = neighbors.figure(dataclasses.replace(result, items=result.items * 2 + result.items[:1]), *rows)
    assert six.get_suptitle().endswith("nearest to king, queen, man, king, queen, man?")
    assert seven.get_suptitle().endswith("nearest to king, queen, man, king, queen, man, ...?")
    assert len(seven.axes) == 7 and list(seven.get_size_inches()) == [21.0, 18.4]


# ---- vector


def test_vector_of_one_word_asks_which_dimensions_stand_out(recorded: Recorded) -> None:
    result, _, fig = recorded("vector", "king")
    d = len(result.items[0].vector)
    assert (
        fig.get_suptitle()
        == f"{result.model}: which of the {d:,} dimensions of the row of wte for king stand out?"
    )
    assert fig.axes[0].get_xlabel() == f"dimension (0 to {d - 1})"


def test_vector_title_names_six_words_and_says_there_are_more(recorded: Recorded) -> None:
    result, _, _ = recorded("vector", "king", "queen")
    six = vector.question(dataclasses.replace(result, items=result.items * 3), 32)
    seven = vector.question(dataclasses.replace(result, items=result.items * 3 + result.items[:1]), 32)
    assert "wte for king, queen, king, queen, king, queen stand out in the same dimensions?" in six
    assert "wte for king, queen, king, queen, king, queen, ... stand out in the same dimensions?" in seven


def test_vector_strips_share_a_scale_from_their_largest_magnitude(recorded: Recorded) -> None:
    result, rows, _ = recorded("vector", "king", "queen")

    def clim(*vectors: tuple[float, ...]) -> tuple[float, float]:
        items = tuple(
            dataclasses.replace(item, vector=v) for item, v in zip(result.items, vectors, strict=True)
        )
        fig = vector.figure(dataclasses.replace(result, items=items), *rows)
        return fig.axes[0].images[0].get_clim()

    assert clim((0.1, -0.5, 0.2), (0.25, 0.0, 0.3)) == (-0.5, 0.5)  # below 1: the largest, not 1
    assert clim((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == (-1.0, 1.0)  # all zero: a scale of 1 all the same
    assert clim((np.nan, np.nan, np.nan), (np.nan, np.nan, np.nan)) == (-1.0, 1.0)
    assert clim((np.nan, 3.0, 0.0), (-2.0, 0.0, 0.0)) == (-3.0, 3.0)
    fig = vector.figure(result, *rows)
    assert list(fig.get_size_inches()) == [11.0, 1.2 + 0.45 * 2]


# ---- context


def with_cosines(result: Any, cosine: Callable[[int, int], float | None]) -> Any:
    """The result with each pair's cosine at each layer made by cosine(layer, pair)."""
    layers = tuple(
        dataclasses.replace(
            layer, pairs=tuple(dataclasses.replace(p, cosine=cosine(i, j)) for j, p in enumerate(layer.pairs))
        )
        for i, layer in enumerate(result.layers)
    )
    return dataclasses.replace(result, layers=layers)


def test_context_lines_of_six_pairs_each_keep_a_marker_and_a_dash(recorded: Recorded) -> None:
    result, _, fig = recorded("context", "king", "the king", "a king", "and king", "is king")
    lines = fig.axes[0].lines[:6]
    assert [ln.get_marker() for ln in lines] == ["o", "s", "^", "D", "v", "P"]
    assert [ln.get_markersize() for ln in lines] == [9, 7, 5, 3, 3, 3]  # smaller each time, down to 3
    assert [ln.get_linestyle() for ln in lines] == ["-", "--", ":", "-.", "-", "--"]
    names = [t.get_text().split(":")[0] for t in legend_texts(fig.axes[0])]
    assert names == ["1 vs 2", "1 vs 3", "1 vs 4", "2 vs 3", "2 vs 4", "3 vs 4"]
    assert (
        fig.axes[0].get_ylim()[0] == 0.0 or min(p.cosine for layer in result.layers for p in layer.pairs) < 0
    )


def test_context_scale_goes_below_0_only_for_a_negative_cosine(recorded: Recorded) -> None:
    result, _, _ = recorded("context", "king", "the king", "a king", "and king")
    low = context.figure(with_cosines(result, lambda i, j: -0.3 if (i, j) == (1, 2) else 0.5))
    assert low.axes[0].get_ylim() == pytest.approx((-0.35, 1.05))
    high = context.figure(with_cosines(result, lambda i, j: 0.2 + 0.1 * j))
    assert high.axes[0].get_ylim() == (0.0, 1.05)
    blank = context.figure(with_cosines(result, lambda i, j: None))
    assert blank.axes[0].get_ylim() == (0.0, 1.05)
    # layer 0 is marked at x = 0, its note just right of it, at the foot
    (mark,) = [ln for ln in low.axes[0].lines if ln.get_linestyle() == ":" and ln.get_color() == "grey"]
    assert list(np.asarray(mark.get_xdata())) == [0, 0] and mark.get_linewidth() == 1
    (note,) = cast(list[Any], low.axes[0].texts)  # an Annotation: its point and offset
    assert note.xy == (0, 0.02) and note.xyann == (6, 0) and note.get_fontsize() == 8


def test_context_says_which_lines_coincide_to_3_decimals(recorded: Recorded) -> None:
    result, _, _ = recorded("context", "king", "the king", "a king", "and king")
    fig = context.figure(with_cosines(result, lambda i, j: 0.5 + (0.0004, 0.0, 0.0012)[j]))
    said = [t.get_text() for t in legend_texts(fig.axes[0])]
    # 1 vs 3 lies 0.0004 under 1 vs 2: the same to 3 decimals; 2 vs 3, 0.0008 over it and 0.0012 over
    # 1 vs 3, is a line of its own
    assert "(=" not in said[0] and said[1].endswith("(= 1 vs 2 to 3 decimals)") and "(=" not in said[2]


# ---- similarity


def test_similarity_writes_each_cell_s_number_up_to_30_words(recorded: Recorded) -> None:
    result, _, fig = recorded("similarity", "king", "queen")
    assert list(fig.get_size_inches()) == [3 + 1.2 + 1.5, 3 + 1.2]

    def many(n: int) -> Figure:
        items = (result.items * n)[:n]
        matrix = tuple(tuple(0.5 for _ in range(n)) for _ in range(n))
        return similarity.figure(dataclasses.replace(result, items=items, matrix=matrix))

    assert len(many(30).axes[0].texts) == 900 and list(many(30).get_size_inches()) == [22.5, 21.0]
    assert len(many(31).axes[0].texts) == 0 and list(many(45).get_size_inches()) == [31.5, 30.0]


def test_similarity_cells_dark_past_0_6_written_in_white(recorded: Recorded) -> None:
    result, _, _ = recorded("similarity", "king", "queen")
    fig = similarity.figure(dataclasses.replace(result, matrix=((0.6, 0.61), (-0.7, None))))
    shown = [(t.get_text(), t.get_color(), t.get_fontsize()) for t in fig.axes[0].texts]
    assert shown == [("0.60", "black", 9), ("0.61", "white", 9), ("-0.70", "white", 9), ("-", "black", 9)]
    assert fig.axes[0].images[0].get_clim() == (-1, 1)
    assert [t.get_rotation() for t in fig.axes[0].get_xticklabels()] == [45, 45]


# ---- sizes


def test_a_count_is_in_millions_from_a_million() -> None:
    assert sizes.count(999_999) == "999,999" and sizes.count(1_000_000) == "1.0 M"
    assert sizes.count(1_557_611_200) == "1,557.6 M" and sizes.count(38_597_376) == "38.6 M"


def test_a_long_name_is_cut_into_lines_of_40() -> None:
    assert sizes._lines("a" * 85) == "a" * 40 + "\n" + "a" * 40 + "\n" + "a" * 5
    assert sizes._lines("gpt2") == "gpt2" and sizes._lines("") == ""


def test_gpt2_s_single_pieces_by_the_formula(recorded: Recorded) -> None:
    result, _, fig = recorded("sizes")
    gpt2 = result.models[0]
    assert gpt2.name == "gpt2"
    assert sizes.pieces(gpt2) == {
        "wte (50,257 tokens x 768)": 38_597_376,
        "one block, whole (of 12)": 7_087_872,
        "one block's largest matrix (MLP, 768 x 3,072)": 2_359_296,
        "wpe (1,024 positions x 768)": 786_432,
        "the final layer norm": 1_536,
    }
    assert sizes.why_not(gpt2, sizes.pieces(gpt2)) is None
    ax = fig.axes[0]
    bars = [p.get_width() for p in cast(list[Any], ax.patches)]
    assert bars == pytest.approx([38.597376, 7.087872, 2.359296, 0.786432, 0.001536])
    assert ax.get_xlim() == pytest.approx((0, 38.597376 * 1.3))
    assert [t.get_text() for t in ax.texts] == ["38.6 M", "7.1 M", "2.4 M", "786,432", "1,536"]
    assert [t.get_position()[0] for t in ax.texts] == pytest.approx([b + 38.597376 * 0.02 for b in bars])
    assert ax.get_title() == "gpt2: 124 M in all, wte 31.0%" and ax.get_xlabel() == "parameters (millions)"
    assert list(fig.get_size_inches()) == [15.0, 0.6 + 3.2 * 2]


def test_a_checkpoint_s_pieces_are_counted_and_a_tied_output_left_out(
    recorded: Recorded, tiny: Tiny, tmp_path: Path
) -> None:
    result, _, fig = recorded("sizes", "-m", str(save_local(tiny, tmp_path / "tiny")))
    (m,) = result.models
    rest = m.total_params - m.wte_params - m.wpe_params
    found = sizes.pieces(m)
    assert list(found.values()) == [m.wte_params, rest // m.n_layer, m.wpe_params]
    assert list(found)[1] == f"one block, on average (of {m.n_layer})" and m.output_params == 0
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("parameters (thousands)\n\nHere wpe outweighs wte:")
    assert ax.get_title().endswith(f": {m.total_params:,} in all, wte {m.wte_share:.1%}")
    assert [p.get_width() for p in cast(list[Any], ax.patches)] == pytest.approx(
        [v / 1e3 for v in found.values()]
    )
    untied = dataclasses.replace(m, output_params=m.wte_params, total_params=m.total_params + m.wte_params)
    assert sizes.pieces(untied)["output layer (not tied to wte)"] == m.wte_params
    assert list(sizes.pieces(untied).values())[2] == rest // m.n_layer


# ---- canvas


def test_a_title_wraps_at_the_characters_a_figure_s_width_holds() -> None:
    fig = canvas.new_figure(5, 3)  # 340 points less a margin of 20: 47 characters of 12 points a line
    canvas.suptitle(fig, "x" * 47)
    assert fig.get_suptitle() == "x" * 47
    canvas.suptitle(fig, "word " * 9 + "end")  # 48 characters: cut at a space
    assert fig.get_suptitle() == "word " * 8 + "word\nend"
    assert [t.get_fontsize() for t in fig.texts] == [12]
    narrow = canvas.new_figure(2, 3)  # 124 points: 17 characters, but never fewer than 20
    canvas.suptitle(narrow, "a b c d e f g h i j k l m n o")  # 29 characters
    assert narrow.get_suptitle() == "a b c d e f g h i j\nk l m n o"
    canvas.suptitle(narrow, "a\tb  c " * 4, size=6)  # 6 points: 34 characters a line; tabs and spaces kept
    assert narrow.get_suptitle() == "a\tb  c " * 4


# ---- logits


def test_a_cell_s_token_is_cut_to_10_characters_quotes_included() -> None:
    assert logits.shown("abcdefgh") == '"abcdefgh"' and logits.shown(" king") == '" king"'
    assert logits.shown("abcdefghi") == '"abcdefgh…' and logits.shown("abcdefghijklm") == '"abcdefgh…'


def test_logits_of_one_token_say_its_one_position(recorded: Recorded) -> None:
    result, _, fig = recorded("logits", "king")
    layers = len(result.grid[0].cells)
    title = fig.get_suptitle().replace("\n", " ")
    assert (
        "what each layer would predict next, read through wteᵀ (the logit lens), at its one position" in title
    )
    assert fig.axes[0].get_xlabel().endswith("(the cell: the next token it predicts)")
    assert list(fig.get_size_inches()) == pytest.approx([1.0 + 3.2, max(3.6, 0.42 * layers + 2.2)])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][:1] == ["0 (h0)"]


# ---- the files


def test_a_png_is_drawn_at_110_dpi(recorded: Recorded, tmp_path: Path) -> None:
    recorded("vector", "king", name="v.png")
    head = (tmp_path / "v.png").read_bytes()[:24]
    width, height = struct.unpack(">II", head[16:24])
    assert width == 11 * 110 and abs(height - (1.2 + 0.45) * 110) <= 1


def test_every_figure_s_look_is_read_back() -> None:
    fig = canvas.new_figure(4, 3)
    ax = fig.add_subplot()
    ax.scatter([1, 2], [1, 2], s=[90, 30], c=["tab:red", "tab:blue"], zorder=2)
    look = drawn(fig)["panels"][0]["look"]
    assert look["points"] == [[[90.0, 30.0], [["#d62728ff", 1], ["#1f77b4ff", 1]], 26, 2]]


# ---- geometry


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


# ---- positions


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


# ---- the files


def test_a_figure_without_an_extension_is_a_png_at_the_path_named(tmp_path: Path) -> None:
    fig = canvas.new_figure(2, 1)
    plot.save(fig, str(tmp_path / "wpe"))
    assert (tmp_path / "wpe").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not (tmp_path / "wpe.png").exists()
    token = COMMAND_LINE.set(True)
    try:
        with pytest.raises(
            UsageError, match=r"matplotlib writes no \.txt file; name it \.png, \.svg or \.pdf"
        ):
            plot.save(fig, str(tmp_path / "w.txt"), "figure")
    finally:
        COMMAND_LINE.reset(token)
    assert not (tmp_path / "w.txt").exists()


def test_an_inline_svg_says_its_smallest_text_and_prefixes_its_ids(recorded: Recorded) -> None:
    result, rows, _ = recorded("similarity", "king", "queen")
    made = plot.svg("similarity", result, *rows, prefix="p3-")
    assert made.startswith('<svg data-smallest-text="9" ') and "<?xml" not in made
    ids = re.findall(r'\bid="([^"]+)"', made)
    assert ids and all(i.startswith("p3-") for i in ids)
    assert all(h.startswith("p3-") for h in re.findall(r'href="#([^"]+)"', made))


def test_vector_colour_bar_stays_thin_however_many_strips(recorded: Recorded) -> None:
    """fraction=0.03: the bar takes 3% of the figure's width at most, for two strips or twenty (constrained
    layout sizes it by its aspect while the figure is wide and low, by the fraction once it is tall)."""
    result, rows, _ = recorded("vector", "king", "queen")
    for n in (1, 10):
        fig = vector.figure(dataclasses.replace(result, items=result.items * n), *rows)
        fig.draw_without_rendering()
        _, bar = fig.axes
        assert bar.get_label() == "<colorbar>" and 0 < bar.get_position().width <= 0.03
