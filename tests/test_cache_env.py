"""GPT2EMB_CACHE_DIR is a path the user gives, as an argument is: one that is not UTF-8 is refused as such
an argument is (exit 2, the byte named), since the cache folder is written into results (cache path, list)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import run_process


@pytest.mark.skipif(sys.platform == "win32", reason="environment variables are UTF-16 there")
def test_a_cache_folder_not_in_utf8_is_refused_naming_the_byte(tmp_path: Path) -> None:
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9")  # Latin-1 é: byte 0xe9 is no UTF-8
    for args in (("cache", "path"), ("cache", "list", "--json"), ("vector", "king")):
        run = run_process(*args, env={"GPT2EMB_CACHE_DIR": name})
        assert run.returncode == 2, run.stderr
        said = run.stderr if "--json" not in args else json.loads(run.stderr)["error"]["message"]
        byte = len(str(tmp_path).encode()) + 5
        assert f"GPT2EMB_CACHE_DIR is not UTF-8 text (byte {byte})" in said
        assert run.stdout == ""
    assert os.listdir(tmp_path) == []  # no cache folder made
