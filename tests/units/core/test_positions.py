"""What core/positions.py decides, pinned where a mutation run found it loose (issue 43, point 4): the ends of
what it takes (a range of one position, the last position, 2 and 256 cells, 1,024 positions and no more) and
the heatmap's default of 32 cells in the handle too; the figure's first three principal components."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpt2emb
from gpt2emb.report import QuietReporter

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


def test_a_range_of_one_position_and_the_last_position_are_taken(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("positions", "3-3", "1023")
    assert doc["positions"] == [3, 1023]
    np.testing.assert_allclose(doc["norms"], np.linalg.norm(tiny.wpe[[3, 1023]], axis=1), rtol=1e-6)
    refused = run_cli("positions", "1024")
    assert refused.exit_code == 2 and "position 1024 does not exist" in refused.stderr


def test_every_position_once_is_taken_and_one_more_is_refused(hub: FakeHub) -> None:
    assert run_json("positions", "0-1023")["positions"] == list(range(1024))
    refused = run_cli("positions", "0-1023", "5")
    assert refused.exit_code == 2 and "more positions asked for than the 1,024 there are" in refused.stderr


def test_the_heatmap_takes_2_to_256_cells_and_the_handle_defaults_to_32(hub: FakeHub, tiny: Tiny) -> None:
    two = run_json("positions", "--heatmap", "--cells", "2")
    unit = tiny.wpe / np.linalg.norm(tiny.wpe, axis=1)[:, None]
    full = unit.astype(np.float64) @ unit.T.astype(np.float64)
    np.testing.assert_allclose(
        np.array(two["matrix"]), full.reshape(2, 512, 2, 512).mean(axis=(1, 3)), atol=1e-6
    )
    assert len(run_json("positions", "--heatmap", "--cells", "256")["matrix"]) == 256
    for cells in ("1", "257"):
        refused = run_cli("positions", "--heatmap", "--cells", cells)
        assert refused.exit_code == 2 and f"must be from 2 to 256, not {cells}" in refused.stderr
    m = gpt2emb.open("gpt2", reporter=QuietReporter())
    assert m.position_map().block == 1024 / 32 and len(m.position_map().matrix) == 32


def test_the_png_draws_the_first_three_principal_components(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from drawn import captured, drawn

    with captured() as figures:
        run_json("positions", "--png", str(tmp_path / "wpe.png"))
    *_, pca = drawn(figures[0])["panels"]
    centred = tiny.wpe.astype(np.float64) - tiny.wpe.astype(np.float64).mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    assert len(pca["lines"]) == 3
    for i, line in enumerate(pca["lines"]):  # each up to its sign, as any SVD gives it
        got, want = np.array(line)[:, 1], u[:, i] * s[i]
        assert np.allclose(got, want, atol=1e-4) or np.allclose(got, -want, atol=1e-4)
