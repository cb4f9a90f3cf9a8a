"""`positions`: the cosines and norms of wpe rows against numpy on the fixture's own, ranges, refusals of
positions that do not exist (before any model is opened), --heatmap's block means, and --png."""

import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


def test_positions(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("positions", "0", "1", "2", "500")
    assert doc["positions"] == [0, 1, 2, 500]
    rows = tiny.wpe[[0, 1, 2, 500]].astype(np.float64)
    unit = rows / np.linalg.norm(rows, axis=1)[:, None]
    np.testing.assert_allclose(np.array(doc["matrix"]), unit @ unit.T, atol=1e-6)
    np.testing.assert_allclose(doc["norms"], np.linalg.norm(rows, axis=1), rtol=1e-6)
    m = doc["matrix"]
    assert m[0][1] > m[0][2] > m[0][3]  # neighbouring positions are the most alike
    assert run_json("positions", "0-3", "1023")["positions"] == [0, 1, 2, 3, 1023]
    assert "cosine similarity of position rows" in run_cli("positions", "0", "1").stdout


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("1024", "position 1024 does not exist: gpt2 learned 1,024 positions, 0 to 1023"),
        ("abc", "'abc' is not a position"),
        ("5-2", "range 5-2 runs backwards"),
        ("-1", "position -1 does not exist: positions count from 0"),  # not click's "No such option: -1"
        ("--cels", "No such option: --cels; did you mean --cells?"),  # an unknown option is still one
        ("--figur", "No such option: --figur; did you mean --figure?"),
        ("-x", "No such option: -x"),
    ],
)
def test_bad_positions(hub: FakeHub, arg: str, message: str) -> None:
    result = run_cli("positions", arg)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_a_negative_position_is_told_before_any_model_is_opened(hub: FakeHub) -> None:
    result = run_cli("positions", "0", "-5", "--json")
    assert result.exit_code == 2 and "position -5 does not exist" in result.stderr
    assert hub.requests == []


def test_position_heatmap(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("positions", "--heatmap", "--cells", "4")
    assert doc["n_positions"] == 1024 and doc["block"] == 256 and doc["png"] is None
    unit = tiny.wpe / np.linalg.norm(tiny.wpe, axis=1)[:, None]
    full = unit.astype(np.float64) @ unit.T.astype(np.float64)
    expected = full.reshape(4, 256, 4, 256).mean(axis=(1, 3))
    np.testing.assert_allclose(np.array(doc["matrix"]), expected, atol=1e-6)
    table = run_cli("positions", "--heatmap")
    assert table.exit_code == 0 and "each cell averages 32 x 32 positions" in table.stdout
    assert (
        len([line for line in table.stdout.splitlines() if "▓" in line or "█" in line]) >= 32
    )  # the diagonal
    assert run_cli("positions", "0", "--heatmap").exit_code == 2
    assert run_cli("positions", "--heatmap", "--cells", "1").exit_code == 2


@pytest.mark.parametrize("option", ["--figure", "--png"])
def test_position_figure(hub: FakeHub, tmp_path: Path, option: str) -> None:
    """--figure, as every command draws; --png, its old name, an alias for one release: both keys name the
    file (png as it always did, figure as every command's document does)."""
    pytest.importorskip("matplotlib")
    target = tmp_path / "wpe.png"
    result = run_cli("positions", option, str(target))
    assert result.exit_code == 0 and result.stdout.count(f"figure written to {target}") == 1
    doc = run_json("positions", option, str(target))
    assert doc["png"] == doc["figure"] == str(target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 20_000


def test_position_figure_follows_its_extension_and_is_given_once(hub: FakeHub, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "wpe.svg"
    assert run_json("positions", "--figure", str(target))["figure"] == str(target)
    assert target.read_bytes().startswith(b"<?xml")
    both = run_cli("positions", "--figure", str(tmp_path / "a.png"), "--png", str(tmp_path / "b.png"))
    assert both.exit_code == 2 and "--png is the old name of --figure: give one of them" in both.stderr
    wrong = run_cli("positions", "--figure", str(tmp_path / "a.jpg"))
    assert wrong.exit_code == 2 and ".png, .svg or .pdf" in wrong.stderr
    assert "figure" not in run_json("positions", "--heatmap")  # the key only when a figure was drawn
    assert "The old name of --figure" in run_cli("positions", "--help").stdout


def test_position_figure_without_matplotlib(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [plot] extra were not installed
    result = run_cli("positions", "--png", str(tmp_path / "x.png"))
    assert result.exit_code == 2 and 'pip install "gpt2emb[plot]"' in result.stderr
    assert hub.requests == []  # said before anything was fetched


def test_png_needs_a_file_name(hub: FakeHub) -> None:
    for name in ("", "  "):
        result = run_cli("positions", "--png", name)
        assert result.exit_code == 2 and "--png needs a file name" in result.stderr
    assert hub.requests == []
