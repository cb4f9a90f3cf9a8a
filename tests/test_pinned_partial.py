"""store/partial.py, pinned where a mutation run (scripts/mutate.py, seed 13) found its tests loose: a
download kept whole (the build stopped after every byte arrived) is not asked of the Hub again, not even for
no bytes; a kept file of other ranges is started anew, and none of its old blocks is read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import registry
from gpt2emb.store import build

from conftest import run_cli
from fakehub import FakeHub

CHECKPOINT = "model.safetensors"


def test_a_download_kept_whole_is_not_fetched_again(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def stopped(*args: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C once every byte arrived, before the entry went in place

    with monkeypatch.context() as patched:
        patched.setattr(build, "_install", stopped)
        with pytest.raises(KeyboardInterrupt):
            build.open_model(registry.resolve("gpt2"))
    [kept] = caches["cache"].rglob("*.partial")
    hub.requests.clear()
    result = run_cli("vector", "cat", "--json")
    assert result.exit_code == 0, result.stderr
    assert [r for r in hub.requests if CHECKPOINT in r[1] and r[0] == "GET"] == []
    assert not kept.exists()  # in the entry now


def test_a_kept_file_of_other_ranges_is_never_read_past_what_this_download_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partial file whose header names other ranges (a gpt2emb that fetched other tensors) is started
    anew: its blocks, whole and matching their CRC-32s though they are, hold other bytes, and must not be
    read back after the blocks that this download wrote before it too was cut."""
    from gpt2emb.store import partial

    monkeypatch.setattr(partial, "BLOCK", 4096)
    source = np.random.default_rng(3).integers(0, 256, 64 * 1024, dtype=np.uint8).tobytes()
    path = tmp_path / "c0ffee.etag.partial"

    def fill_from(data: bytes, cut_after: int | None = None) -> Any:
        def fill(start: int, into: memoryview, landed: Any) -> None:
            for at in range(0, len(into), 4096):
                if cut_after is not None and start + at >= cut_after:
                    raise ConnectionError("the connection dropped")
                n = min(4096, len(into) - at)
                into[at : at + n] = data[start + at : start + at + n]
                landed(n)

        return fill

    other = [(0, 40_000)]  # the ranges an earlier download asked, kept whole
    partial.fetch(fill_from(bytes(reversed(source))), other, path, None)
    wanted = [(100, 20_000), (30_000, 20_000)]  # 40,000 bytes too
    with pytest.raises(ConnectionError):
        partial.fetch(fill_from(source, cut_after=100 + 8192), wanted, path, None)
    got = partial.fetch(fill_from(source), wanted, path, None)
    assert bytes(got) == source[100:20_100] + source[30_000:50_000]
