"""errors.py pinned where a mutation run (scripts/mutate.py) found it loose: each exit code and error type of
docs/errors.md's table, as a real `gpt2emb` process gives them (the numbers are the docs', not ExitCode's),
and a message's `option=value` spelling for a Python caller."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpt2emb.errors import option

from conftest import run_process
from fakehub import FakeHub
from tinymodel import Tiny, save_local


def error_of(done: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    """The exit code and the error's type, from the one JSON line on stderr."""
    return done.returncode, json.loads(done.stderr.splitlines()[-1])["error"]["type"]


@pytest.mark.parametrize(
    ("raised", "code", "kind"),
    [("RuntimeError('planted')", 1, "internal"), ("KeyboardInterrupt()", 130, None)],
)
def test_a_bug_exits_1_and_an_interrupt_130(raised: str, code: int, kind: str | None) -> None:
    program = (
        "import sys\n"
        "from gpt2emb.core import sizes\n"
        "def planted():\n"
        f"    raise {raised}\n"
        "sizes.models = planted\n"
        "from gpt2emb.cli import main\n"
        "sys.argv = ['gpt2emb', 'models', '--json']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stderr
    if kind is not None:
        assert error_of(done) == (1, "internal")
        assert "internal error: RuntimeError: planted (please report it)" in done.stderr


def test_an_interrupt_before_the_command_starts_exits_130() -> None:
    # while the arguments are read, before click runs the command (which has its own way to 130)
    program = (
        "import sys\n"
        "from gpt2emb.cli import root\n"
        "def planted(argv):\n"
        "    raise KeyboardInterrupt()\n"
        "root._check_utf8 = planted\n"
        "sys.argv = ['gpt2emb', 'models', '--json']\n"
        "root.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr


def test_an_unknown_model_exits_3(tmp_path: Path) -> None:
    done = run_process("vector", "cat", "-m", str(tmp_path / "no-such-folder"), "--json")
    assert error_of(done) == (3, "unknown_model")


def test_a_model_never_fetched_offline_exits_4(hub: FakeHub) -> None:
    done = run_process("vector", "cat", "--json", env={"HF_HUB_OFFLINE": "1"})
    assert error_of(done) == (4, "not_cached")


def test_a_hub_that_answers_an_error_exits_5(hub: FakeHub) -> None:
    hub.fault = lambda method, path: "500" if path.endswith(".safetensors") else None  # config.json served
    done = run_process("vector", "cat", "--json")
    assert error_of(done) == (5, "network")


def test_a_model_of_a_type_gpt2emb_does_not_read_exits_6(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "model")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "no-such-type"}))
    done = run_process("vector", "cat", "-m", str(folder), "--json")
    assert error_of(done) == (6, "bad_model")


def test_some_lines_that_failed_exit_7(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "model")
    exe = Path(sys.executable).with_name("gpt2emb")
    done = subprocess.run(
        [str(exe), "vector", "-", "-m", str(folder), "--jsonl"],
        input="cat\nid:99999\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 7, done.stderr
    assert [json.loads(line)["word"] for line in done.stdout.splitlines()] == ["cat"]


def test_a_python_caller_sees_an_option_as_its_parameter() -> None:
    assert option("k", 5) == "k=5"
    assert option("among", Path("a/b")) == "among='a/b'"
    assert option("exact") == "exact"


def test_a_python_caller_reads_the_message_as_the_exceptions_text(tmp_path: Path) -> None:
    import gpt2emb

    with pytest.raises(gpt2emb.Gpt2embError) as caught:
        gpt2emb.open(str(tmp_path / "no-such-folder"))
    assert str(caught.value) == (
        f"no such file or folder: {tmp_path / 'no-such-folder'}; give the folder that holds the model's "
        "config.json and weights, or a word2vec, GloVe or fastText .vec file"
    )
