"""Benchmark files on the edge: the correlations of `similarity --eval` against scipy's on hard cases (ties,
a constant list, 1e±300, three pairs), scores that are not finite numbers, `geometry` on tables whose numbers
make numpy warn, and benchmark files read as streams within limits.MAX_LINE and limits.MAX_FILE."""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from gpt2emb import limits, tables
from gpt2emb.core import evaluate_files, evaluate_scoring

from conftest import FUZZ, run_cli, run_json, run_process
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def close(expected: float) -> Any:
    """Both sides compute in float64 from the same numbers, by different sums: they agree to a few ulps."""
    return pytest.approx(expected, rel=1e-12, abs=1e-15)


# word pairs of the tiny model whose cosines are distinct and not zero (cos(king, cat) is exactly 0 there)
WORDS = [
    ("king", "queen"),
    ("man", "king"),
    ("cat", "cats"),
    ("cat", "dog"),
    ("dog", "kitten"),
    ("Paris", "France"),
    ("hello", "king"),
    ("queen", "woman"),
]
HUGE = [1e308, -1e308, 1e308, -1e308, 5e307, -5e307, 2e307, -3e307]


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def cosines(tiny: Tiny, words: list[tuple[str, str]]) -> np.ndarray:
    """Each pair's cosine from the float64 rows, by brute force."""
    wte = np.asarray(tiny.wte, dtype=np.float64)
    a, b = wte[[tiny.id(w) for w, _ in words]], wte[[tiny.id(w) for _, w in words]]
    return np.asarray((a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1))


def pairs_file(folder: Path, scores: list[str], words: list[tuple[str, str]] = WORDS) -> Path:
    path = folder / "pairs.tsv"
    path.write_text("".join(f"{a}\t{b}\t{s}\n" for (a, b), s in zip(words, scores, strict=True)))
    return path


def scipy_r(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """scipy's (pearson, spearman); nan where it finds no correlation (it warns then: expected here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        warnings.simplefilter("ignore", stats.NearConstantInputWarning)
        return float(stats.pearsonr(x, y)[0]), float(stats.spearmanr(x, y)[0])


def ours(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
    return evaluate_scoring.pearson(x, y), evaluate_scoring.spearman(x, y)


def same(got: float | None, expected: float) -> bool:
    """scipy's nan is our None (null); a number is scipy's, `close`."""
    return got is None if np.isnan(expected) else got == close(expected)


# ---------------------------------------------------------------- the correlations, against scipy

RNG = np.random.default_rng(24)
BASE = RNG.normal(size=9)
OTHER = BASE + RNG.normal(size=9)


@pytest.mark.parametrize(
    ("x", "y"),
    [
        pytest.param([1, 2, 2, 3, 3, 3, 4, 5, 5], [2, 1, 2, 5, 3, 3, 4, 4, 6], id="ties"),
        pytest.param([7, 7, 7, 7, 7], [1, 2, 3, 4, 5], id="constant"),
        pytest.param(BASE, [0.5] * 9, id="constant-second"),
        pytest.param(BASE * 1e300, OTHER, id="1e300"),
        pytest.param(BASE * 1e-300, OTHER, id="1e-300"),
        pytest.param(BASE * 1e300, OTHER * 1e-300, id="1e300-and-1e-300"),
        pytest.param([1e-300, 3e-300, 2e-300, 5e-300], [1, 2, 3, 4], id="1e-300-ranks"),
        pytest.param([3.0, 1.0, 2.0], [0.2, 0.4, 0.1], id="3-pairs"),
        pytest.param([1.0, 2.0, 3.0], [2.0, 4.0, 6.0], id="3-pairs-exact"),
        pytest.param([1.0, 1.0 + 2**-52, 1.0, 1.0 + 2**-51], [1.0, 2.0, 3.0, 4.0], id="nearly-constant"),
        pytest.param([np.nan] * 5, [1, 2, 3, 4, 5], id="all-nan"),
        pytest.param([1, 2, np.nan, 4, 5], [1, 2, 3, 4, 5], id="one-nan"),
    ],
)
def test_pearson_and_spearman_are_scipys(x: list[float], y: list[float]) -> None:
    x64, y64 = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    pearson, spearman = scipy_r(x64, y64)
    got = ours(x64, y64)
    assert same(got[0], pearson), (got, pearson)
    assert same(got[1], spearman), (got, spearman)


def test_huge_scores_give_the_r_of_the_same_scores_scaled_down() -> None:
    """±1e308: a square overflows. (scipy 1.17's pearsonr itself overflows here, warns and says 0.0; Pearson's
    r does not change with the scale, so its answer for the scores over 1e308 is the one to give.)"""
    x, y = np.array(HUGE), np.linspace(0.1, 0.8, len(HUGE)) ** 2 * np.array([1, -1, 1, 1, -1, 1, -1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning from ours
        got = ours(x, y)
    assert got[0] == close(scipy_r(x / 1e308, y)[0])
    assert got[1] == close(stats.spearmanr(x, y)[0])  # ranks: no overflow in scipy
    scaled = evaluate_scoring.pearson(x / 1e308, y)
    assert scaled is not None and got[0] == close(scaled)


@FUZZ
@given(
    # scipy itself is wrong on subnormal numbers ([0, 0, 5e-324] is not [0, 0, 1] to it): normal ones only
    st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False), min_size=3, max_size=30),
    st.integers(-300, 300),
)
def test_any_scale_gives_scipys_r_of_the_numbers_unscaled(values: list[float], power: int) -> None:
    x = np.array(values)
    y = np.cos(np.arange(len(x)) * 1.7)
    pearson, spearman = scipy_r(x, y)
    scaled = x * 10.0**power
    tiny = (scaled != 0) & (np.abs(scaled) < np.finfo(np.float64).tiny)
    if (
        not np.isfinite(scaled).all()
        or np.isnan(pearson)
        or tiny.any()
        or len(set(scaled.tolist())) < len(set(values))
    ):
        return  # scaled past float64, or below its normal numbers: other numbers
    # scaling rounds each value: r moves by about 1e-16 over the spread of the values
    spread = float(np.ptp(x) / np.abs(x).max())
    assert evaluate_scoring.pearson(scaled, y) == pytest.approx(pearson, rel=1e-9, abs=1e-13 / spread)
    assert evaluate_scoring.spearman(scaled, y) == close(spearman)


# ---------------------------------------------------------------- similarity --eval on such files


def test_eval_with_scores_of_1e308_gives_scipys_r(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """A real process: no numpy warning reaches stderr, and r is that of the scores scaled down."""
    path = pairs_file(tmp_path, [repr(s) for s in HUGE])
    run = run_process("similarity", "--eval", str(path), "--json")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    doc = strict_json(run.stdout)
    cos = cosines(tiny, WORDS)
    assert doc["pearson"] == close(scipy_r(np.array(HUGE) / 1e308, cos)[0])
    assert doc["spearman"] == close(stats.spearmanr(HUGE, cos)[0])
    assert doc["unreadable"] == 0 and doc["notes"] == [] and doc["used"] == len(WORDS)
    scaled = strict_json(
        run_cli(
            "similarity", "--eval", str(pairs_file(tmp_path, [repr(s / 1e308) for s in HUGE])), "--json"
        ).stdout
    )
    assert scaled["pearson"] == close(doc["pearson"])


def test_scores_that_are_not_finite_are_unreadable_lines(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    scores = ["8.5", "abc", "9.2", "nan", "5.0", "inf", "7.9", "1e999"]
    path = pairs_file(tmp_path, scores)
    with path.open("a") as f:
        f.write("# a comment\n\nbad line\n")
    doc = run_json("similarity", "--eval", str(path))
    assert (
        doc["unreadable"] == 5
    )  # abc, nan, inf, 1e999 and the line of one field; comments and blanks are none
    assert (doc["pairs"], doc["used"], doc["skipped"]) == (4, 4, 0)
    kept = [i for i, s in enumerate(scores) if s not in {"abc", "nan", "inf", "1e999"}]
    gold = np.array([float(scores[i]) for i in kept])
    pearson, spearman = scipy_r(gold, cosines(tiny, [WORDS[i] for i in kept]))
    assert doc["pearson"] == close(pearson)
    assert doc["spearman"] == close(spearman)
    (note,) = doc["notes"]
    assert note.startswith("5 lines of ") and "the first is line 2, 'man\\tking\\tabc'" in note
    assert "'abc' is not a number" in note
    table = run_cli("similarity", "--eval", str(path))
    assert (
        table.exit_code == 0 and "unreadable" in table.stdout and "line 2" in " ".join(table.stdout.split())
    )


def test_all_nan_scores_are_no_pairs(hub: FakeHub, tmp_path: Path) -> None:
    path = pairs_file(tmp_path, ["nan"] * len(WORDS))
    result = run_cli("similarity", "--eval", str(path), "--json")
    assert result.exit_code == 2
    message = json.loads(result.stderr)["error"]["message"]
    assert "holds no word pairs" in message
    assert f"{len(WORDS)} lines are unreadable, the first line 1, 'king\\tqueen\\tnan'" in message
    assert "its score 'nan' is not a finite number" in message


def test_every_null_has_a_note(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    same_score = run_json("similarity", "--eval", str(pairs_file(tmp_path, ["5"] * len(WORDS))))
    assert same_score["pearson"] is None and same_score["spearman"] is None
    assert same_score["notes"] == ["pearson and spearman are undefined: every human score is the same"]
    # a row of NaN: its cosines are no numbers, so neither is any correlation with them
    wte = tiny.wte.copy()
    wte[tiny.id("dog")] = np.nan
    folder = save_local(dataclasses.replace(tiny, wte=wte), tmp_path / "nan-dog")
    path = pairs_file(tmp_path, [str(i) for i in range(len(WORDS))])
    doc = strict_json(run_cli("similarity", "--eval", str(path), "-m", str(folder), "--json").stdout)
    assert doc["pearson"] is None and doc["spearman"] is None
    assert doc["notes"] == [
        "pearson and spearman are undefined: the cosine of 'cat' and 'dog' and 1 other pair is not a number "
        "(the model's rows hold NaN or infinite values there)"
    ]


# ---------------------------------------------------------------- geometry: no numpy warning, strict JSON


def unit(rows: np.ndarray) -> np.ndarray:
    x = np.asarray(rows, dtype=np.float64)
    return np.asarray(x / np.linalg.norm(x, axis=1, keepdims=True))


def geometry_of(
    tiny: Tiny, folder: Path, wte: np.ndarray | None = None, wpe: np.ndarray | None = None
) -> dict[str, Any]:
    """geometry --json of tiny with these tables, in a real process: nothing on stderr, strict JSON."""
    wte, wpe = tiny.wte if wte is None else wte, tiny.wpe if wpe is None else wpe
    save_local(dataclasses.replace(tiny, wte=wte, wpe=wpe), folder)
    run = run_process("geometry", "-m", str(folder), "--json")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    doc: dict[str, Any] = strict_json(run.stdout)
    return doc


def test_geometry_of_a_row_of_tiny_numbers(tiny: Tiny, tmp_path: Path) -> None:
    """A row of 1e-40 (float32's subnormals): its inverse norm is past float32, which made numpy warn and
    every content-against-position figure null. It is a direction like any other."""
    wte = tiny.wte.copy()
    wte[5] = 1e-40
    doc = geometry_of(tiny, tmp_path / "tiny-row", wte=wte)
    cos = unit(wte) @ unit(tiny.wpe).T
    cross = doc["wte_vs_wpe"]
    # float32 products: each cosine within 8 (d + 2) 2^-24 of the exact one, so their mean too
    assert cross["mean_abs_cosine"] == pytest.approx(np.abs(cos).mean(), abs=1.6e-5)
    i, j = np.unravel_index(np.argmax(np.abs(cos)), cos.shape)
    assert (cross["max_pair"]["id"], cross["max_pair"]["position"]) == (i, j)
    assert cross["max_abs_cosine"] == pytest.approx(abs(cos[i, j]), abs=1e-12)
    assert doc["notes"] == []


def test_table_figures_with_rows_of_tiny_and_huge_numbers_are_brute_forces() -> None:
    """Rows at float32's ends (1e-40, 3.4e38): numpy warned (an inverse or a product past float32) and the
    figures were lost. (The cache refuses a row whose norm is past float32 before geometry sees it: the
    functions are checked here.) pytest turns any numpy warning into a failure."""
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(300, 16)).astype(np.float32), rng.normal(size=(40, 16)).astype(np.float32)
    a[3], a[7], a[9, 0], b[2] = 1e-40, 3.4e38, 3.4e38, 1e-40
    shape = tables.table_shape(a)
    cross = tables.cross_cosines(a, b, shape.norms)
    ua, ub = unit(a), unit(b)
    pairs = ua @ ua.T
    assert shape.mean_cosine == pytest.approx(pairs[~np.eye(len(a), dtype=bool)].mean(), abs=1e-12)
    s = np.linalg.svd(a.astype(np.float64) - a.astype(np.float64).mean(axis=0), compute_uv=False)
    np.testing.assert_allclose(shape.pc_variance, (s**2 / (s**2).sum())[:10], atol=1e-12)
    cos = ua @ ub.T
    # float32 products of unit rows: each cosine within 8 (d + 2) 2^-24 of the exact one, so their mean too
    assert cross.mean_abs == pytest.approx(np.abs(cos).mean(), abs=8 * 18 * 2**-24)
    i, j = np.unravel_index(np.argmax(np.abs(cos)), cos.shape)
    assert cross.argmax == (int(i), int(j)) and cross.max_abs == pytest.approx(abs(cos[i, j]), abs=1e-12)


def test_geometry_of_rows_of_inf(tiny: Tiny, tmp_path: Path) -> None:
    wte = tiny.wte.copy()
    wte[[5, 9]] = np.inf
    doc = geometry_of(tiny, tmp_path / "inf-rows", wte=wte)
    assert doc["wte"]["mean_cosine"] is None and doc["wte"]["pc_variance"] == [None] * 10
    assert doc["wte_vs_wpe"]["mean_abs_cosine"] is None and doc["wte_vs_wpe"]["max_pair"] is None
    assert doc["wpe"]["mean_cosine"] is not None  # wpe is untouched
    assert doc["notes"][:2] == [
        "wte: 2 rows hold NaN or infinite values, so its mean_cosine and pc_variance are null (such a row "
        "has no direction, and no variance that is a number)",
        "wte_vs_wpe: mean_abs_cosine, max_abs_cosine and max_pair are null: a row of wte holds NaN or "
        "infinite values",
    ]
    assert "not a finite number" in doc["notes"][2]  # the norms of inf: to_dict's own note for them


def test_geometry_of_a_table_of_one_row_repeated(tiny: Tiny, tmp_path: Path) -> None:
    """No variance: pc_variance is null, with the reason; the mean cosine is 1, not past it."""
    doc = geometry_of(tiny, tmp_path / "constant", wpe=np.full_like(tiny.wpe, 0.1))
    assert doc["wpe"]["pc_variance"] == [None] * 10
    assert -1.0 <= doc["wpe"]["mean_cosine"] <= 1.0
    assert doc["wpe"]["mean_cosine"] == pytest.approx(1.0, abs=1e-12)
    assert doc["notes"] == [
        "wpe: pc_variance is null: its rows do not vary (every row is the same), so no direction holds any "
        "of their variance"
    ]
    table = run_cli("geometry", "-m", str(tmp_path / "constant"))
    assert table.exit_code == 0 and "pc_variance is null" in " ".join(table.stdout.split())


def test_geometry_of_a_table_of_zeros_says_why_each_figure_is_null(tiny: Tiny, tmp_path: Path) -> None:
    doc = geometry_of(tiny, tmp_path / "zeros", wte=np.zeros_like(tiny.wte))
    assert doc["wte"]["mean_cosine"] is None and doc["wte_vs_wpe"]["mean_abs_cosine"] is None
    assert doc["notes"] == [
        "wte: mean_cosine is null: a mean over pairs of rows needs two rows that are not zeros, and wte "
        "has 0",
        "wte: pc_variance is null: its rows do not vary (every row is the same), so no direction holds any "
        "of their variance",
        "wte_vs_wpe: mean_abs_cosine, max_abs_cosine and max_pair are null: every row of wte is zeros, so no "
        "pair of rows has an angle",
    ]


# ---------------------------------------------------------------- benchmark files as streams, within limits

QUESTIONS = ": royalty\nman king woman queen\nwoman queen man king\n"


def limited(*args: str) -> subprocess.CompletedProcess[str]:
    """The console script in a process that may not map more than 2 GB: a reader that holds an endless
    file fails there (MemoryError) rather than filling the machine."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    exe = Path(sys.executable).with_name("gpt2emb")
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=120, preexec_fn=cap, env=dict(os.environ)
    )


@pytest.mark.parametrize("command", ["analogy", "similarity"])
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_dev_zero_is_refused_at_the_line_limit(hub: FakeHub, command: str) -> None:
    run = limited(command, "--eval", "/dev/zero")
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr == (
        "gpt2emb: /dev/zero, line 1: longer than 1 MB; a benchmark line is a few words: is this the file you "
        "meant?\n"
    )


def test_a_line_past_the_limit_is_refused_and_one_at_it_read(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_bytes(QUESTIONS.encode() + b"x" * limits.MAX_LINE + b"\n")  # a line of exactly MAX_LINE
    assert [s.questions for s in evaluate_files.read_analogies(path)] == [
        [("man", "king", "woman", "queen"), ("woman", "queen", "man", "king")]
    ]
    path.write_bytes(QUESTIONS.encode() + b"x" * (limits.MAX_LINE + 1) + b"\n")
    result = run_cli("analogy", "--eval", str(path))
    assert result.exit_code == 2
    assert f"{path}, line 4: longer than 1 MB; a benchmark line is a few words" in " ".join(
        result.stderr.split()
    )


def test_a_file_past_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text(QUESTIONS)
    with path.open("r+b") as f:
        f.truncate(limits.MAX_FILE + 1)  # sparse: no disk used
    for command in ("analogy", "similarity"):
        result = run_cli(command, "--eval", str(path))
        assert result.exit_code == 2
        message = " ".join(result.stderr.split())
        assert f"{path} is over 64 MB: a benchmark file is far smaller" in message


def feed(fifo: Path, lines: Iterator[bytes], most: int) -> threading.Thread:
    """A thread that writes lines into the FIFO, at most `most` bytes, until the reader closes it."""

    def write() -> None:
        written = 0
        try:
            with fifo.open("wb") as f:
                for line in lines:
                    if written + len(line) > most:
                        break
                    f.write(line)
                    written += len(line)
        except BrokenPipeError:  # the reader stopped: what a refusal does
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def endless() -> Iterator[bytes]:
    yield b": royalty\n"
    while True:
        yield b"man king woman queen\n"


def test_a_fifo_is_read_like_a_file_and_refused_at_the_file_limit(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "questions.txt"
    plain.write_text(QUESTIONS)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = feed(fifo, iter([QUESTIONS.encode()]), len(QUESTIONS))
    from_fifo = run_json("analogy", "--eval", str(fifo))
    writer.join(timeout=10)
    from_file = run_json("analogy", "--eval", str(plain))
    assert (from_fifo["sections"], from_fifo["total"]) == (from_file["sections"], from_file["total"])
    # an endless FIFO: refused once it has given MAX_FILE bytes (here 4,096, not to read 64 MB in a test)
    monkeypatch.setattr(limits, "MAX_FILE", 4096)
    writer = feed(fifo, endless(), 1 << 20)  # bounded, so that a reader without the limit ends too
    result = run_cli("analogy", "--eval", str(fifo))
    writer.join(timeout=10)
    assert not writer.is_alive()
    assert result.exit_code == 2
    assert "fifo is over 4,096 bytes: a benchmark file is far smaller" in " ".join(result.stderr.split())


PIECES = ["a", "é", "東", "😀", " ", "\n", "\r", "\r\n", "\x85", "\u2028", "\x0b", "\x0c", "\x1c", "\x00"]


@FUZZ
@given(
    st.lists(st.one_of(st.sampled_from(PIECES), st.binary(max_size=3)), max_size=60),
    st.integers(1, 9),
)
def test_lines_are_those_of_splitlines_however_the_file_is_cut(
    tmp_path_factory: pytest.TempPathFactory, pieces: list[str | bytes], read: int
) -> None:
    """Read a few bytes at a time (a multi-byte character, \\r\\n or a bad byte cut between two reads), the
    lines are those of the whole text's splitlines, bad bytes replaced."""
    data = b"".join(p if isinstance(p, bytes) else p.encode() for p in pieces)
    path = tmp_path_factory.mktemp("cut") / "text"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluate_files, "_READ", read)
        got = list(evaluate_files._lines(path))
    assert got == data.decode("utf-8", errors="replace").splitlines()
