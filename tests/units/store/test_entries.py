"""store/entries.py: an entry's files opened and checked, and where the cache is.

Where the cache is when GPT2EMB_CACHE_DIR is not set, the names of a local folder's entry folders (a cache
written by an earlier gpt2emb must still be found), and a norm that changes under an open entry's mapping."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from gpt2emb import kept, registry
from gpt2emb.errors import DamagedEntry
from gpt2emb.store import build

from conftest import run_cli
from tinymodel import Tiny, save_local


def cache_path(monkeypatch: pytest.MonkeyPatch, home: Path) -> str:
    monkeypatch.delenv(kept.CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    result = run_cli("cache", "path")
    assert result.exit_code == 0, result.stderr
    return str(result.stdout.strip())


def test_the_cache_is_where_the_docs_say_on_linux(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the Linux folder")
    # docs/cache-and-offline.md
    assert cache_path(monkeypatch, tmp_path) == str(tmp_path / ".cache" / "gpt2emb")


def test_the_cache_is_where_the_docs_say_on_windows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """%LOCALAPPDATA%\\gpt2emb\\Cache (docs/cache-and-offline.md, docs/windows.md): platformdirs' Windows
    rules, with the folder read from the environment as platformdirs does where no Windows API answers."""
    import platformdirs
    from platformdirs import windows

    monkeypatch.setattr(platformdirs, "PlatformDirs", windows.Windows)
    monkeypatch.setattr(windows, "get_win_folder", windows.get_win_folder_from_env_vars)  # 4.0.0 on
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert cache_path(monkeypatch, tmp_path) == str(tmp_path / "Local" / "gpt2emb" / "Cache")


def test_a_local_folders_entry_is_named_as_earlier_versions_named_it(
    tiny: Tiny, tmp_path: Path, caches: dict[str, Path]
) -> None:
    """cache/local/<the first 16 hex digits of the SHA-256 of the folder's path>/<a 16-digit fingerprint>: a
    cache that an earlier gpt2emb wrote is found, not built again beside it."""
    folder = save_local(tiny, tmp_path / "model")
    m = build.open_model(registry.resolve(str(folder)))
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    assert m.path.parent == caches["cache"] / "local" / digest
    assert re.fullmatch(r"[0-9a-f]{16}", m.path.name) and m.commit == m.path.name


def test_a_norm_changed_under_an_open_entry_is_refused_with_its_row(hub: object, tiny: Tiny) -> None:
    """The open checks wte_norm.npy whole; a handle keeps it mapped, so a later change of the file is seen
    only by the rows' own checks (check_rows), which allow float32 rounding (a relative 1e-5) and no more."""
    m = build.open_model(registry.resolve("gpt2"))
    cat, dog = tiny.id("cat"), tiny.id("dog")
    m.check_rows([cat, dog])  # sound
    m.sound.clear()  # as a new handle's: nothing checked yet
    stored = np.load(m.path / "wte_norm.npy", mmap_mode="r+")
    true = float(stored[dog])
    assert 0.1 < true < 100
    stored[dog] = true * (1 + 3e-6)  # within the rounding allowed
    stored.flush()
    m.check_rows([cat, dog])
    m.sound.clear()
    stored[dog] = true + min(0.5, true / 4)  # off by less than 1 in absolute terms, far past the rounding
    stored.flush()
    with pytest.raises(DamagedEntry) as caught:
        m.check_rows([cat, dog])
    assert str(caught.value) == (
        f"the cache entry of gpt2 ({m.commit[:12]}) is damaged: the norm of row {dog} in wte_norm.npy "
        "does not match the row; run gpt2emb cache verify --repair"
    )
