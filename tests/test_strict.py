"""Every JSON document is strict JSON (no NaN), a zero vector is refused, and aliases name one model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def strict_json(text: str) -> dict[str, object]:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    doc: dict[str, object] = json.loads(text, parse_constant=refuse)
    return doc


def test_constant_human_scores_give_null_with_the_reason(hub: FakeHub, tmp_path: Path) -> None:
    pairs = tmp_path / "flat.tsv"
    pairs.write_text("king\tqueen\t5.0\ncat\tdog\t5.0\nman\twoman\t5.0\n")
    result = run_cli("similarity", "--eval", str(pairs), "--json")
    assert result.exit_code == 0, result.output
    doc = strict_json(result.stdout)
    assert doc["pearson"] is None and doc["spearman"] is None
    assert doc["notes"] == ["pearson and spearman are undefined: every human score is the same"]
    table = run_cli("similarity", "--eval", str(pairs))
    assert "undefined" in table.stdout and "every human score is the same" in table.stdout


def test_nearly_constant_scores_are_undefined_too(hub: FakeHub, tmp_path: Path) -> None:
    pairs = tmp_path / "flat.tsv"  # 7.35 three times: the mean taken away in floating point leaves 1e-16s
    pairs.write_text("king\tqueen\t7.35\ncat\tdog\t7.35\nman\twoman\t7.35\n")
    doc = strict_json(run_cli("similarity", "--eval", str(pairs), "--json").stdout)
    assert doc["pearson"] is None and doc["spearman"] is None


def test_a_model_with_nan_rows_still_gives_strict_json(tiny: Tiny, tmp_path: Path) -> None:
    wte = tiny.wte.copy()
    wte[tiny.id("cat")] = np.nan
    folder = save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "nan-model")
    result = run_cli("vector", "cat", "-m", str(folder), "--dims", "2", "--json")
    assert result.exit_code == 0, result.output
    doc = strict_json(result.stdout)
    item = doc["items"][0]  # type: ignore[index]
    assert item["vector"] == [None] * 32 and item["norm"] is None and item["max"] is None
    assert doc["notes"] == [  # 32 numbers, 5 stats
        "37 values are not a finite number (the model's rows hold NaN or infinite values there) "
        "and shown as null"
    ]


def test_a_zero_vector_has_no_direction(tiny: Tiny, tmp_path: Path) -> None:
    wte = tiny.wte.copy()
    wte[tiny.id("dog")] = 0.0
    folder = str(save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "zero-model"))
    for args in (["neighbors", "dog"], ["similarity", "cat", "dog"], ["analogy", "king", "dog", "woman"]):
        result = run_cli(*args, "-m", folder, "--json")
        assert result.exit_code == 2, args
        assert json.loads(result.stderr)["error"]["message"] == (
            "the vector of 'dog' is all zeros: it has no direction, so it has no cosine with anything"
        )
    assert run_json("vector", "dog", "-m", folder)["items"][0]["norm"] == 0.0  # shown, as stored
    others = run_json("neighbors", "cat", "-m", folder, "-k", "342")["items"][0]["neighbors"]
    assert next(n["score"] for n in others if n["token"] == " dog") == 0.0  # a zero row ranks with 0


def test_aliases_of_one_model_are_answered_once(hub: FakeHub) -> None:
    result = run_cli("neighbors", "cat", "-m", "gpt2", "-m", "small", "-m", "openai-community/gpt2", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == run_json("neighbors", "cat")  # the single-model document
    notes = [json.loads(line)["note"] for line in result.stderr.splitlines()]
    assert notes == [
        "small is gpt2 again: each model is answered once",
        "openai-community/gpt2 is gpt2 again: each model is answered once",
    ]
