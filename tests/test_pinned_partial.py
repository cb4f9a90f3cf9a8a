"""store/partial.py, pinned where a mutation run (scripts/mutate.py, seed 13) found its tests loose: a
download kept whole (the build stopped after every byte arrived) is not asked of the Hub again, not even for
no bytes."""

from __future__ import annotations

from pathlib import Path

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
