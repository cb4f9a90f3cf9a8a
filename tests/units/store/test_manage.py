"""store/manage.py (cache list, clear, refresh): an entry whose folder cannot be read stays listed.

Such an entry is not called outdated, nor cleared as such. (tests/test_store.py's
test_an_entry_whose_folder_cannot_be_told_stays_listed_and_is_not_outdated patches
entries.folder_fingerprint, a name manage.py imported before the patch, so its folder is read as usual
there.)"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from gpt2emb import registry
from gpt2emb.store import build

from conftest import run_cli
from tinymodel import Tiny, save_local


def test_an_entry_whose_folder_cannot_be_read_is_not_outdated(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = save_local(tiny, tmp_path / "model")
    built = build.open_model(registry.resolve(str(folder))).path
    real = Path.stat

    def stat(self: Path, **kwargs: Any) -> Any:
        if self.parent == folder:  # its files, as in a folder this user may no longer search
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    listed = json.loads(run_cli("cache", "list", "--json").stdout)["entries"]
    assert [(e["path"], e["outdated"]) for e in listed] == [(str(built), False)]
    cleared = json.loads(run_cli("cache", "clear", "--outdated", "--json").stdout)
    assert cleared["entries"] == [] and (built / "manifest.json").is_file()
