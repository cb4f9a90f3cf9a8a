"""What core/tying.py decides, pinned where a mutation run found it loose (issue 43, point 4): a large untied
output layer is compared on a seeded sample of 4,096 rows, read in runs of 64 rows."""

from __future__ import annotations

import dataclasses
import json

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
