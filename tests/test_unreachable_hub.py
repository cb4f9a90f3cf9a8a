"""Cross-cutting: a first use when the Hub cannot be reached (issue 54). Real processes against a port where
nothing listens (refused) and a listener that accepts and never answers: exit 4 within 5 s and 15 s, with the
two ways on; the whole-weights fetch of context and tying --load likewise; an answer worth retrying (5xx)
still retried."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from conftest import run_json
from fakehub import FakeHub

WAYS_ON = (
    "run once with the network to fetch it, or try the tiny example model "
    "(python docs/examples/tiny_gpt2.py, then -m ./tiny-gpt2); HF_HUB_OFFLINE=1 gives this answer at once"
)


def refused_endpoint() -> str:
    """A loopback port where nothing listens: bound, then closed (the kernel refuses a connection to it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@contextlib.contextmanager
def silent_endpoint() -> Iterator[str]:
    """A listener that never accepts: the kernel completes each connection into its backlog, and no answer
    ever comes."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


def first_use(endpoint: str, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The console script in a process of its own, as a learner runs it: huggingface_hub's telemetry on (its
    first request may look up a list of coding agents, up to 3 s more), the process's start counted."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_TELEMETRY"}
    env["HF_HOME"] = os.environ["HF_HOME"] + "-" + str(time.monotonic_ns())  # no list of agents kept yet
    exe = Path(sys.executable).with_name("gpt2emb")
    start = time.monotonic()
    done = subprocess.run(
        [str(exe), *args], capture_output=True, text=True, env={**env, "HF_ENDPOINT": endpoint}, timeout=120
    )
    return done, time.monotonic() - start


def test_refused_says_so_at_once_with_the_two_ways_on(caches: dict[str, Path]) -> None:
    done, took = first_use(refused_endpoint(), "neighbors", "cat")
    assert done.returncode == 4 and done.stdout == "", done.stderr
    assert done.stderr.splitlines() == [
        "gpt2emb: openai-community/gpt2 is not cached and the Hub cannot be reached (cannot connect: "
        f"[Errno 111] Connection refused): {WAYS_ON}"
    ]
    assert took < 5.0, took  # the limit: huggingface_hub's own retries took 24 s
    assert not caches["cache"].exists() or not any(caches["cache"].rglob("manifest.json"))


def test_a_hub_that_connects_and_never_answers_is_told_within_15_s(caches: dict[str, Path]) -> None:
    with silent_endpoint() as endpoint:
        done, took = first_use(endpoint, "vector", "cat")
    assert done.returncode == 4 and done.stdout == "", done.stderr
    assert done.stderr.splitlines() == [
        "gpt2emb: openai-community/gpt2 is not cached and the Hub cannot be reached (it connected, then sent "
        f"no answer within 6 s): {WAYS_ON}"
    ]
    assert 6.0 <= took < 15.0, took  # waited for the probe's read, and no longer (it was past 150 s)


def test_the_whole_weights_of_context_and_tying_load_go_through_the_same_probe(
    hub: FakeHub, caches: dict[str, Path]
) -> None:
    """The embedding tables cached (read by ranges), the whole checkpoint never fetched: running the model
    whole is a first use of its weights."""
    run_json("vector", "cat")
    for args in (["context", "cat", "the cat sat", "a cat ran"], ["tying", "--load"]):
        done, took = first_use(refused_endpoint(), *args)
        assert done.returncode == 4 and done.stdout == "", (args, done.stderr)
        assert done.stderr.splitlines() == [
            "gpt2emb: the whole of gpt2 (model.safetensors) is not cached and the Hub cannot be reached "
            f"(cannot connect: [Errno 111] Connection refused): {WAYS_ON}"
        ], args
        assert took < 5.0, (args, took)
    with silent_endpoint() as endpoint:
        done, took = first_use(endpoint, "context", "cat", "the cat sat", "a cat ran")
    assert done.returncode == 4 and "the whole of gpt2 (model.safetensors) is not cached" in done.stderr
    assert 6.0 <= took < 15.0, took


# huggingface_hub's waits between tries skipped and counted, in a real process
COUNTING_WAITS = """
import sys, time
waits = []
time.sleep = waits.append
from gpt2emb.cli import main
try:
    main()
finally:
    print(len(waits), file=sys.__stderr__)
"""


def test_an_answer_worth_retrying_is_still_retried(hub: FakeHub, caches: dict[str, Path]) -> None:
    """A 503 is an answer: the probe lets the first use go on, and huggingface_hub's retries get it."""
    failed: list[str] = []

    def busy(method: str, path: str) -> str | None:
        if path.endswith("/config.json") and len(failed) < 3:
            failed.append(method)
            return "500"
        return None

    hub.fault = busy
    done = subprocess.run(
        [sys.executable, "-c", COUNTING_WAITS, "vector", "cat", "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert failed == ["HEAD", "HEAD", "HEAD"]  # the probe's, hf_hub_download's first, then its retries'
    assert int(done.stderr.split()[-1]) >= 1  # it waited before trying again
    assert '"cat"' in done.stdout
