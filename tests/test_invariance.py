"""A word's answer is bit-for-bit the same whatever else is asked with it, under every BLAS kernel here.

The fast pass over wte is one matrix product for all the words of a command, and a matrix-vector and a
matrix-matrix product round differently (and differently again per OpenBLAS kernel); what is shown must not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import run_json
from fakehub import FakeHub

WORDS = ["cat", "dog", "king", "queen", "man", "woman", "kitten", "cats"] + [
    f"id:{i}" for i in range(200, 292)
]
SIZES = (1, 2, 3, 7, 100)

# Each batch puts a word among others in both orders; its answer must equal the one it gets alone.
CHECK = """
import json, sys
from gpt2emb.core import neighbors, vector
from gpt2emb.core.similarity import similarity
from gpt2emb.core.open import RankOptions
from gpt2emb.registry import resolve
words, sizes = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def items(ws):
    n = neighbors.neighbors(resolve("gpt2"), ws, RankOptions(k=8))
    v = vector.vector(resolve("gpt2"), ws)
    return {w: (a, b) for w, a, b in zip(ws, n.items, v.items, strict=True)}
alone = {w: items([w])[w] for w in words[:8]}
bad = []
for size in sizes:
    for batch in (words[:size], words[:size][::-1]):
        got = items(batch)
        bad += [(size, w) for w in alone if w in got and got[w] != alone[w]]
sim = {tuple(ws): similarity(resolve("gpt2"), ws) for ws in (["cat", "dog"], ["dog", "king", "cat", "queen"])}
a, b = sim[("cat", "dog")], sim[("dog", "king", "cat", "queen")]
if a.matrix[0][1] != b.matrix[2][0] or a.norms[0] != b.norms[2]:
    bad.append(("similarity", "cat-dog"))
print(json.dumps(bad))
"""


def _kernels() -> list[Any]:
    """OpenBLAS kernels, each skipped (with the reason) where this CPU cannot run it."""
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    needs = {"Haswell": "avx2", "SkylakeX": "avx512f", "Sandybridge": "avx", "Nehalem": "sse4_2"}
    return [
        pytest.param(
            kernel,
            marks=pytest.mark.skipif(
                f" {flag}" not in flags, reason=f"this CPU has no {flag.upper()}: {kernel} cannot run here"
            ),
        )
        for kernel, flag in needs.items()
    ]


def test_a_words_neighbors_do_not_depend_on_the_other_words(hub: FakeHub) -> None:
    alone = {w: run_json("neighbors", w, "-k", "8")["items"][0] for w in WORDS[:8]}
    for size in SIZES:
        for batch in (WORDS[:size], WORDS[:size][::-1]):
            got = {item["word"]: item for item in run_json("neighbors", *batch, "-k", "8")["items"]}
            for w in alone.keys() & got.keys():
                assert got[w] == alone[w], f"{w} among {size} words"


def test_an_analogy_ranks_its_inputs_as_the_exact_scores_do(hub: FakeHub) -> None:
    one = run_json("analogy", "king", "man", "woman", "-k", "3")
    both = run_json("analogy", "king", "man", "woman", "-k", "3", "-m", "gpt2", "-m", "openai-community/gpt2")
    assert one["results"][0]["token"] == " queen"
    assert [r["rank"] for r in one["inputs"]] == [5, 168, 2]  # the fixture's planted rows, by hand
    assert both == one  # asked twice under two names: one model, the single-model answer


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64", reason="OpenBLAS x86 kernels")
@pytest.mark.parametrize("kernel", _kernels())
def test_bit_for_bit_under_each_blas_kernel(hub: FakeHub, kernel: str) -> None:
    run_json("neighbors", "cat")  # build the entry here; the child process only opens it
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel}
    done = subprocess.run(
        [sys.executable, "-c", CHECK, json.dumps(WORDS), json.dumps(SIZES)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [], f"answers that changed with the batch under {kernel}"
