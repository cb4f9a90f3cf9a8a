"""core/geometry.py pinned where a mutation run (scripts/mutate.py) found it loose: the note for each figure
that is null (rows of NaN, one and several; a table of zeros, or with one non-zero row), in the words a user
reads, and the sentence that reads content against position on each side of its bar (1.5 times chance)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb.core import geometry
from gpt2emb.results.geometry import CrossGeometry

from conftest import run_cli
from tinymodel import Tiny, save_local

BROKEN = (
    "NaN or infinite values, so its mean_cosine and pc_variance are null (such a row has no direction, and "
    "no variance that is a number)"
)
CROSS = "wte_vs_wpe: mean_abs_cosine, max_abs_cosine and max_pair are null: "
SHOWN_NULL = (  # the JSON's own note on the nulls it writes, said last
    " values are not a finite number (the model's rows hold NaN or infinite values there) and shown as null"
)
NO_MEAN = "wpe: mean_cosine is null: a mean over pairs of rows needs two rows that are not zeros, and wpe has"
NO_VARIANCE = (
    "pc_variance is null: its rows do not vary (every row is the same), so no direction holds any of their "
    "variance"
)


Table = np.ndarray | None  # a table in place of the tiny model's (None: its own)


def notes_of(
    tiny: Tiny, folder: Path, wte: np.ndarray | None = None, wpe: np.ndarray | None = None
) -> list[str]:
    changed = dataclasses.replace(
        tiny, wte=tiny.wte if wte is None else wte, wpe=tiny.wpe if wpe is None else wpe
    )
    made = save_local(changed, folder)
    result = run_cli("geometry", "-m", str(made), "--json")
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return list(doc["notes"])


def test_one_row_of_nan_in_wte(tiny: Tiny, tmp_path: Path) -> None:
    wte = tiny.wte.copy()
    wte[tiny.id("cat")] = np.nan
    notes = notes_of(tiny, tmp_path / "m", wte=wte)
    assert notes[:-1] == [f"wte: 1 row holds {BROKEN}", f"{CROSS}a row of wte holds NaN or infinite values"]
    assert notes[-1].endswith(SHOWN_NULL)


def test_rows_of_nan_in_both_tables(tiny: Tiny, tmp_path: Path) -> None:
    wte, wpe = tiny.wte.copy(), tiny.wpe.copy()
    wte[[tiny.id("cat"), tiny.id("dog")]] = np.inf
    wpe[[3, 4, 5]] = np.nan
    notes = notes_of(tiny, tmp_path / "m", wte=wte, wpe=wpe)
    assert notes[:-1] == [
        f"wte: 2 rows hold {BROKEN}",
        f"wpe: 3 rows hold {BROKEN}",
        f"{CROSS}a row of wte and wpe holds NaN or infinite values",
    ]
    assert notes[-1].endswith(SHOWN_NULL)


def test_a_position_table_of_zeros(tiny: Tiny, tmp_path: Path) -> None:
    assert notes_of(tiny, tmp_path / "m", wpe=np.zeros_like(tiny.wpe)) == [
        f"{NO_MEAN} 0",
        f"wpe: {NO_VARIANCE}",
        f"{CROSS}every row of wpe is zeros, so no pair of rows has an angle",
    ]


def test_a_position_table_with_one_row_that_is_not_zeros(tiny: Tiny, tmp_path: Path) -> None:
    wpe = np.zeros_like(tiny.wpe)
    wpe[7] = tiny.wpe[7]
    notes = notes_of(tiny, tmp_path / "m", wpe=wpe)
    # the rows vary (one differs from the rest), so pc_variance is a number; the cosines with wte are too
    assert notes == [f"{NO_MEAN} 1"]


ORTHOGONAL = "Content and position are as near orthogonal as random directions: "


def cross(mean: float, chance: float) -> CrossGeometry:
    return CrossGeometry(mean, 0.9, None, chance, geometry.RANDOM_FORMULA, 6)


@pytest.mark.parametrize(
    ("mean", "chance", "opens"),
    [
        (
            0.75,
            0.5,
            "Content and position are as near orthogonal as random directions: ",
        ),  # 1.5 times: at the bar
        (0.25, 0.5, "Content and position are as near orthogonal as random directions: "),
        (0.8, 0.5, "Content and position share some directions: "),  # 1.6 times
        (1.0, 0.5, "Content and position share some directions: "),  # twice
    ],
)
def test_the_reading_says_near_orthogonal_up_to_one_and_a_half_times_chance(
    mean: float, chance: float, opens: str
) -> None:
    said = geometry._reading("gpt2", 768, cross(mean, chance), {})
    assert said.startswith(opens)
    ratio = mean / chance
    assert (
        f"a mean |cosine| of {mean:.3f}, {ratio:.1f} times what two random directions in 768 dimensions"
        in said
    )
