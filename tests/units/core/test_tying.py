"""What core/tying.py decides, pinned where a mutation run found it loose (issue 43, point 4): a large untied
output layer is compared on a seeded sample of 4,096 rows, read in runs of 64 rows; --grad's figures from
the gradients the model gives (made up here, to put them where they decide): the sum of both paths matches the
tied gradient to 1e-5 of its norm and no further, all zeros are a relative difference of 0, and a text whose
every token gets a gradient by the input path has no note that some do not."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pytest

from conftest import run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, safetensors_bytes

ROWS = 5000  # more than the sample's 4,096


def test_a_large_output_layer_is_compared_on_4096_rows_in_runs_of_64(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpt2emb.core import tying

    rng = np.random.default_rng(3)
    extra = rng.normal(0.0, 0.1, (ROWS - len(tiny.wte), tiny.wte.shape[1])).astype(np.float32)
    big = dataclasses.replace(
        tiny, wte=np.vstack([tiny.wte, extra]), config={**tiny.config, "vocab_size": ROWS}
    )
    files = hub_files(big)
    files["config.json"] = json.dumps({**big.config, "tie_word_embeddings": False}).encode()
    files["model.safetensors"] = safetensors_bytes({**big.state(), "lm_head.weight": big.wte * 2})
    hub.repos["someone/untied-big"] = Repo("e" * 40, files)
    run_json("neighbors", "cat", "-m", "someone/untied-big")  # the entry is built: what follows reads lm_head
    hub.requests.clear()
    monkeypatch.setattr(tying, "COMPARE_ALL_BYTES", 0)  # as if its 640 KB were over the limit of 1 GB
    c = run_json("tying", "--compare", "-m", "someone/untied-big")["comparison"]
    assert c["sampled"] is True and c["rows"] == 4096 and c["total_rows"] == ROWS
    assert c["mean_cosine_matching"] == pytest.approx(1.0, abs=1e-6)  # each output row is twice its wte row
    ranges = [r[2] for r in hub.requests if r[0] == "GET" and r[1].endswith("model.safetensors")]
    sizes = [int(b) - int(a) + 1 for a, b in (r.removeprefix("bytes=").split("-") for r in ranges)]
    assert sizes == [64 * big.wte.shape[1] * 4] * 64  # 64 runs of 64 rows, each read once


def made_up(monkeypatch: pytest.MonkeyPatch, tiny: Tiny, gradients: Any) -> None:
    """heavy.lm_gradients giving gradients(ids) instead of running the model."""
    from gpt2emb import heavy

    monkeypatch.setattr(heavy, "lm_gradients", lambda _f, _c, ids, _l=None: (1.0, *gradients(ids)))


def three(tiny: Tiny, ids: tuple[int, ...], tied: float, off: float) -> tuple[np.ndarray, ...]:
    """The input path on the rows of the text's tokens (norm tied), the output path zeros, the tied gradient
    their sum but for off on the first token's row."""
    by_input, by_output = np.zeros_like(tiny.wte), np.zeros_like(tiny.wte)
    by_input[list(ids), 1] = tied / np.sqrt(len(set(ids)))
    total = by_input + by_output
    total[ids[0], 2] = off
    return by_input, by_output, total


@pytest.mark.parametrize(("off", "matches"), [(0.5e-5, True), (1.5e-5, False)])
def test_the_paths_match_the_tied_gradient_to_1e_5_of_its_norm(
    hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch, off: float, matches: bool
) -> None:
    norm = 100.0
    made_up(monkeypatch, tiny, lambda ids: three(tiny, ids, norm, off * norm))
    g = run_json("tying", "--grad", "the king and queen")["gradient"]
    assert g["tied_norm"] == pytest.approx(norm, rel=1e-5)
    assert g["relative_difference"] == pytest.approx(off, rel=1e-3)
    assert g["sum_matches_tied"] is matches
    assert not any("the input path touches" in n for n in g["notes"])  # every token's row has its gradient


def test_gradients_of_zeros_differ_by_0(hub: FakeHub, tiny: Tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    made_up(monkeypatch, tiny, lambda ids: (np.zeros_like(tiny.wte),) * 3)
    g = run_json("tying", "--grad", "the king and queen")["gradient"]
    assert g["tied_norm"] == 0 and g["relative_difference"] == 0 and g["sum_matches_tied"] is True
    assert g["notes"][0].startswith("the gradient is all zeros")
