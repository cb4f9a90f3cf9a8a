"""`geometry` (norms, mean cosine, principal components, content against position), each figure checked
against numpy computed here, by brute force where the command is clever."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import measures, tables
from oracles import unit

from conftest import run_cli
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


# ---------------------------------------------------------------- geometry


def check_table(got: dict[str, Any], rows: np.ndarray, label: str) -> None:
    """One table's figures against brute force: all-pairs cosines, an SVD of the centred rows."""
    x = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1)
    live = norms != 0
    assert got["rows"] == len(x) and got["zero_rows"] == int((~live).sum())
    for key, value in (
        ("mean", norms.mean()),
        ("std", norms.std()),
        ("min", norms.min()),
        ("max", norms.max()),
    ):
        assert got["norm"][key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    for end, expected in (("smallest", np.sort(norms)[:5]), ("largest", np.sort(norms)[::-1][:5])):
        shown = [r["norm"] for r in got[end]]
        np.testing.assert_allclose(shown, expected, rtol=1e-12)  # the 5 ends of the distribution
        index = [r[label] for r in got[end]]
        np.testing.assert_allclose(norms[index], shown, rtol=1e-12)  # and the rows named are those rows
    u = unit(x[live])
    pairs = u @ u.T
    off_diagonal = pairs[~np.eye(len(u), dtype=bool)]
    assert got["mean_cosine"] == pytest.approx(off_diagonal.mean(), abs=1e-12)
    s = np.linalg.svd(x - x.mean(axis=0), compute_uv=False)
    np.testing.assert_allclose(got["pc_variance"], (s**2 / (s**2).sum())[:10], atol=1e-12)


def check_cross(got: dict[str, Any], wte: np.ndarray, wpe: np.ndarray) -> None:
    a, b = np.asarray(wte, dtype=np.float64), np.asarray(wpe, dtype=np.float64)
    ka, kb = np.flatnonzero(np.linalg.norm(a, axis=1)), np.flatnonzero(np.linalg.norm(b, axis=1))
    cos = unit(a[ka]) @ unit(b[kb]).T
    assert got["pairs"] == cos.size
    # the mean sums float32 products: each within 8 (d + 2) 2^-24 = 1.6e-5 of its exact value, so the mean too
    assert got["mean_abs_cosine"] == pytest.approx(np.abs(cos).mean(), abs=1.6e-5)
    i, j = np.unravel_index(np.argmax(np.abs(cos)), cos.shape)
    # the largest is scored again in float64: the same pair, to 1e-12
    assert (got["max_pair"]["id"], got["max_pair"]["position"]) == (ka[i], kb[j])
    assert got["max_abs_cosine"] == pytest.approx(abs(cos[i, j]), abs=1e-12)
    assert got["max_pair"]["cosine"] == pytest.approx(cos[i, j], abs=1e-12)
    assert got["random_mean_abs_cosine"] == pytest.approx(tables.random_mean_abs_cosine(32), rel=1e-15)


def test_geometry_is_brute_forces(hub: FakeHub, tiny: Tiny) -> None:
    doc = strict_json(run_cli("geometry", "--json").stdout)
    assert doc["model"] == "gpt2" and doc["d_model"] == 32
    check_table(doc["wte"], tiny.wte, "id")
    check_table(doc["wpe"], tiny.wpe, "position")
    check_cross(doc["wte_vs_wpe"], tiny.wte, tiny.wpe)
    king = tiny.id("king")
    assert {"id": king, "token": " king", "norm": pytest.approx(2 * math.sqrt(2), rel=1e-6)} in doc["wte"][
        "largest"
    ]  # king = 2(r + m) with r, m orthonormal
    mean, chance = doc["wte_vs_wpe"]["mean_abs_cosine"], doc["wte_vs_wpe"]["random_mean_abs_cosine"]
    assert f"mean |cosine| of {mean:.3f}" in doc["reading"] and f"({chance:.3f})" in doc["reading"]
    table = run_cli("geometry")
    assert table.exit_code == 0, table.output
    for shown in ("variance along PC10", "content against position", '" king"', doc["reading"][:40]):
        assert shown in table.stdout


def test_zero_rows_are_left_out_and_counted(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    wte, wpe = tiny.wte.copy(), tiny.wpe.copy()
    wte[[tiny.id("dog"), 7]] = 0.0
    wpe[3] = 0.0
    folder = str(save_local(dataclasses.replace(tiny, wte=wte, wpe=wpe), tmp_path / "zeros"))
    result = run_cli("geometry", "-m", folder, "--json")
    assert result.exit_code == 0, result.output
    doc = strict_json(result.stdout)
    assert doc["wte"]["zero_rows"] == 2 and doc["wpe"]["zero_rows"] == 1
    assert [r["norm"] for r in doc["wte"]["smallest"][:2]] == [0.0, 0.0]  # shown in the norms, as stored
    check_table(doc["wte"], wte, "id")
    check_table(doc["wpe"], wpe, "position")
    check_cross(doc["wte_vs_wpe"], wte, wpe)
    assert doc["wte_vs_wpe"]["pairs"] == (len(wte) - 2) * (1024 - 1)
    # input: the zero row has no cosine with its position row: null, never NaN
    text = " cat dog cat dog"
    out = run_cli("input", text, "-m", folder, "--json")
    tokens = strict_json(out.stdout)["tokens"]
    assert [t["cos_wte_wpe"] is None for t in tokens] == [False, True, False, True]
    assert tokens[1]["wte_norm"] == 0.0 and tokens[1]["h0_norm"] == pytest.approx(
        np.linalg.norm(wpe[1].astype(np.float64)), rel=1e-12
    )
    dog_row = next(
        line for line in run_cli("input", text, "-m", folder).stdout.splitlines() if '" dog"' in line
    )
    assert dog_row.split()[-1] == "-"  # the table says: none


def test_a_table_without_directions_gives_null(tiny: Tiny, tmp_path: Path) -> None:
    """wpe all zeros: no cosine and no variance to share; each such figure is null, as the sentence says."""
    folder = str(save_local(dataclasses.replace(tiny, wpe=np.zeros_like(tiny.wpe)), tmp_path / "no-wpe"))
    doc = strict_json(run_cli("geometry", "-m", folder, "--json").stdout)
    assert doc["wpe"]["zero_rows"] == 1024 and doc["wpe"]["mean_cosine"] is None
    assert doc["wpe"]["pc_variance"] == [None] * 10
    cross = doc["wte_vs_wpe"]
    assert cross["pairs"] == 0 and cross["mean_abs_cosine"] is None and cross["max_pair"] is None
    assert doc["reading"] == "every row of wpe is zeros, so content and position have no angle to read."
    table = run_cli("geometry", "-m", folder)
    assert table.exit_code == 0 and doc["reading"] in " ".join(table.stdout.split())


def test_a_model_with_nan_rows_gives_strict_json(tiny: Tiny, tmp_path: Path) -> None:
    wte = tiny.wte.copy()
    wte[tiny.id("cat")] = np.nan
    folder = str(save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "nan"))
    result = run_cli("geometry", "-m", folder, "--json")
    assert result.exit_code == 0, result.output
    doc = strict_json(result.stdout)
    assert doc["wte"]["mean_cosine"] is None and doc["wte_vs_wpe"]["max_abs_cosine"] is None
    assert doc["wpe"]["mean_cosine"] is not None  # wpe is untouched
    assert (
        doc["reading"]
        == "a row holds numbers that are not finite, so content and position have no angle to read."
    )
    assert run_cli("geometry", "-m", folder).exit_code == 0


def test_random_baseline_is_the_exact_expectation() -> None:
    """Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)): 2/pi in 2 dimensions, 1/2 in 3, about sqrt(2/(pi d))."""
    assert tables.random_mean_abs_cosine(2) == pytest.approx(2 / math.pi, rel=1e-14)
    assert tables.random_mean_abs_cosine(3) == pytest.approx(0.5, rel=1e-14)
    for d in (768, 1600):  # the approximation's relative error is about 1/(4d)
        assert tables.random_mean_abs_cosine(d) == pytest.approx(math.sqrt(2 / (math.pi * d)), rel=1 / d)
    rng = np.random.default_rng(0)
    a, b = unit(rng.standard_normal((200_000, 32))), unit(rng.standard_normal((200_000, 32)))
    sampled = np.abs((a * b).sum(axis=1))
    # 200,000 samples: the sample mean is within 4 standard errors of the expectation
    assert tables.random_mean_abs_cosine(32) == pytest.approx(sampled.mean(), abs=4 * sampled.std() / 447)


def test_blocks_give_the_figures_of_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small blocks give the figures of one; of two equal largest pairs the smaller indexes are named."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((300, 16)).astype(np.float32), rng.standard_normal((50, 16)).astype(np.float32)
    a[[40, 250]] = b[7]  # two rows of a meet b[7] at cosine 1
    whole, shape_whole = tables.cross_cosines(a, b), tables.table_shape(a)
    monkeypatch.setattr(measures, "_BLOCK_VALUES", 16 * 7)  # 7 rows a block
    blocked, shape_blocked = tables.cross_cosines(a, b), tables.table_shape(a)
    assert whole.argmax == blocked.argmax == (40, 7)
    assert blocked.max_abs == pytest.approx(1.0, abs=1e-12)
    # float32 products of another shape round otherwise: each within 8 (d + 2) 2^-24 of the exact cosine
    slack = 8 * 18 * 2**-24
    assert blocked.mean_abs == pytest.approx(whole.mean_abs, abs=slack)
    assert blocked.mean_abs == pytest.approx(np.abs(unit(a) @ unit(b).T).mean(), abs=slack)
    # float64 throughout: to 1e-12
    assert shape_blocked.mean_cosine == pytest.approx(shape_whole.mean_cosine, abs=1e-12)
    np.testing.assert_allclose(shape_blocked.norms, shape_whole.norms, rtol=1e-12)
    np.testing.assert_allclose(shape_blocked.pc_variance, shape_whole.pc_variance, atol=1e-12)


def test_the_largest_cosine_is_exact_where_float32_cannot_tell() -> None:
    """Two rows of a meet b[0] at cosines that differ by less than float32's spacing near 1: here the float32
    product ranks the wrong one first; the float64 re-scoring names the right one."""
    rng = np.random.default_rng(2)
    b = rng.standard_normal((20, 64)).astype(np.float32)
    v, w = b[0].astype(np.float64), rng.standard_normal(64)
    a = rng.standard_normal((10, 64)).astype(np.float32) * 0.01
    a[3], a[6] = (v + 3e-4 * w).astype(np.float32), (v + 1e-4 * w).astype(np.float32)  # a[6] is nearer
    exact = unit(a) @ unit(b).T
    assert 0 < exact[6, 0] - exact[3, 0] < 2**-24  # float32 cannot tell them apart
    found = tables.cross_cosines(a, b)
    assert found.argmax == (6, 0)
    assert found.max_abs == pytest.approx(exact[6, 0], abs=1e-15)
