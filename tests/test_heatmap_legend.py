"""The heatmap of positions --heatmap, as a person sees it on any terminal: every cell of its legend (and of
the map) a character, never a coloured space, and colours that stand out on a dark and on a light
background alike."""

from __future__ import annotations

import re

from gpt2emb.output.views.positions import _cell

from conftest import run_cli, run_process
from fakehub import FakeHub

LEGEND = re.compile(r"^ +-1 (.*) \+1$", re.MULTILINE)


def legend_cells(text: str) -> list[str]:
    (cells,) = LEGEND.findall(text)
    assert len(cells) == 2 * 9  # -1 to +1 by 0.25, two characters each
    return [cells[i : i + 2] for i in range(0, len(cells), 2)]


def test_every_legend_cell_is_a_character(hub: FakeHub) -> None:
    shown = run_cli("positions", "--heatmap", "--cells", "8")
    assert shown.exit_code == 0
    cells = legend_cells(shown.stdout)
    assert all(c[0] == c[1] and c[0].strip() for c in cells), cells
    assert cells[0] == "··" and cells[-1] == "██"  # the lowest shade to the highest
    rows = [line for line in shown.stdout.splitlines() if re.match(r"^ *\d+ ", line)]
    assert len(rows) == 8 and all(" " not in row.strip().split(" ", 1)[1] for row in rows)


def test_without_colour_or_unicode_every_legend_cell_is_a_character(hub: FakeHub) -> None:
    """NO_COLOR in a real process, and an encoding without the shade characters (the ASCII shades)."""
    run = run_process(
        "positions", "--heatmap", "--cells", "8", env={"NO_COLOR": "1", "PYTHONIOENCODING": "ascii"}
    )
    assert run.returncode == 0, run.stderr
    cells = legend_cells(run.stdout)
    assert all(c[0] == c[1] and c[0].strip() for c in cells), cells
    assert [c[0] for c in cells] == list("..::-++##")


def contrast(rgb: tuple[int, ...], background: tuple[int, int, int]) -> float:
    """WCAG's contrast ratio of two colours."""

    def luminance(c: tuple[int, ...]) -> float:
        linear = [x / 255 / 12.92 if x / 255 <= 0.03928 else ((x / 255 + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    a, b = sorted((luminance(rgb), luminance(background)))
    return (b + 0.05) / (a + 0.05)


def test_every_colour_stands_out_on_black_and_on_white() -> None:
    for v in (k / 100 for k in range(-100, 101)):
        _, style = _cell(v)
        rgb = tuple(int(x) for x in re.findall(r"\d+", style))
        assert style == "rgb({},{},{})".format(*rgb)
        assert contrast(rgb, (0, 0, 0)) >= 3 and contrast(rgb, (255, 255, 255)) >= 3, (v, rgb)
