"""gpt2emb lab: the course's lab in one run, each part's JSON exactly its own command's, on the tiny GPT-2
served by the fake Hub and as a folder; a failing part stops the run with its code, named by its number."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import heavy
from gpt2emb.core import analogy
from gpt2emb.errors import BadModel, NetworkError

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local

KEYS = ["vector", "neighbors", "analogy_kept", "analogy", "sizes", "tying"]
HEADINGS = [
    "1. The first 12 numbers of king's row of wte",
    "2. The 10 nearest tokens to king",
    "3. king - man + woman: the inputs kept, then left out",
    "4. The four GPT-2 sizes and wte's share of each",
    "5. The tying check: does the output layer reuse wte?",
]


def commands(word: str, model: list[str], load: bool = False) -> dict[str, list[str]]:
    """Each part's own command line, as the issue's table gives it (sizes: -m only when lab had one)."""
    return {
        "vector": ["vector", word, *model],
        "neighbors": ["neighbors", word, "-k", "10", *model],
        "analogy_kept": ["analogy", "king", "man", "woman", "--keep-inputs", *model],
        "analogy": ["analogy", "king", "man", "woman", *model],
        "sizes": ["sizes", *model],
        "tying": ["tying", *model, *(["--load"] if load else [])],
    }


def addresses_out(document: dict[str, Any]) -> str:
    """A document's text with memory addresses (tying --load's data_ptr(), new in each run) as 0x..."""
    return re.sub(r"0x[0-9a-f]+", "0x...", json.dumps(document))


@pytest.fixture
def folder(tiny: Tiny, tmp_path: Path) -> str:
    return str(save_local(tiny, tmp_path / "tiny-gpt2"))


@pytest.mark.parametrize("where", ["default", "hub", "folder"])
def test_each_part_is_its_own_command_s_document(hub: FakeHub, folder: str, where: str) -> None:
    model = {"default": [], "hub": ["-m", "openai-community/gpt2"], "folder": ["-m", folder]}[where]
    doc = run_json("lab", *model)
    assert list(doc) == KEYS
    for key, args in commands("king", model).items():
        assert doc[key] == run_json(*args), key
    assert doc["sizes"]["source"] == ("formula" if where == "default" else "checkpoint")
    assert doc["analogy_kept"]["keep_inputs"] and not doc["analogy"]["keep_inputs"]
    assert len(doc["neighbors"]["items"][0]["neighbors"]) == 10


def test_load_passes_on_to_the_tying_part_only(hub: FakeHub) -> None:
    doc = run_json("lab", "--load")
    assert addresses_out(doc["tying"]) == addresses_out(run_json("tying", "--load"))  # each load has its own
    assert [c["name"] for c in doc["tying"]["checks"]][-1] == "loaded_model"
    without = run_json("lab")
    assert {k: v for k, v in doc.items() if k != "tying"} == {
        k: v for k, v in without.items() if k != "tying"
    }


def test_word_changes_parts_1_and_2_only(hub: FakeHub, folder: str) -> None:
    king = run_json("lab", "-m", folder)
    queen = run_json("lab", "-m", folder, "--word", "queen")
    assert queen["vector"] == run_json("vector", "queen", "-m", folder)
    assert queen["neighbors"] == run_json("neighbors", "queen", "-k", "10", "-m", folder)
    assert queen["vector"] != king["vector"] and queen["neighbors"] != king["neighbors"]
    for key in KEYS[2:]:
        assert queen[key] == king[key], key


def test_the_table_shows_the_five_parts_under_numbered_headings(hub: FakeHub) -> None:
    result = run_cli("lab")
    assert result.exit_code == 0, result.output + result.stderr
    out = result.stdout
    at = [out.find(h) for h in HEADINGS]
    assert -1 not in at and at == sorted(at), at
    # each part is shown by its own command's view, under its heading
    views = [
        "king in gpt2:",
        'nearest to " king"',
        "king - man + woman in gpt2 (add, inputs kept, marked *)",
        "king - man + woman in gpt2 (add, inputs left out)",
        "GPT-2 sizes: wte is the largest single piece in all four",
        "gpt2: tied: the output layer reuses wte",
    ]
    found = [out.find(v) for v in views]
    assert -1 not in found and found == sorted(found), found
    assert [out.find(v) > h for v, h in zip(views, [*at[:3], at[2], *at[3:]], strict=True)] == [True] * 6
    assert "... (20 more" in out  # part 1 shows 12 of the tiny model's 32 numbers
    counted = run_cli("lab", "-m", "openai-community/gpt2", "--word", "cat").stdout
    assert "1. The first 12 numbers of cat's row of wte" in counted
    assert "4. gpt2's size and wte's share of it" in counted


def failure(result: Any, code: int, part: int) -> str:
    """The one-line message of a run that failed with code, checked to name the part first."""
    said = result.stdout + result.stderr
    assert result.exit_code == code, said
    assert "Traceback" not in said and "internal error" not in said, said
    line: str = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"gpt2emb: part {part}: "), line
    return line


def test_a_word_the_vocabulary_cannot_make_stops_part_1(hub: FakeHub) -> None:
    alone = run_cli("vector", "<|endoftext|>")
    line = failure(run_cli("lab", "--word", "<|endoftext|>"), alone.exit_code, 1)
    assert alone.exit_code == 2 and line == alone.stderr.strip().replace("gpt2emb: ", "gpt2emb: part 1: ", 1)
    as_json = run_cli("lab", "--word", "", "--json")
    assert as_json.exit_code == 2 and as_json.stdout == ""
    error = json.loads(as_json.stderr)["error"]
    assert error["message"].startswith("part 1: an empty word has no token") and error["code"] == 2


def test_a_broken_row_stops_part_2(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """Row 5 holds inf: its numbers are shown (part 1, inf as null), but it has no cosine with anything."""
    wte = tiny.wte.copy()
    wte[5, 0] = np.inf
    folder = str(save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "broken"))
    alone = run_cli("neighbors", "id:5", "-m", folder)
    assert alone.exit_code == 6 and run_cli("vector", "id:5", "-m", folder).exit_code == 0
    line = failure(run_cli("lab", "--word", "id:5", "-m", folder), 6, 2)
    assert line == alone.stderr.strip().replace("gpt2emb: ", "gpt2emb: part 2: ", 1)
    assert list(run_json("lab", "-m", folder)) == KEYS  # king's rows are whole


def test_a_model_whose_tying_check_fails_stops_at_part_5(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "m")
    (folder / "config.json").write_text(json.dumps({**tiny.config, "activation_function": "gelu_newest"}))
    assert (
        run_cli("vector", "king", "-m", str(folder)).exit_code == 0
    )  # the rows are fine: transformers is not
    line = failure(run_cli("lab", "-m", str(folder)), 6, 5)
    assert "gelu_newest" in line


def test_a_failing_load_stops_at_part_5(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(*_: Any) -> Any:
        raise BadModel("pytorch_model.bin could not be read safely")

    monkeypatch.setattr(heavy, "loaded_model_ties", fails)
    assert run_cli("lab").exit_code == 0  # without --load, nothing is loaded
    assert (
        failure(run_cli("lab", "--load"), 6, 5)
        == "gpt2emb: part 5: pytorch_model.bin could not be read safely"
    )


@pytest.mark.parametrize(
    "part, target, error",
    [
        (3, "gpt2emb.core.analogy.analogy", NetworkError("the Hub did not answer")),
        (4, "gpt2emb.core.sizes.of_models", NetworkError("the Hub did not answer")),
    ],
)
def test_each_part_s_failure_keeps_its_code(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, part: int, target: str, error: Exception
) -> None:
    def fails(*_: Any, **__: Any) -> Any:
        raise error

    monkeypatch.setattr(target, fails)
    code = 6 if isinstance(error, BadModel) else 5
    line = failure(run_cli("lab", "-m", "openai-community/gpt2"), code, part)
    assert line.endswith(str(error))


def test_the_second_analogy_failing_is_part_3_too(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    real = analogy.analogy

    def left_out_fails(*args: Any, **kwargs: Any) -> Any:
        if not args[2].keep_inputs:  # analogy(model, terms, options, ...)
            raise NetworkError("the Hub did not answer")
        return real(*args, **kwargs)

    monkeypatch.setattr(analogy, "analogy", left_out_fails)
    assert failure(run_cli("lab"), 5, 3) == "gpt2emb: part 3: the Hub did not answer"


def test_a_model_that_is_no_model_is_refused_before_any_part(hub: FakeHub) -> None:
    result = run_cli("lab", "-m", "gpt2-xxl")
    assert result.exit_code == 3 and "did you mean gpt2-xl?" in result.stderr
    assert "part" not in result.stderr
    assert hub.requests == []


def test_help_has_examples() -> None:
    out = run_cli("lab", "--help").stdout
    assert "Examples:" in out and "gpt2emb lab --word queen" in out and "--load" in out
