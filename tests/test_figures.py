"""--figure: each command's picture read back from its matplotlib artists (tests/drawn.py) and compared with
numpy's own computation of the same rows and with the --json document the command prints; the refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli, run_json
from drawn import captured, drawn
from fakehub import FakeHub
from tinymodel import Tiny

pytest.importorskip("matplotlib")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from pathlib import Path

import pytest

from gpt2emb.errors import COMMAND_LINE, UsageError
from gpt2emb.plot import canvas, positions

import gen_figures
from gen_docs import DOCS

RIVER, PAID = "the cat and king", "hello king is a man"


def figured(tmp_path: Path, *args: str, name: str = "figure.png") -> tuple[dict[str, Any], dict[str, Any]]:
    """The --json document of `args --figure FILE`, and what its figure drew."""
    target = tmp_path / name
    with captured() as figures:
        doc = run_json(*args, "--figure", str(target))
    assert len(figures) == 1 and target.stat().st_size > 1000
    assert doc["figure"] == str(target)
    return doc, drawn(figures[0])


def same_document(tmp_path: Path, *args: str) -> dict[str, Any]:
    """--json with --figure prints the document it prints without, plus the key naming the figure; the
    figure's data."""
    doc, data = figured(tmp_path, *args)
    assert "figure" not in (plain := run_json(*args))
    assert {k: v for k, v in doc.items() if k != "figure"} == plain
    return data


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    scaled: np.ndarray = x / np.linalg.norm(x, axis=-1, keepdims=True)
    return scaled


def pca_plane(rows: np.ndarray) -> np.ndarray:
    """The rows on their first two principal axes, by numpy's SVD of the centred rows."""
    centred = rows - rows.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    plane: np.ndarray = centred @ vt[:2].T
    return plane


def assert_same_plane(drawn_xy: np.ndarray, expected: np.ndarray) -> None:
    """The same points up to each axis's sign, which a decomposition may flip."""
    for axis in range(2):
        a, b = drawn_xy[:, axis], expected[:, axis]
        sign = 1.0 if a @ b >= 0 else -1.0
        np.testing.assert_allclose(a, sign * b, atol=1e-5)


def test_vector_strips_are_the_rows_on_one_shared_scale(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    words = ["king", "queen", "man", "woman"]
    data = same_document(tmp_path, "vector", *words)
    (panel,) = data["panels"]
    image = np.array(panel["images"][0])
    np.testing.assert_allclose(image, tiny.wte[[tiny.id(w) for w in words]], atol=1e-6)
    assert panel["ylabels"] == [f'"{w}"' for w in words]
    assert data["title"].replace("\n", " ") == (
        "gpt2: do the rows of wte for king, queen, man, woman stand out in the same dimensions? "
        "(a column of one colour down the strips)"
    )
    _, one = figured(tmp_path, "vector", "king")  # one word: no question of what is shared
    assert one["title"] == "gpt2: which of the 32 dimensions of the row of wte for king stand out?"


def test_vector_figure_is_drawn_from_the_printed_rows(hub: FakeHub, tmp_path: Path) -> None:
    doc, data = figured(tmp_path, "vector", "gato", "id:5")  # a split word, pooled; a token by its id
    image = np.array(data["panels"][0]["images"][0])
    np.testing.assert_allclose(image, [item["vector"] for item in doc["items"]], atol=1e-6)


def test_neighbors_points_are_the_rows_on_their_principal_plane(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    data = same_document(tmp_path, "neighbors", "cat", "-k", "6")
    doc = run_json("neighbors", "cat", "-k", "6")
    found = doc["items"][0]["neighbors"]
    rows = np.vstack([tiny.wte[tiny.id("cat")], tiny.wte[[n["id"] for n in found]]]).astype(np.float64)
    (panel,) = data["panels"]
    assert_same_plane(np.array(panel["points"][0]), pca_plane(rows))
    assert (
        "nearness on it is not cosine" in data["caption"] and "is its cosine to the word" in data["caption"]
    )
    assert panel["texts"][0] == '" cat" (the word)'  # a token, its leading space shown
    assert panel["texts"][1:] == [
        f'"{n["token"]}" {n["score"]:.3f}' for n in found
    ]  # the leading space shows
    for text, n in zip(panel["texts"][1:], found, strict=True):  # the cosine written is the row's own
        cosine = unit(tiny.wte[n["id"]]) @ unit(tiny.wte[tiny.id("cat")])
        assert float(text.rsplit(" ", 1)[1]) == pytest.approx(cosine, abs=6e-4)


def test_neighbors_of_several_words_draw_a_panel_each(hub: FakeHub, tmp_path: Path) -> None:
    _, data = figured(tmp_path, "neighbors", "cat", "dog", "-k", "3")
    assert [p["title"] for p in data["panels"]] == [
        '"cat" and its 3 nearest tokens',
        '"dog" and its 3 nearest tokens',
    ]


def test_analogy_draws_inputs_point_answers_and_the_two_displacements(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    data = same_document(tmp_path, "analogy", "king", "man", "woman", "-k", "4")
    doc = run_json("analogy", "king", "man", "woman", "-k", "4")
    king, man, woman = (tiny.wte[tiny.id(w)].astype(np.float64) for w in ("king", "man", "woman"))
    answers = [tiny.wte[r["id"]] for r in doc["results"]]
    rows = np.vstack([king, man, woman, king - man + woman, *answers])
    (panel,) = data["panels"]
    inputs, point, ranked = (np.array(p) for p in panel["points"])
    assert_same_plane(np.vstack([inputs, point, ranked]), pca_plane(rows))
    # the inputs are drawn, and marked, though the ranking leaves them out
    assert not any(r["input"] for r in doc["results"])
    assert [t for t in panel["texts"] if "(input)" in t] == [
        '" king" (input)',
        '" man" (input)',
        '" woman" (input)',
    ]
    # man -> woman beside king -> the first answer (queen, exactly king - man + woman in the tiny model)
    assert doc["results"][0]["token"] == " queen"
    (man_from, woman_to), (king_from, answer_to) = (np.array(a) for a in panel["arrows"])
    np.testing.assert_allclose([man_from, woman_to, king_from], inputs[[1, 2, 0]])
    np.testing.assert_allclose(answer_to, ranked[0])
    np.testing.assert_allclose(woman_to - man_from, answer_to - king_from, atol=1e-5)


def test_a_sum_in_the_chapters_notation_draws_each_term_and_the_point_it_reaches(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    words = ["king", "man", "woman", "cat", "dog"]
    doc, data = figured(
        tmp_path, "analogy", "king", "-", "man", "+", "woman", "-", "cat", "+", "dog", "-k", "3"
    )
    king, man, woman, cat, dog = (tiny.wte[tiny.id(w)].astype(np.float64) for w in words)
    answers = [tiny.wte[r["id"]] for r in doc["results"]]
    rows = np.vstack([king, man, woman, cat, dog, king - man + woman - cat + dog, *answers])
    (panel,) = data["panels"]
    assert_same_plane(np.vstack([np.array(p) for p in panel["points"]]), pca_plane(rows))
    assert [t for t in panel["texts"] if "(input)" in t] == [f'" {w}" (input)' for w in words]
    assert panel["arrows"] == []  # the two displacements are A - B + C's alone


def test_analogy_by_3cosadd_draws_unit_rows(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    doc, data = figured(tmp_path, "analogy", "king", "man", "woman", "-k", "3", "--method", "3cosadd")
    king, man, woman = (unit(tiny.wte[tiny.id(w)]) for w in ("king", "man", "woman"))
    rows = np.vstack(
        [king, man, woman, king - man + woman, *(unit(tiny.wte[r["id"]]) for r in doc["results"])]
    )
    points = np.vstack([np.array(p) for p in data["panels"][0]["points"]])
    assert_same_plane(points, pca_plane(rows))


def test_similarity_heatmap_holds_the_cosines_and_writes_them(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    words = ["king", "queen", "man", "cat"]
    data = same_document(tmp_path, "similarity", *words)
    rows = unit(tiny.wte[[tiny.id(w) for w in words]])
    (panel,) = data["panels"]
    np.testing.assert_allclose(np.array(panel["images"][0]), rows @ rows.T, atol=1e-6)
    assert panel["texts"] == [f"{x:.2f}" for x in (rows @ rows.T).ravel()]


def test_sizes_sets_each_models_single_pieces_side_by_side(hub: FakeHub, tmp_path: Path) -> None:
    """A panel per GPT-2 size: wte, one block, its largest matrix, wpe, the final norm, each a bar of the
    count sizes prints (a block by GPT-2's formula, 12 d² + 13 d; the MLP's matrix d x 4d); wte the longest
    bar in all four."""
    data = same_document(tmp_path, "sizes")
    doc = run_json("sizes")
    assert len(data["panels"]) == len(doc["models"]) == 4
    for panel, m in zip(data["panels"], doc["models"], strict=True):
        d = m["d_model"]
        assert m["block_params"] == m["n_layer"] * (12 * d * d + 13 * d)
        expected = [m["wte_params"], 12 * d * d + 13 * d, 4 * d * d, m["wpe_params"], m["final_ln_params"]]
        widths = [b[2] for b in panel["bars"]]
        assert widths == pytest.approx([n / 1e6 for n in expected])
        assert max(widths) == widths[0]  # wte, the largest single piece
        assert panel["ylabels"][0] == f"wte (50,257 tokens x {d:,})"
        assert panel["texts"][0] == f"{m['wte_params'] / 1e6:,.1f} M" and panel["texts"][-1] == f"{2 * d:,}"
        assert f"wte {m['wte_share']:.1%}" in panel["title"] and m["name"] in panel["title"]
        assert "outweighs" not in panel["xlabel"]
    assert "is wte (red) the largest single piece?" in data["title"]


def test_sizes_of_a_checkpoint_says_why_wte_is_not_its_largest_piece(hub: FakeHub, tmp_path: Path) -> None:
    doc, data = figured(tmp_path, "sizes", "-m", "gpt2")
    (m,) = doc["models"]
    (panel,) = data["panels"]
    rest = m["total_params"] - m["wte_params"] - m["wpe_params"]  # tied: no output layer of its own
    widths = [b[2] for b in panel["bars"]]
    assert widths == pytest.approx([m["wte_params"] / 1e3, rest // m["n_layer"] / 1e3, m["wpe_params"] / 1e3])
    assert m["wpe_params"] > m["wte_params"]  # the tiny model: 1,024 positions against 343 tokens
    assert "wpe outweighs wte: 1,024 positions against only 343 tokens" in panel["xlabel"].replace("\n", " ")


def test_geometry_histograms_count_the_cosines(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    data = same_document(tmp_path, "geometry")
    tokens, positions = unit(tiny.wte), unit(tiny.wpe)
    edges = np.linspace(-1, 1, 201)
    upper = np.triu_indices(len(tokens), 1)
    expected = {
        "token pairs": np.einsum("id,id->i", tokens[upper[0]], tokens[upper[1]]),
        "position pairs": (positions @ positions.T)[np.triu_indices(len(positions), 1)],
        "token against position": (tokens @ positions.T).ravel(),
    }
    assert [p["title"].split(" (")[0] for p in data["panels"]] == list(expected)
    d = tiny.wte.shape[1]
    from scipy.stats import beta

    for panel, cosines in zip(data["panels"], expected.values(), strict=True):
        counts, _ = np.histogram(cosines, edges)
        (steps,) = panel["steps"]
        assert sum(steps) == len(cosines)
        assert np.abs(np.array(steps) - counts).sum() <= 4  # a cosine on a bin's edge may round either way
        # random directions: (1 + cos) / 2 is Beta((d-1)/2, (d-1)/2); drawn as pairs per bin of 0.01
        (curve,) = panel["lines"]
        c, y = np.array(curve).T
        expected_y = len(cosines) * 0.01 * beta.pdf((1 + c) / 2, (d - 1) / 2, (d - 1) / 2) / 2
        np.testing.assert_allclose(y, expected_y, rtol=1e-9, atol=1e-9)
    assert f"{d:,} dimensions" in data["title"]


def test_context_lines_are_each_pair_layer_by_layer(hub: FakeHub, tmp_path: Path) -> None:
    third = "a king and a cat"
    data = same_document(tmp_path, "context", "king", RIVER, PAID, third)
    doc = run_json("context", "king", RIVER, PAID, third)
    (panel,) = data["panels"]
    pairs = doc["layers"][0]["pairs"]
    assert len(pairs) == 3
    for p, line in enumerate(panel["lines"][:3]):
        xy = np.array(line)
        assert list(xy[:, 0]) == [layer["layer"] for layer in doc["layers"]]
        np.testing.assert_allclose(xy[:, 1], [layer["pairs"][p]["cosine"] for layer in doc["layers"]])
    marker = np.array(panel["lines"][3])
    assert set(marker[:, 0]) == {0.0}  # layer 0 marked
    assert any(t.startswith("layer 0: wte + wpe") for t in panel["texts"])
    assert panel["ylim"][0] == 0.0 and panel["ylim"][1] >= 1.0  # the whole scale: a small change looks small


def test_context_lines_that_coincide_are_each_seen_and_said(hub: FakeHub, tmp_path: Path) -> None:
    """king's vectors in sentences 1 and 2 and in 2 and 3 are alike to 3 decimals at every layer: both lines
    are drawn, each with a marker and dash of its own, and the legend says they coincide."""
    args = ("context", "king", RIVER, PAID, "queen and king and king")
    doc = run_json(*args)
    first, _, third = ([layer["pairs"][p]["cosine"] for layer in doc["layers"]] for p in range(3))
    assert np.allclose(first, third, atol=5e-4)
    with captured() as figures:
        run_json(*args, "--figure", str(tmp_path / "c.png"))
    (ax,) = [a for a in figures[0].axes if a.get_label() != "<colorbar>"]
    shown = ax.get_legend()
    assert shown is not None
    legend = [t.get_text() for t in shown.get_texts()]
    assert legend[2].endswith("(= 1 vs 2 to 3 decimals)") and "(=" not in legend[0] + legend[1]
    styles = {(line.get_marker(), line.get_linestyle()) for line in ax.lines[:3]}
    assert len(styles) == 3


@pytest.mark.parametrize(("suffix", "magic"), [(".svg", b"<?xml"), (".pdf", b"%PDF"), (".PNG", b"\x89PNG")])
def test_the_format_follows_the_extension(hub: FakeHub, tmp_path: Path, suffix: str, magic: bytes) -> None:
    target = tmp_path / f"king{suffix}"
    result = run_cli("vector", "king", "--figure", str(target))
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes().startswith(magic)
    assert f"figure written to {target}" in result.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["vector", "king", "--figure", "king.jpg"], ".png, .svg or .pdf"),
        (["vector", "king", "--figure", "king"], ".png, .svg or .pdf"),
        (["vector", "-", "--figure", "king.png"], "not - (stdin)"),
        (["neighbors", "cat", "--jsonl", "--figure", "cat.png"], "--jsonl"),
        (["analogy", "--eval", "q.txt", "--figure", "q.png"], "--eval"),
        (["similarity", "--eval", "w.tsv", "--figure", "w.png"], "--eval"),
        (["similarity", "cat", "dog", "-m", "gpt2", "-m", "xl", "--figure", "s.png"], "one -m"),
        (["analogy", "king", "man", "woman", "-m", "gpt2", "-m", "xl", "--figure", "a.png"], "one -m"),
        (["sizes", "-m", "gpt2", "-m", "xl", "--figure", "s.png"], "one -m"),
    ],
)
def test_figure_refusals_are_one_line_before_anything_is_fetched(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli(*args)
    assert result.exit_code == 2 and said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert hub.requests == [] and list(tmp_path.iterdir()) == []


def test_a_folder_where_the_figure_goes_is_refused_before_anything_is_fetched(
    hub: FakeHub, tmp_path: Path
) -> None:
    (tmp_path / "pictures.png").mkdir()
    result = run_cli("geometry", "--figure", str(tmp_path / "pictures.png"))
    assert result.exit_code == 2 and "is a folder: --figure writes a regular file" in result.stderr
    assert hub.requests == []


def test_figure_without_matplotlib(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [plot] extra were not installed
    result = run_cli("neighbors", "cat", "--figure", str(tmp_path / "x.png"))
    assert result.exit_code == 2 and '--figure needs matplotlib: pip install "gpt2emb[plot]"' in result.stderr
    assert hub.requests == []


def test_positions_draws_its_three_panels_and_writes_a_flat_norm(
    hub: FakeHub, tiny: Tiny, tmp_path: Path
) -> None:
    """The tiny model's rows all have norm 2 but for float rounding: the panel writes 2, it draws no line of
    rounding; the heatmap is the cosines."""
    doc, data = figured(tmp_path, "positions")
    assert doc["png"] == doc["figure"]
    heat, norms, _ = data["panels"]
    rows = unit(tiny.wpe)
    np.testing.assert_allclose(np.array(heat["images"][0]), rows @ rows.T, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(tiny.wpe, axis=1), 2.0, rtol=1e-6)
    assert norms["lines"] == [] and norms["texts"][0].startswith("every row's norm is 2\n")


def test_a_norm_that_varies_is_drawn_and_rounding_is_not() -> None:

    matrix, components = np.eye(4), np.arange(12.0).reshape(4, 3)
    varied = positions.figure(matrix, np.array([1.0, 2.0, 3.0, 4.0]), components, "m")
    flat = positions.figure(matrix, np.array([2.0, 2.0 + 1e-7, 2.0 - 1e-7, 2.0]), components, "m")
    (line,) = drawn(varied)["panels"][1]["lines"]
    assert np.array(line)[:, 1].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert drawn(flat)["panels"][1]["lines"] == [] and "norm is 2\n" in drawn(flat)["panels"][1]["texts"][0]
    assert positions.flat(np.array([1.0, 1.0 + 2e-6])) is False


def test_a_document_without_figure_is_unchanged(hub: FakeHub) -> None:
    """The key is in a document only when a figure was drawn: every other document is as it was."""
    for args in (["vector", "king"], ["neighbors", "cat"], ["similarity", "cat", "dog"], ["sizes"]):
        assert "figure" not in json.dumps(run_json(*args))


COMMANDS = ("vector", "neighbors", "analogy", "similarity", "sizes", "geometry", "context", "positions")


@pytest.mark.parametrize("name", COMMANDS)
def test_the_docs_figure_is_drawn_again_alike(hub: FakeHub, tmp_path: Path, name: str) -> None:
    """Each command page shows its figure (docs/img/NAME.svg, drawn by the page's own --figure line from the
    tiny example model); drawn again now, it draws the data kept beside it (NAME.json)."""
    page = (DOCS / "commands" / f"{name}.md").read_text()
    assert [n for _, n in gen_figures.figure_lines(page)] == [f"{name}.svg"]
    assert f"](../img/{name}.svg)" in page and (gen_figures.IMG / f"{name}.svg").stat().st_size > 1000
    made = gen_figures.make(hub, tmp_path, only=f"{name}.svg")[f"{name}.svg"]
    kept = json.loads((gen_figures.IMG / f"{name}.json").read_text())
    assert gen_figures.same_data(kept, made)
    assert (tmp_path / f"{name}.svg").read_bytes().startswith(b"<?xml")


def test_same_data_tolerates_rounding_but_not_a_change() -> None:
    kept = {
        "title": "t",
        "panels": [{"lines": [[[0.0, 0.5]]], "steps": [[10, 20, 30]], "texts": ['" cat" 0.9']}],
    }
    rounded = json.loads(json.dumps(kept).replace("0.5", "0.500001").replace("20, 30", "19, 31"))
    assert gen_figures.same_data(kept, rounded)
    assert not gen_figures.same_data(kept, json.loads(json.dumps(kept).replace("0.5", "0.51")))
    assert not gen_figures.same_data(kept, json.loads(json.dumps(kept).replace("20, 30", "10, 40")))
    assert not gen_figures.same_data(kept, json.loads(json.dumps(kept).replace("cat", "dog")))


def test_a_big_image_is_kept_as_a_digest_that_notices_one_cell() -> None:
    """positions' 1,024 x 1,024 heatmap is kept as its row and column sums and every 32nd cell (docs/img
    stays small): rounding passes, a change of one cell that no kept cell shows does not."""
    image = np.subtract.outer(np.arange(100.0), np.arange(100.0)) / 100  # cell (i, j) holds (i - j) / 100
    image[3, 5] = np.nan

    def digest_of(cells: np.ndarray) -> Any:
        listed: list[list[float]] = cells.tolist()
        return gen_figures.rounded(
            gen_figures.digest([[None if c != c else c for c in row] for row in listed])
        )

    kept = digest_of(image)
    assert kept["shape"] == [100, 100] and kept["step"] == 4 and kept["blank"] == 1
    assert np.array(kept["cells"]).shape == (25, 25) and kept["cells"][1][:3] == [0.04, 0.0, -0.04]
    assert kept["row_sums"][2] == pytest.approx(2 - 49.5) and kept["row_sums"][3] == pytest.approx(
        3 - 49.5 + 0.02
    )
    assert kept["column_sums"][7] == pytest.approx(49.5 - 7)
    assert gen_figures.digest([[0.5, 1.0]]) == [[0.5, 1.0]]  # a small image is kept whole
    assert gen_figures.same_data(kept, digest_of(image + 1e-7))
    changed = image.copy()
    changed[50, 51] += 0.01  # neither row 50's nor column 51's cells are kept (every 4th)
    assert not gen_figures.same_data(kept, digest_of(changed))
    assert not gen_figures.same_data(kept, digest_of(image.T))


def test_every_docs_figure_s_data_is_small() -> None:
    sizes = {path.name: path.stat().st_size for path in sorted(gen_figures.IMG.glob("*.json"))}
    assert len(sizes) >= 9 and max(sizes.values()) < 200_000, sizes


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # tmp_path: nothing is made in it
@given(
    name=st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=20),
    suffix=st.sampled_from(["", ".png", ".PNG", ".svg", ".Pdf", ".jpg", ".png.txt", ".svgz", "."]),
)
def test_a_figure_is_a_png_svg_or_pdf_whatever_its_name(tmp_path: Path, name: str, suffix: str) -> None:
    """Any file name: accepted exactly when its extension is one of the three (any case), else one message
    naming them; nothing is made either way."""
    from gpt2emb.plot import check_figure

    path = tmp_path / f"{name}{suffix}"
    token = COMMAND_LINE.set(True)
    try:
        if path.suffix.lower() in (".png", ".svg", ".pdf") and not path.is_dir():
            assert check_figure(str(path)) == str(path)
        else:
            with pytest.raises(UsageError, match=r"\.png, \.svg or \.pdf|is a folder"):
                check_figure(str(path))
    finally:
        COMMAND_LINE.reset(token)
    assert not path.exists() or path.is_dir()


PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("MODULES=" + ",".join(sorted(sys.modules)) + "\\n"))
sys.argv = ["gpt2emb"] + sys.argv[1:]
from gpt2emb.cli import main
main()
"""


@pytest.mark.parametrize("figure", [False, True])
def test_matplotlib_and_the_plot_code_load_for_a_figure_alone(
    hub: FakeHub, tmp_path: Path, figure: bool
) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0  # builds the cache: the run below is warm
    args = ["neighbors", "cat", *(["--figure", str(tmp_path / "cat.svg")] if figure else [])]
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    modules = next(x for x in proc.stderr.splitlines() if x.startswith("MODULES=")).split("=")[1].split(",")
    loaded = {m for m in modules if m.split(".")[0] == "matplotlib" or m.startswith("gpt2emb.plot")}
    if figure:
        assert {"matplotlib", "gpt2emb.plot", "gpt2emb.plot.neighbors"} <= loaded
    else:
        assert loaded == set()


pytest.importorskip("matplotlib")


def test_every_figure_s_look_is_read_back() -> None:
    fig = canvas.new_figure(4, 3)
    ax = fig.add_subplot()
    ax.scatter([1, 2], [1, 2], s=[90, 30], c=["tab:red", "tab:blue"], zorder=2)
    look = drawn(fig)["panels"][0]["look"]
    assert look["points"] == [[[90.0, 30.0], [["#d62728ff", 1], ["#1f77b4ff", 1]], 26, 2]]
