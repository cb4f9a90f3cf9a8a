"""Words from stdin without end (`yes king | gpt2emb ...`): what gathers them all (similarity's matrix, a
--json document) stops at its stated limit, at once, with exit 2; --jsonl and tables stream any number."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from gpt2emb import limits
from gpt2emb.core import similarity

from conftest import HANG, run_cli
from fakehub import FakeHub


def endless(*args: str) -> subprocess.CompletedProcess[str]:
    """The console script fed `king` lines until it stops reading (as `yes king |` feeds it). Its output goes
    to files: communicate() would close its stdin, an end the endless input must not have."""
    exe = Path(sys.executable).with_name("gpt2emb")
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        subprocess.Popen(
            [str(exe), *args], bufsize=0, stdin=subprocess.PIPE, stdout=out, stderr=err
        ) as process,
    ):
        pipe = process.stdin
        assert pipe is not None

        def feed() -> None:
            try:
                while True:
                    pipe.write(b"king\n" * 4096)
            except (OSError, ValueError):
                pass  # the reader stopped (or the pipe was closed): what is asked

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            code = process.wait(timeout=HANG)  # a reader without its limit never ends
        finally:
            process.kill()
        writer.join(timeout=HANG)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(args, code, out.read().decode(), err.read().decode())


def test_similarity_of_endless_words_stops_past_its_matrix(hub: FakeHub) -> None:
    assert run_cli("vector", "king").exit_code == 0  # cached: the process below reads no Hub
    run = endless("similarity", "-")
    assert run.returncode == 2, run.stderr
    said = " ".join(run.stderr.split())
    assert "similarity compares at most 1,000 words (a 1,000-square matrix), and stdin holds more" in said


def test_a_json_document_of_endless_words_stops_at_its_limit(hub: FakeHub) -> None:
    assert run_cli("vector", "king").exit_code == 0
    run = endless("neighbors", "-", "-k", "1", "--json")
    assert run.returncode == 2, run.stderr
    error = json.loads(run.stderr.splitlines()[-1])["error"]
    assert error["message"].startswith(f"--json gathers the answers into one document, at most {10_000:,}")
    assert "use --jsonl" in error["message"]


def test_the_limits_are_where_they_say(
    hub: FakeHub, stdin: Callable[[bytes], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_ANSWERS", 5)
    stdin(b"king\n" * 5)
    assert len(json.loads(run_cli("vector", "-", "--json").stdout)["items"]) == 5
    stdin(b"king\n" * 6)
    assert run_cli("vector", "-", "--json").exit_code == 2
    assert len(run_cli("vector", "-", "--jsonl").stdout.splitlines()) == 6  # a line each, no limit
    monkeypatch.setattr(similarity, "MAX_MATRIX", 4)
    stdin(b"king\ncat\ndog\nqueen\n")
    assert len(json.loads(run_cli("similarity", "-", "--json").stdout)["matrix"]) == 4
    stdin(b"king\ncat\ndog\nqueen\nman\n")
    assert run_cli("similarity", "-", "--json").exit_code == 2
    stdin(b"id:99999\n" * 5 + b"king\ncat\n")  # lines that fail are bounded too
    result = run_cli("similarity", "-")
    assert result.exit_code == 2 and "stdin holds more that fail" in " ".join(result.stderr.split())
