"""Tables holding extreme rows (inf, NaN, numbers near float32's largest, zeros) in wte and wpe: every command
answers honestly or refuses in one line, and no numpy warning reaches stderr. The folders are built once;
the commands run in real processes, where a warning shows as it would to a user."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import measures, ops, sums
from gpt2emb.choices import Method
from gpt2emb.core import evaluate_scoring

from conftest import run_cli, run_process
from tinymodel import D, Tiny, save_local

BIG = np.float32(3e38)  # finite: near float32's largest number (3.4e38), and legal in a table
E0, E1 = np.eye(D, dtype=np.float32)[:2]
KINDS = ("broken", "zero", "big")


def tables(tiny: Tiny, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """tiny's wte and wpe with extreme rows.

    broken  ' dog' and row 3 of wpe all NaN, row 4 of wpe all inf, row 5 of wte inf in its first number;
    zero    ' dog' and row 3 of wpe all zeros;
    big     rows of norm 3e38 (which float32 holds) whose sums are past float32: cat = 3e38 e0 = -dog,
            ' king', 'do', 'm' (' kingdom') = 3e38 e1, wpe 1 = 3e38 e0 (cat's position in 'a cat dog'),
            wpe 3 = -3e38 e1;
    huge    ±3e38 in every number of dog, and cat = -dog: a norm of 1.7e39, past float32 (where the cache
            keeps the norms of wte)."""
    wte, wpe = tiny.wte.copy(), tiny.wpe.copy()
    if kind == "huge":
        row = np.where(np.arange(D) % 2, BIG, -BIG).astype(np.float32)
        wte[tiny.id("cat")], wte[tiny.id("dog")] = -row, row
        return wte, wpe
    if kind == "big":
        wte[tiny.id("cat")], wte[tiny.id("dog")] = BIG * E0, -BIG * E0
        wte[kingdom(tiny)] = BIG * E1
        wpe[1], wpe[3] = BIG * E0, -BIG * E1
        return wte, wpe
    if kind == "zero":
        wte[tiny.id("dog")] = wpe[3] = 0.0
        return wte, wpe
    wte[tiny.id("dog")] = wpe[3] = np.nan
    wte[5, 0] = wpe[4] = np.inf
    return wte, wpe


def kingdom(tiny: Tiny) -> list[int]:
    ids: list[int] = tiny.tokenizer.encode(" kingdom").ids
    assert len(ids) == 3  # ' king' + 'do' + 'm' in the tiny vocabulary
    return ids


@pytest.fixture(scope="module")
def folders(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("extreme")
    made = {}
    for kind in (*KINDS, "huge"):
        wte, wpe = tables(tiny, kind)
        made[kind] = save_local(dataclasses.replace(tiny, wte=wte, wpe=wpe), root / kind)
    return made


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def unit(rows: np.ndarray) -> np.ndarray:
    x = np.asarray(rows, dtype=np.float64)
    return np.asarray(x / np.linalg.norm(x, axis=-1, keepdims=True))


def best(wte: np.ndarray, v: np.ndarray, left_out: list[int], k: int) -> tuple[list[int], np.ndarray]:
    """The k rows of largest cosine with v, by brute force in float64 (rows of norm 3e38 included)."""
    cos = unit(wte) @ unit(v)
    cos[left_out] = -np.inf
    top = np.argsort(-cos, kind="stable")[:k]
    return top.tolist(), cos[top]


# ---------------------------------------------------------------- every command, every kind of row

# The commands run in one process (a process each would take a minute): the app's own main, which the
# console script calls, each with its stderr caught apart and every warning shown (not once per line).
METHODS = ("add", "3cosadd", "3cosmul")
SWEEP = """
import contextlib, io, json, sys, warnings
from typer.main import get_command
from gpt2emb.cli import app

warnings.simplefilter("always")
command = get_command(app)  # built once, as the console script builds it once a run (some 0.3 s a build)
report = []
for args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = command.main(args, prog_name="gpt2emb", standalone_mode=False)
    report.append({"args": args, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(report))
"""


def commands(folder: Path, work: Path) -> list[list[str]]:
    """Every command that reads rows, on the words and positions of the extreme rows."""
    pairs, questions = work / "pairs.tsv", work / "questions.txt"
    pairs.write_text("cat\tdog\t1\nking\tqueen\t2\ncat\tcats\t3\nman\twoman\t4\n")
    questions.write_text(": s\nman king woman queen\ncat dog cats kitten\nking dog woman queen\n")
    runs = [
        ["vector", "id:5", "dog", "kingdom"],
        ["vector", "id:5", "kingdom", "--json"],
        ["neighbors", "king", "cat", "kingdom", "-k", "5"],
        ["neighbors", "dog"],
        ["similarity", "cat", "dog", "king"],
        ["similarity", "--eval", str(pairs)],
        ["geometry"],
        ["positions", "0-5"],
        ["positions", "--heatmap", "--cells", "4"],
        ["input", "a cat dog xyz", "--full"],
        ["input", "a cat dog xyz", "--json"],
        ["sizes"],
    ]
    # the extreme rows as candidates (3cosmul bounds its scores apart), then as inputs; 3cosadd shares the
    # additive path of add in --eval
    runs += [["analogy", "king", "man", "woman", "--method", "3cosmul"]]
    runs += [["analogy", "cat", "dog", "woman", "--method", m, "-k", "5", "--json"] for m in METHODS]
    runs += [["analogy", "--eval", str(questions), "--method", m] for m in ("add", "3cosmul")]
    return [[*args, "-m", str(folder)] for args in runs]


def ran(sweep: dict[str, list[Any]], kind: str, *args: str) -> Any:
    """The JSON printed by a command of the sweep, which ended well and printed nothing on stderr."""
    (run,) = (r for r in sweep[kind] if r["args"][: len(args)] == list(args))
    assert (run["code"], run["stderr"]) == (0, ""), run
    return strict_json(run["stdout"])


@pytest.fixture(scope="module")
def sweep(folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """Each kind's runs: its command, exit code, stdout and stderr."""
    work = tmp_path_factory.mktemp("sweep")
    runs = {kind: commands(folders[kind], work) for kind in KINDS}
    runs["huge"] = [["analogy", "cat", "dog", "king", "-k", "3", "--json", "-m", str(folders["huge"])]]
    env = {**os.environ, "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_CACHE": str(work / "hf")}
    every = [args for kind in runs for args in runs[kind]]
    done = subprocess.run(
        [sys.executable, "-c", SWEEP, json.dumps(every)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr[-3000:]
    report = iter(json.loads(done.stdout))
    return {kind: [next(report) for _ in runs[kind]] for kind in runs}


def refused(kind: str, args: list[str]) -> tuple[int, str] | None:
    """The exit code and message of a command that must refuse: one whose word is the row of ' dog', which
    has no direction in these tables."""
    asks_dog = args[0] in {"neighbors", "similarity", "analogy"} and "dog" in args
    if kind == "big" or not asks_dog:
        return None
    if kind == "zero":
        return 2, "the vector of 'dog' is all zeros: it has no direction"
    return 6, "the vector of 'dog' holds NaN or infinite values: this model's row for it is broken"


@pytest.mark.parametrize("kind", KINDS)
def test_every_command_answers_or_refuses_in_one_line(sweep: dict[str, list[Any]], kind: str) -> None:
    wrong = []  # every run that went wrong, not the first only
    for run in sweep[kind]:
        args, code, stderr = run["args"], run["code"], run["stderr"]
        expected = refused(kind, args)
        if expected is None:
            if (code, stderr) != (0, ""):
                wrong.append((args[:-2], code, stderr))
            continue
        message = json.loads(stderr)["error"]["message"] if "--json" in args else stderr
        prefix = "" if "--json" in args else "gpt2emb: "
        if code != expected[0] or stderr.count("\n") != 1 or not message.startswith(prefix + expected[1]):
            wrong.append((args[:-2], code, stderr))
    assert wrong == []


# ---------------------------------------------------------------- what the reviewer found, and its answers


def test_vector_of_a_row_holding_inf(folders: dict[str, Path], tiny: Tiny) -> None:
    """Its spread is inf - inf: null with the note, and no 'invalid value encountered in subtract'."""
    run = run_process("vector", "id:5", "-m", str(folders["broken"]), "--json")
    assert (run.returncode, run.stderr) == (0, "")
    (item,) = strict_json(run.stdout)["items"]
    assert (item["norm"], item["mean"], item["std"], item["max"]) == (None, None, None, None)
    assert item["min"] == float(tiny.wte[5, 1:].min())
    assert item["vector"] == [None, *tiny.wte[5, 1:].astype(np.float64).tolist()]


@pytest.mark.parametrize("method", METHODS)
def test_an_analogy_of_rows_near_float32s_largest(
    sweep: dict[str, list[Any]], tiny: Tiny, method: str
) -> None:
    """cat - dog + woman is 6e38 e0 + woman: past float32, it overflowed to inf (a warning, then NaN for every
    cosine). Its cosines are those of the vector in float64 (3cosmul: of cat, dog and woman)."""
    doc = ran(sweep, "big", "analogy", "cat", "dog", "woman", "--method", method)
    wte = tables(tiny, "big")[0].astype(np.float64)
    inputs = [tiny.id(w) for w in ("cat", "dog", "woman")]
    a, b, c = wte[inputs]
    if method == "3cosmul":
        sa, sb, sc = ((1 + unit(wte) @ unit(v)) / 2 for v in (a, b, c))
        scores = sa * sc / (sb + 1e-6)
        scores[inputs] = -np.inf
        ids = np.argsort(-scores, kind="stable")[:5].tolist()
        expected = scores[ids]
    else:
        v = a - b + c if method == "add" else unit(a) - unit(b) + unit(c)
        ids, expected = best(wte, v, inputs, 5)
    results = doc["results"]
    assert [r["id"] for r in results] == ids
    assert [r["score"] for r in results] == pytest.approx(expected, abs=1e-6)


def test_a_split_word_of_rows_near_float32s_largest_is_their_mean(sweep: dict[str, list[Any]]) -> None:
    """The mean of three rows of 3e38 is 3e38: their float32 sum overflowed, and the word was called a
    broken row."""
    doc = ran(sweep, "big", "vector", "id:5", "kingdom", "--json")
    assert doc["items"][1]["vector"] == (BIG * E1).astype(np.float64).tolist()


def test_numbers_near_float32s_largest_fit_their_table(folders: dict[str, Path]) -> None:
    """Shown in full, -3e38 is 45 characters: rich cropped it (-3000000005497755757) and dropped columns."""
    shown = run_cli("vector", "dog", "-m", str(folders["big"]))
    assert shown.exit_code == 0, shown.output
    header, _, stats = shown.stdout.splitlines()[2:5]
    assert header.split() == ["norm", "mean", "std", "min", "max", "dims"]
    row = (-BIG * E0).astype(np.float64)  # one number of -3e38, the others 0
    figures = [float(BIG), row.mean(), row.std(), float(-BIG)]
    assert stats.split() == [*(f"{x:.4e}" for x in figures), "0.0000", "32"]
    assert "[-3.0000e+38, -0.0000," in shown.stdout  # -3e38 times 0: -0


def test_rows_whose_norm_is_past_float32_are_legal(sweep: dict[str, list[Any]], tiny: Tiny) -> None:
    """Their norm is past float32, where the cache keeps norms: no damage (every command said the cache was,
    and to run gpt2emb cache verify --repair). The analogy is that of the vectors in float64."""
    doc = ran(sweep, "huge", "analogy", "cat", "dog", "king")
    w = tables(tiny, "huge")[0].astype(np.float64)
    inputs = [tiny.id(x) for x in ("cat", "dog", "king")]
    ids, cos = best(w, w[inputs[0]] - w[inputs[1]] + w[inputs[2]], inputs, 3)
    assert [r["id"] for r in doc["results"]] == ids
    assert [r["score"] for r in doc["results"]] == pytest.approx(cos, abs=1e-6)


def test_the_input_of_rows_adding_up_past_float32(sweep: dict[str, list[Any]], tiny: Tiny) -> None:
    """cat (3e38 e0) at position 1 (wpe 1 = 3e38 e0): the model's float32 sum is inf there, which numpy
    warned of. The figures are the model's; the rows are finite, so no row is broken."""
    tokens = ran(sweep, "big", "input", "a cat dog xyz", "--json")["tokens"]
    assert (tokens[1]["token"], tokens[1]["h0_norm"]) == (" cat", None)
    assert tokens[1]["wte_norm"] == tokens[1]["wpe_norm"] == float(BIG)
    assert tokens[1]["cos_wte_wpe"] == 1.0


def test_an_input_past_float32_is_not_called_a_broken_row(sweep: dict[str, list[Any]]) -> None:
    notes = ran(sweep, "big", "input", "a cat dog xyz", "--json")["notes"]
    assert notes[0] == (
        "at position 1 the rows are finite, but their sum is past float32's largest number (3.4e38): the "
        "model adds them in float32, so its input there is not a finite number"
    )


def test_3cosadd_makes_a_row_of_tiny_numbers_a_unit_vector(tiny: Tiny) -> None:
    """A row of norm 1e-39 was divided by 1e-30 (a floor against zero): far from a unit vector, so the
    question was answered as if it had no B."""
    wte = tiny.wte.copy()
    man = tiny.id("man")
    wte[man] = wte[man] * np.float32(1e-39) / np.linalg.norm(wte[man])
    a, b, c = (wte[tiny.id(w)] for w in ("king", "man", "woman"))
    v = sums.analogy_vector([(1, a), (-1, b), (1, c)], Method.cosadd)
    expected = unit(a) - unit(b) + unit(c)
    assert ops.cosine(v, expected) == pytest.approx(1.0, abs=1e-7)


# ---------------------------------------------------------------- positions and geometry of broken rows


def test_positions_of_a_row_of_nan_are_null(folders: dict[str, Path], tiny: Tiny) -> None:
    """A NaN norm fails 'norm > 0' as a zero norm does: the row read as a zero row, cosine 0.0."""
    doc = strict_json(run_cli("positions", "2", "3", "5", "-m", str(folders["broken"]), "--json").stdout)
    cos_2_5 = float(unit(tiny.wpe[2]) @ unit(tiny.wpe[5]))
    assert doc["matrix"][1] == [None, None, None]
    assert [doc["matrix"][0][i] for i in (0, 2)] == pytest.approx([1.0, cos_2_5], abs=1e-12)
    assert [row[1] for row in doc["matrix"]] == [None, None, None]


def test_a_heatmap_block_of_no_number_is_marked_not_shaded(folders: dict[str, Path]) -> None:
    """NaN went through min and max as +1: the block of the broken row was drawn the darkest red."""
    shown = run_cli("positions", "--heatmap", "--cells", "4", "-m", str(folders["broken"]))
    assert shown.exit_code == 0, shown.output
    rows = [line for line in shown.stdout.splitlines() if line[:4].strip() in {"0", "256", "512", "768"}]
    assert len(rows) == 4 and rows[0][5:] == "?" * 8  # positions 3 and 4: the first block of rows and columns
    assert all(r[5:7] == "??" and "?" not in r[7:] for r in rows[1:])
    assert "??: a block holding a row of NaN or infinite values, which has no cosine" in shown.stdout


def test_principal_components_leave_out_a_broken_row() -> None:
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(40, 6)).astype(np.float32)
    rows[7] = np.nan
    rows[9, 2] = np.inf
    got = measures.principal_components(rows, 3)
    finite = np.delete(rows, [7, 9], axis=0).astype(np.float64)
    u, s, _ = np.linalg.svd(finite - finite.mean(axis=0), full_matrices=False)
    expected = u[:, :3] * s[:3]
    assert np.isnan(got[[7, 9]]).all()
    kept = np.delete(got, [7, 9], axis=0)
    np.testing.assert_allclose(np.abs(kept), np.abs(expected), atol=1e-9)  # a direction's sign is free


@pytest.mark.parametrize("kind", ["broken", "zero-table"])
def test_geometry_says_once_that_content_against_position_is_undefined(
    folders: dict[str, Path], tiny: Tiny, tmp_path: Path, kind: str
) -> None:
    if kind == "broken":
        folder = folders["broken"]
    else:
        folder = save_local(dataclasses.replace(tiny, wte=np.zeros_like(tiny.wte)), tmp_path / kind)
    shown = run_cli("geometry", "-m", str(folder))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert text.count("have no angle to read") == 1  # the reading
    assert "wte_vs_wpe:" not in text  # its note said it again (the JSON keeps it, one for each null)


# ---------------------------------------------------------------- correlations of identical rankings


def test_identical_rankings_correlate_exactly() -> None:
    """r was (x . x) of x made of length 1 first: 0.9999999999999998 for [1, 2, 3] with itself."""
    assert evaluate_scoring.spearman(np.array([1, 2, 3]), np.array([1, 2, 3])) == 1.0
    rng = np.random.default_rng(11)
    for n in (2, 3, 7, 50, 353):
        for scale in (1e-300, 1e-5, 1.0, 3e5, 1e300):
            x = rng.normal(size=n) * scale
            x[: n // 3] = x[0]  # ties
            assert evaluate_scoring.spearman(x, x) == 1.0 and evaluate_scoring.pearson(x, x) == 1.0, (
                n,
                scale,
            )
            assert evaluate_scoring.spearman(x, -x) == -1.0 and evaluate_scoring.pearson(x, -x) == -1.0, (
                n,
                scale,
            )
