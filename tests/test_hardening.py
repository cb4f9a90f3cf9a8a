"""Faults a CLI meets in real use: processes started together, killed mid-build, damaged or unwritable caches,
and any text at all as input. Nothing cached may be lost, and no answer may be quietly wrong."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpt2emb import registry
from gpt2emb.store import build

from conftest import FUZZ, hang_guard, run_cli
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files


def entries(cache: Path) -> list[Path]:
    return sorted(p.parent for p in cache.rglob("manifest.json"))


@pytest.mark.parametrize(
    "args",
    [
        ("vector", ""),
        ("neighbors", "   "),
        ("neighbors", "cat", "-k", "0"),
        ("vector", "id:-3"),
        ("vector", "id:x"),
        ("analogy", "king", "", "woman"),
        ("positions", "5-2"),
        ("positions", "abc"),
        ("vector", "w" * 10_000),
        ("neighbors", "a\x07b"),
        ("vector", "<|endoftext|>"),
        ("neighbors", "cat", "-k", "-3"),
    ],
)
def test_bad_input_fetches_and_caches_nothing(
    hub: FakeHub, caches: dict[str, Path], args: tuple[str, ...]
) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2
    assert hub.requests == [] and not caches["cache"].exists()


WEIGHT_COMMANDS = [["vector", "king"], ["neighbors", "cat"], ["analogy", "king", "man", "woman"],
                   ["similarity", "cat", "dog"], ["positions", "0", "1"], ["tying"]]  # fmt: skip


@pytest.mark.parametrize("bad", ["not-gpt2", "no-weights", "wte-shape"])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_model_that_cannot_serve_is_one_clear_error_for_every_command(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path], tmp_path: Path, bad: str, as_json: bool
) -> None:
    if bad == "no-weights":  # a local folder with a config and a tokenizer, but no checkpoint
        model = tmp_path / "folder"
        model.mkdir()
        (model / "config.json").write_text(json.dumps(tiny.config))
        (model / "tokenizer.json").write_text(tiny.tokenizer.to_str())
        name, message = str(model), "no model.safetensors or pytorch_model.bin"
    else:
        changes = {"model_type": "t5"} if bad == "not-gpt2" else {"n_embd": 64}  # wte has 32 columns
        files = hub_files(tiny)
        files["config.json"] = json.dumps({**tiny.config, **changes}).encode()
        hub.repos["someone/bad"] = Repo("e" * 40, files)
        name = "someone/bad"
        message = "gpt2emb does not read" if bad == "not-gpt2" else "disagrees with its config"
    for args in WEIGHT_COMMANDS:
        if bad == "wte-shape" and args == ["tying"]:
            continue  # tying reads the config and the header only: it has no use for wte's shape
        result = run_cli(*args, "-m", name, *(["--json"] if as_json else []))
        assert result.exit_code == 6 and result.stdout == "", (args, result.output)  # a bad model
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
        text = json.loads(result.stderr)["error"]["message"] if as_json else result.stderr
        assert message in text, (args, text)
    assert entries(caches["cache"]) == []


def test_eight_processes_at_once_on_an_empty_cache(hub: FakeHub, caches: dict[str, Path]) -> None:
    exe = Path(sys.executable).with_name("gpt2emb")
    procs = [
        subprocess.Popen(
            [str(exe), "neighbors", "cat", "-k", "3", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in outputs]
    assert len({out for out, _ in outputs}) == 1
    assert json.loads(outputs[0][0])["items"][0]["neighbors"][0]["token"] == " cats"
    assert len(entries(caches["cache"])) == 1
    assert not list(caches["cache"].rglob(".*.tmp-*"))


@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5])
def test_killed_while_building_leaves_nothing_trusted(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path], delay: float
) -> None:
    slow = {"on": True}

    def stall(method: str, path: str) -> None:
        if slow["on"] and path.endswith("model.safetensors") and method == "GET":
            time.sleep(0.5)  # every range request of the checkpoint is slow: the kill lands mid-build
        return None

    hub.fault = stall
    exe = Path(sys.executable).with_name("gpt2emb")
    proc = subprocess.Popen(
        [str(exe), "neighbors", "cat", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert entries(caches["cache"]) == []  # a half-built entry is never in place
    slow["on"] = False
    after = run_cli("neighbors", "cat", "-k", "3", "--json")  # in-process: only the death needs its own
    assert after.exit_code == 0, after.stderr
    assert [n["token"] for n in json.loads(after.stdout)["items"][0]["neighbors"]] == [
        " cats",
        " kitten",
        " dog",
    ]
    assert len(entries(caches["cache"])) == 1
    assert not list(caches["cache"].rglob(".*.tmp-*"))  # leftovers of the killed build are gone


DIE_AT_WRITE = """
import os, pathlib, sys
import numpy as np
n, count = [0], [0]
def dying(write):
    def wrapped(*args, **kwargs):
        count[0] += 1
        if count[0] == n[0]:
            os._exit(137)  # as SIGKILL: no cleanup, no finally
        return write(*args, **kwargs)
    return wrapped
np.save = dying(np.save)
os.replace = dying(os.replace)
pathlib.Path.write_text = dying(pathlib.Path.write_text)
pathlib.Path.write_bytes = dying(pathlib.Path.write_bytes)
sys.argv = ["gpt2emb", "neighbors", "cat", "-k", "3", "--json"]
from gpt2emb.core import neighbors  # what a first use imports before its first write: loaded once, for all
from gpt2emb.cli import main
for line in sys.stdin:  # n: a first use that dies at its nth write, in a child forked before anything ran
    n[0] = int(line)
    child = os.fork()
    if child == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # its answer is not ours to pass on
        main()  # ends the child with its exit code
    print(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]), flush=True)
"""


def test_killed_at_every_write_of_a_build_leaves_nothing_trusted(
    hub: FakeHub, caches: dict[str, Path], tmp_path: Path
) -> None:
    """Die at the 1st, 2nd, ... write or rename of a first use, until a run gets through: after each death
    the next run answers correctly from one complete entry. Each run is a process of its own, forked from
    one that has imported what they all import (a new Python for each was most of this test's time)."""
    deaths = 0
    said = tmp_path / "stderr.txt"
    with (
        said.open("w") as stderr,
        subprocess.Popen(
            [sys.executable, "-c", DIE_AT_WRITE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},  # no thread of its own to fork with it
        ) as runs,
    ):
        assert runs.stdin is not None and runs.stdout is not None
        for n in range(1, 60):
            for folder in caches.values():
                shutil.rmtree(folder, ignore_errors=True)
            runs.stdin.write(f"{n}\n")
            runs.stdin.flush()
            with hang_guard():
                code = runs.stdout.readline()
            assert code, said.read_text()
            if int(code) == 0:
                break
            assert int(code) == 137, said.read_text()
            deaths += 1
            after = run_cli("neighbors", "cat", "-k", "3", "--json")  # in-process: only a death needs its own
            assert after.exit_code == 0, (n, after.output)
            neighbors = json.loads(after.stdout)["items"][0]["neighbors"]
            assert [x["token"] for x in neighbors] == [" cats", " kitten", " dog"], n
            assert len(entries(caches["cache"])) == 1 and not list(caches["cache"].rglob(".*.tmp-*")), n
        runs.stdin.close()
    assert deaths >= 8  # every file of an entry, its rename, and the refs around it


ENTRY_FILES = [
    "wte.npy",
    "wpe.npy",
    "wte_norm.npy",
    "pieces.txt",
    "tokenizer.json",
    "config.json",
    "manifest.json",
]


@pytest.mark.parametrize("name", ENTRY_FILES)
@pytest.mark.parametrize("damage", ["truncate", "garbage", "swap"])
def test_damaged_files_are_noticed_and_rebuilt(hub: FakeHub, tiny: Tiny, name: str, damage: str) -> None:
    m = build.open_model(registry.resolve("gpt2"))
    target = m.path / name
    if damage == "truncate":
        os.truncate(target, target.stat().st_size // 2)
    elif damage == "garbage":
        target.write_bytes(os.urandom(target.stat().st_size))
    elif name.endswith(".npy"):  # another model's matrix of the very same shape
        np.save(target, np.load(target)[::-1].copy())
    elif name == "manifest.json":  # another model's manifest: the same files, other contents
        manifest = json.loads(target.read_text())
        manifest["files"] = {f: "0" * len(fp) for f, fp in manifest["files"].items()}
        target.write_text(json.dumps(manifest))
    else:  # another model's file of the same size
        target.write_bytes(target.read_bytes()[::-1])
    result = run_cli("neighbors", "cat", "-k", "1", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["items"][0]["neighbors"][0]["token"] == " cats"
    note = json.loads(result.stderr.splitlines()[0])["note"]
    assert "cannot be trusted" in note and len(result.stderr.splitlines()) == 1
    np.testing.assert_array_equal(build.open_model(registry.resolve("gpt2")).wte, tiny.wte)


def test_unwritable_cache_folder_still_answers(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(blocker / "cache"))  # cannot be created: a file is in the way
    result = run_cli("neighbors", "cat", "-k", "1")
    assert result.exit_code == 0, result.output
    assert '" cats"' in result.stdout
    assert "working without it" in result.stderr


def test_full_disk_still_answers(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_save = np.save
    calls = {"n": 0}

    def full_disk(path: object, array: object, *args: object, **kwargs: object) -> None:
        calls["n"] += 1
        if calls["n"] == 1:  # the first write into the cache: the disk is full
            raise OSError(28, "No space left on device")
        real_save(path, array, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(np, "save", full_disk)
    result = run_cli("neighbors", "cat", "-k", "1", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["items"][0]["neighbors"][0]["token"] == " cats"
    assert "No space left" in result.stderr
    assert entries(caches["cache"]) == []


COMMANDS = [
    lambda w, n: ["vector", w],
    lambda w, n: ["neighbors", w, "-k", str(n)],
    lambda w, n: ["analogy", w, "king", "man", "-k", str(n)],
    lambda w, n: ["positions", w],
    lambda w, n: ["positions", str(n)],
    lambda w, n: ["vector", f"id:{w}"],
    lambda w, n: ["neighbors", "cat", "-m", w],
    lambda w, n: ["similarity", w, "cat"],
    lambda w, n: ["vector", "king", "--dims", str(n)],
    lambda w, n: ["positions", "--heatmap", "--cells", str(n)],
    lambda w, n: ["analogy", "--eval", w or "x"],
    lambda w, n: ["tying", "-m", w],
    lambda w, n: ["sizes", "--dtype", w],
]


@FUZZ
@given(
    command=st.sampled_from(COMMANDS),
    word=st.text(max_size=40).filter(lambda w: not w.startswith("-")),
    number=st.integers(min_value=-(10**6), max_value=10**6),
    as_json=st.booleans(),
)
def test_any_input_gets_an_answer_or_one_clear_error(
    hub: FakeHub,
    caches: dict[str, Path],
    command: Callable[[str, int], list[str]],
    word: str,
    number: int,
    as_json: bool,
) -> None:
    assert run_cli("neighbors", "cat", "-k", "1").exit_code == 0  # the model is cached (once, then warm)
    before = sorted(caches["cache"].rglob("*"))
    args = command(word, number) + (["--json"] if as_json else [])
    result = run_cli(*args)
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    assert result.exit_code != 1, result.stderr  # 1 is an internal error: a bug
    if result.exit_code == 0:
        if as_json:
            json.loads(result.stdout)
        return
    assert result.stdout == ""
    assert sorted(caches["cache"].rglob("*")) == before  # a failed request writes nothing
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    if as_json:
        assert json.loads(lines[0])["error"]["code"] == result.exit_code
    else:
        assert lines[0].startswith("gpt2emb: ")


@pytest.mark.parametrize("fault", ["500", "drop", "cut"])
def test_a_cached_model_keeps_working_whatever_the_hub_does(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    first = run_cli("analogy", "king", "man", "woman", "--json")
    assert first.exit_code == 0
    repo = hub.repos["openai-community/gpt2"]
    repo.push("f" * 40, repo.files)  # main moved: a refresh must ask, and then fetch the new commit
    hub.fault = lambda method, path: fault  # a cut spares HEAD (no body): then the fetch is what fails
    hub.requests.clear()
    asked = run_cli("cache", "refresh", "--json")
    assert hub.requests, "the run never reached the Hub, so the fault never fired"
    assert asked.exit_code == 5, asked.output
    assert [f["code"] for f in json.loads(asked.stdout)["failed"]] == [5]
    assert len(asked.stderr.splitlines()) == 1 and "failed" in json.loads(asked.stderr)["error"]["message"]
    hub.requests.clear()
    again = run_cli("analogy", "king", "man", "woman", "--json")
    assert again.exit_code == 0 and again.stdout == first.stdout  # the entry and its commit are kept
    assert hub.requests == []  # a warm command does not even ask


class Evil:
    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, ("touch pwned",))


def test_a_pickle_that_runs_code_is_refused(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pickle

    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny.config))
    (folder / "tokenizer.json").write_text(tiny.tokenizer.to_str())
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"wte.weight": Evil()}))
    monkeypatch.chdir(tmp_path)
    result = run_cli("neighbors", "cat", "-m", str(folder))
    assert result.exit_code == 6 and "weights-only" in result.stderr
    assert not (tmp_path / "pwned").exists()


def test_remote_code_in_a_repo_is_never_run(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = hub_files(tiny)
    config = {**tiny.config, "auto_map": {"AutoModelForCausalLM": "evil.EvilModel", "AutoConfig": "evil.Cfg"}}
    files["config.json"] = json.dumps(config).encode()
    files["evil.py"] = (
        b"import pathlib; pathlib.Path('pwned').touch()\nclass EvilModel: pass\nclass Cfg: pass\n"
    )
    hub.repos["someone/evil"] = Repo("d" * 40, files)
    monkeypatch.chdir(tmp_path)
    for args in (["neighbors", "cat"], ["tying"], ["tying", "--load"]):
        result = run_cli(*args, "-m", "someone/evil", "--json")
        assert result.exit_code == 0, (args, result.stderr)
    assert not (tmp_path / "pwned").exists()
    assert not any(path.endswith("evil.py") for _, path, _ in hub.requests)


def test_a_commit_id_from_the_hub_never_becomes_a_path(hub: FakeHub, caches: dict[str, Path]) -> None:
    hub.repos["someone/sneaky"] = Repo("..", hub.repos["openai-community/gpt2"].files)
    result = run_cli("neighbors", "cat", "-m", "someone/sneaky")
    assert result.exit_code == 5 and "unusable answer" in result.stderr
    assert not caches["cache"].exists()


NOT_WORDS = {
    "🙂": "raw bytes",  # the tiny vocabulary holds none of its characters whole (GPT-2's own has " 🙂")
    "日本語": "raw bytes",
    "a\x07b": "control character",
    "<|endoftext|>": "special token",
    "supercalifragilisticexpialidocious": "more than the 8",
}


@pytest.mark.parametrize("word", NOT_WORDS)
@pytest.mark.parametrize("as_json", [False, True])
def test_what_is_not_a_word_is_refused_by_every_command(
    hub: FakeHub, caches: dict[str, Path], word: str, as_json: bool
) -> None:
    assert run_cli("neighbors", "cat", "-k", "1").exit_code == 0  # the model is cached
    before = sorted(caches["cache"].rglob("*"))
    for args in (
        ["vector", word],
        ["neighbors", word],
        ["analogy", "king", word, "woman"],
        ["similarity", word, "cat"],
    ):
        result = run_cli(*args, *(["--json"] if as_json else []))
        assert result.exit_code == 2 and result.stdout == "", result.output
        message = json.loads(result.stderr)["error"]["message"] if as_json else result.stderr
        assert NOT_WORDS[word] in message and len(result.stderr.strip().splitlines()) == 1
    assert sorted(caches["cache"].rglob("*")) == before


@pytest.mark.parametrize("as_json", [False, True])
def test_a_split_word_is_answered_with_its_pieces(hub: FakeHub, tiny: Tiny, as_json: bool) -> None:
    expected = tuple(tiny.tokenizer.encode(" gato").ids)
    assert len(expected) == 4
    for args in (["vector", "gato"], ["neighbors", "gato", "-k", "3"], ["similarity", "gato", "king"]):
        result = run_cli(*args, *(["--json"] if as_json else []))
        assert result.exit_code == 0, result.stderr
        if as_json:
            item = json.loads(result.stdout)["items"][0]
            assert (
                tuple(t["id"] for t in item["tokens"]) == expected and "splits into 4 tokens" in item["note"]
            )
        else:
            assert "splits into 4 tokens" in " ".join(result.stdout.split() + result.stderr.split())
    assert run_cli("neighbors", "gato", "--pool", "strict").exit_code == 2


@pytest.mark.parametrize("fault", ["500", "drop", "cut"])
def test_an_uncached_model_with_a_failing_hub_says_so_and_how_to_fix_it(
    hub: FakeHub, caches: dict[str, Path], fault: str
) -> None:
    hub.fault = lambda method, path: fault if path.endswith("model.safetensors") and method == "GET" else None
    result = run_cli("neighbors", "cat", "--json")
    assert result.exit_code == 5 and result.stdout == ""  # 5: the Hub failed (4 is offline, never fetched)
    message = json.loads(result.stderr)["error"]["message"]
    assert "openai-community/gpt2 is not cached" in message and "run again" in message, message
    assert entries(caches["cache"]) == []


def test_a_hang_fails_the_test_where_it_hangs() -> None:
    """run_cli's bound: a run past it is failed there, not left to CI's own limit."""
    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match="no answer in 0 s: a hang"), hang_guard(0.2):
        while True:
            time.sleep(0.01)
    assert time.monotonic() - started < 5
