"""Files a user hands gpt2emb may be hostile: a damaged tokenizer.json, config.json or checkpoint, a model
name no file or repo can have, a cache folder that cannot be, an input without end. Each gets a clean answer
with its exit code (6: a damaged model, 3: an unknown name, 2: bad input), never an internal error or a hang.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpt2emb
from gpt2emb import limits, registry
from gpt2emb.errors import UnknownModel
from gpt2emb.store import checkpoint

from conftest import FUZZ, run_cli, run_process
from fakehub import FakeHub
from tinymodel import save_local

FILES = ("config.json", "tokenizer.json", "model.safetensors")


@pytest.fixture(scope="module")
def model_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A small local GPT-2 folder's files, as save_pretrained writes them."""
    from tinymodel import build

    folder = save_local(build(), tmp_path_factory.mktemp("model") / "folder")
    return {name: (folder / name).read_bytes() for name in FILES}


def folder_with(files: dict[str, bytes], where: Path, **changed: bytes) -> str:
    where.mkdir(parents=True, exist_ok=True)
    for name, data in {**files, **changed}.items():
        (where / name).write_bytes(data)
    return str(where)


def clean(result: Any) -> str:
    """The command's whole output, checked to be no crash: one line on stderr, no traceback."""
    text: str = result.stdout + result.stderr
    assert "Traceback" not in text and "internal error" not in text, text
    return text


def edited_json(data: bytes, change: Callable[[Any], Any]) -> bytes:
    parsed = json.loads(data)
    return json.dumps(change(parsed) or parsed).encode()


# ---------------------------------------------------------------- tokenizer.json


def _no_model(t: dict[str, Any]) -> None:
    del t["model"]


def _model_5(t: dict[str, Any]) -> None:
    t["model"] = 5


def _missing_piece(t: dict[str, Any]) -> None:
    t["model"]["merges"].insert(0, ["zz", "qq"])  # neither piece is in the vocabulary


def _vocab_list(t: dict[str, Any]) -> None:
    t["model"]["vocab"] = list(t["model"]["vocab"])


def _id_text(t: dict[str, Any]) -> None:
    t["model"]["vocab"]["Ġking"] = "301"


def _long_prefix(t: dict[str, Any]) -> None:
    t["model"]["continuing_subword_prefix"] = "abcdefghijklmnopqrstuvwxyz"  # the library's Rust code panics


TOKENIZER_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda b: b"",
    "truncated": lambda b: b[: len(b) // 2],
    "random bytes": lambda b: bytes(range(256)) * 8,
    "no model": lambda b: edited_json(b, _no_model),
    "model 5": lambda b: edited_json(b, _model_5),
    "merge of a missing piece": lambda b: edited_json(b, _missing_piece),
    "vocab a list": lambda b: edited_json(b, _vocab_list),
    "an id as text": lambda b: edited_json(b, _id_text),
    "a prefix that panics the library": lambda b: edited_json(b, _long_prefix),
}


@pytest.mark.parametrize("damage", list(TOKENIZER_DAMAGE))
def test_a_damaged_tokenizer_is_a_bad_model(
    model_files: dict[str, bytes], tmp_path: Path, damage: str
) -> None:
    bad = TOKENIZER_DAMAGE[damage](model_files["tokenizer.json"])
    model = folder_with(model_files, tmp_path / "m", **{"tokenizer.json": bad})
    result = run_cli("vector", "king", "-m", model)
    assert result.exit_code == 6, clean(result)
    assert f"{model}/tokenizer.json" in clean(result) and len(result.stderr.strip().splitlines()) == 1


def test_a_panic_of_the_tokenizers_library_is_one_line_in_a_real_process(
    model_files: dict[str, bytes], tmp_path: Path
) -> None:
    bad = edited_json(model_files["tokenizer.json"], _long_prefix)
    model = folder_with(model_files, tmp_path / "m", **{"tokenizer.json": bad})
    done = run_process("vector", "king", "-m", model)  # the Rust backtrace goes to fd 2, past sys.stderr
    assert done.returncode == 6, done.stderr
    assert done.stderr.count("\n") == 1 and "tokenizers library cannot read it" in done.stderr


def test_a_build_reads_the_tokenizer_before_its_fetch_thread_starts(
    tiny: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The panic text above is silenced only while no other thread runs (tokenizer_library.library_faults).

    So a build has the library read the tokenizer file before it starts the thread that fetches and writes
    the tables. No panic of that read can meet a running fetch thread. The test above failed 2 runs in 3 when
    one could.
    """
    import threading

    from tokenizers import Tokenizer

    made = Tokenizer.from_str
    seen: list[list[str]] = []

    def from_str(text: str) -> Any:
        seen.append([t.name for t in threading.enumerate()])
        return made(text)

    monkeypatch.setattr(Tokenizer, "from_str", from_str)
    result = run_cli("vector", "king", "-m", str(save_local(tiny, tmp_path / "tiny")), "--json")
    assert result.exit_code == 0, clean(result)
    assert seen and all("gpt2emb-fetch" not in names for names in seen), seen


def test_a_token_id_past_wte_is_a_bad_model(model_files: dict[str, bytes], tmp_path: Path) -> None:
    def past(t: dict[str, Any]) -> None:
        t["model"]["vocab"]["zzzqqq"] = 50258  # the tiny wte has 343 rows

    bad = edited_json(model_files["tokenizer.json"], past)
    model = folder_with(model_files, tmp_path / "m", **{"tokenizer.json": bad})
    result = run_cli("vector", "zzzqqq", "--exact", "-m", model)
    assert result.exit_code == 6, clean(result)
    assert "zzzqqq the id 50258, but wte has rows 0 to 342" in result.stderr
    assert "the tokenizer and the table disagree" in result.stderr


# ---------------------------------------------------------------- config.json

CONFIG_DAMAGE: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "nested": (lambda b: b"[" * 100_000, "nests deeper than any JSON"),
    "infinite n_embd": (lambda b: b.replace(b'"n_embd": 32', b'"n_embd": Infinity'), "Infinity"),
    "n_head 0": (lambda b: edited_json(b, lambda c: {**c, "n_head": 0}), "n_head = 0"),
    "epsilon null": (
        lambda b: edited_json(b, lambda c: {**c, "layer_norm_epsilon": None}),
        "layer_norm_epsilon = null",
    ),
    "max_position_embeddings -5": (
        lambda b: edited_json(b, lambda c: {**c, "max_position_embeddings": -5}),
        "n_positions = 1024 but max_position_embeddings = -5",
    ),
    "hidden_size beside n_embd": (
        lambda b: edited_json(b, lambda c: {**c, "hidden_size": 31}),
        "n_embd = 32 but hidden_size = 31",
    ),
    "activation empty": (
        lambda b: edited_json(b, lambda c: {**c, "activation_function": ""}),
        'activation_function = ""',
    ),
    "activation unknown": (
        lambda b: edited_json(b, lambda c: {**c, "activation_function": "gelu_newest"}),
        'activation_function = "gelu_newest", which transformers does not know',
    ),
    "n_inner negative": (lambda b: edited_json(b, lambda c: {**c, "n_inner": -3}), "n_inner = -3"),
    "n_head not dividing n_embd": (
        lambda b: edited_json(b, lambda c: {**c, "n_head": 3}),
        "n_head = 3, which must be a divisor of n_embd = 32",
    ),
    "n_layer past the checkpoint's": (
        lambda b: edited_json(b, lambda c: {**c, "n_layer": 100_000}),
        "n_layer = 100000, but the checkpoint holds 2 blocks",
    ),
}


@pytest.mark.parametrize("damage", list(CONFIG_DAMAGE))
@pytest.mark.parametrize("command", [["tying"], ["vector", "king"], ["sizes"]])
def test_a_damaged_config_is_a_bad_model_naming_the_key(
    model_files: dict[str, bytes], tmp_path: Path, damage: str, command: list[str]
) -> None:
    change, named = CONFIG_DAMAGE[damage]
    model = folder_with(model_files, tmp_path / "m", **{"config.json": change(model_files["config.json"])})
    result = run_cli(*command, "-m", model)
    if damage == "activation unknown" and command != ["tying"]:  # only transformers' model has a use for it
        assert result.exit_code == 0, clean(result)
        return
    assert result.exit_code == 6, clean(result)
    assert named in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_checkpoint_counts_its_own_blocks(model_files: dict[str, bytes], tmp_path: Path) -> None:
    model = folder_with(model_files, tmp_path / "m")
    info = checkpoint.read_info(gpt2emb.registry.resolve(model), "c" * 40)
    assert checkpoint.layers_in(info.tensors) == 2  # h.0.* and h.1.* in the tiny model
    assert checkpoint.layers_in({k: v for k, v in info.tensors.items() if ".h." not in k}) is None
    sizes = json.loads(run_cli("sizes", "-m", model, "--json").stdout)
    assert sizes["models"][0]["n_layer"] == 2


@pytest.mark.parametrize("where", ["after the header", "at the end"])
def test_bytes_outside_every_tensor_are_damage(
    model_files: dict[str, bytes], tmp_path: Path, where: str
) -> None:
    data = model_files["model.safetensors"]
    at = 8 + int.from_bytes(data[:8], "little") if where == "after the header" else len(data)
    model = folder_with(model_files, tmp_path / "m", **{"model.safetensors": data[:at] + b"\0" + data[at:]})
    result = run_cli("vector", "king", "-m", model)  # shifted by a byte, every number would be garbage
    assert result.exit_code == 6, clean(result)
    assert "has no bytes outside its tensors" in result.stderr


# ---------------------------------------------------------------- pytorch_model.bin


class _RunsCode:
    """Unpickled, it would make a file: the proof that a checkpoint's code ran."""

    def __init__(self, proof: Path) -> None:
        self.proof = proof

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.proof}",))


@pytest.mark.parametrize("kind", ["random bytes", "code"])
def test_tying_load_refuses_a_bad_pickle_and_runs_none_of_it(
    model_files: dict[str, bytes], tmp_path: Path, kind: str
) -> None:
    ran = tmp_path / "the-pickle-ran"
    data = bytes(range(256)) * 20 if kind == "random bytes" else pickle.dumps({"x": _RunsCode(ran)})
    model = tmp_path / "m"
    folder_with({k: v for k, v in model_files.items() if k != "model.safetensors"}, model)
    (model / "pytorch_model.bin").write_bytes(data)
    result = run_cli("tying", "--load", "-m", str(model))
    assert result.exit_code == 6, clean(result)
    assert "could not be read safely as a weights-only checkpoint" in result.stderr
    assert "save the model again" in " ".join(result.stderr.split())  # the fix
    assert len(result.stderr.strip().splitlines()) == 1  # no warning of torch's before it
    assert not ran.exists()


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(
    "name, said",
    [
        ("x" * 256, "is not a model I know"),
        ("owner/a--b", "is not a Hub repo id"),
        ("owner/" + "x" * 97, "each part at most 96 characters"),
        ("a" * 97 + "/b", "each part at most 96 characters"),  # the owner too: the Hub is never asked
        ("owner/x.git", "is not a Hub repo id"),
        ("owner/a..b", "is not a Hub repo id"),  # the Hub's rule, not "a model I know": repo-shaped
        ("owner/.hidden", "is not a Hub repo id"),
        ("-owner/x", "is not a Hub repo id"),
    ],
)
def test_a_name_no_file_or_repo_can_have_is_unknown(hub: FakeHub, name: str, said: str) -> None:
    result = run_cli("vector", "king", "-m", name)
    assert result.exit_code == 3, clean(result)
    assert said in result.stderr and len(result.stderr) < 500
    assert hub.requests == []
    with pytest.raises(UnknownModel, match=said):
        gpt2emb.open(name)


def test_an_owner_the_hub_cannot_hold_is_unknown_offline_too(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = run_cli("vector", "king", "-m", "a" * 97 + "/b")
    assert result.exit_code == 3, clean(result)
    assert "is not a Hub repo id" in result.stderr and hub.requests == []


@given(
    owner=st.text("ab-._git", min_size=1, max_size=100), name=st.text("ab-._git", min_size=1, max_size=100)
)
def test_a_repo_id_is_refused_exactly_when_huggingface_hub_refuses_it(owner: str, name: str) -> None:
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]

    repo = f"{owner}/{name}"
    try:
        validate_repo_id(repo)
        valid = True
    except HFValidationError:
        valid = False
    try:
        resolved = registry.resolve(repo).repo == repo
    except UnknownModel:
        resolved = False
    assert resolved == valid, repo


def test_a_repo_name_of_96_characters_is_asked_for(hub: FakeHub) -> None:
    name = "owner/" + "x" * 96
    result = run_cli("vector", "king", "-m", name)
    assert result.exit_code == 3, clean(result)
    assert f"there is no Hub repo {name}" in result.stderr  # the (fake) Hub was asked, and said no
    assert hub.requests


# ---------------------------------------------------------------- the cache folder


@pytest.mark.parametrize("where", ["proc", "long name", "under a device"])
def test_an_unusable_cache_folder_answers_without_it(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    if where == "proc" and not Path("/proc/self").is_dir():
        pytest.skip("no /proc on this system")
    folder = {
        "proc": Path("/proc/cache"),
        "long name": tmp_path / ("c" * 300) / "cache",
        "under a device": Path(os.devnull) / "cache",
    }[where]
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(folder))
    result = run_cli("neighbors", "cat", "-k", "1")
    assert result.exit_code == 0, clean(result)
    assert '" cats"' in result.stdout
    assert result.stderr.count("working without it") == 1
    for command in (["cache", "list"], ["cache", "verify"], ["cache", "refresh"], ["cache", "clear"]):
        assert run_cli(*command).exit_code == 0, clean(run_cli(*command))


# ---------------------------------------------------------------- endless input


def test_a_word_list_without_end_is_refused_naming_the_limit(hub: FakeHub, tmp_path: Path) -> None:
    result = run_cli("neighbors", "cat", "--among", "/dev/zero")
    assert result.exit_code == 2, clean(result)
    assert f"/dev/zero is over {limits.size(limits.MAX_FILE)}" in result.stderr
    long_line = tmp_path / "words.txt"
    long_line.write_bytes(b"cat\n" + b"x" * (limits.MAX_LINE + 1) + b"\ndog\n")
    result = run_cli("neighbors", "cat", "--among", str(long_line))
    assert result.exit_code == 2, clean(result)
    assert "words.txt, line 2: longer than 1 MB" in result.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # a FIFO is read like any file
    writer = subprocess.Popen(["sh", "-c", f"printf 'dog\\nkitten\\n' > {fifo}"])
    result = run_cli("neighbors", "cat", "--among", str(fifo), "--json")
    writer.wait(timeout=30)
    assert result.exit_code == 0, clean(result)
    assert [n["token"] for n in json.loads(result.stdout)["items"][0]["neighbors"]][:2] == [" kitten", " dog"]


@pytest.mark.parametrize("command", [["neighbors", "-"], ["analogy", "-"], ["input", "-"]])
def test_stdin_without_end_is_refused_naming_the_limit(hub: FakeHub, command: list[str]) -> None:
    exe = Path(sys.executable).with_name("gpt2emb")
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([str(exe), *command], stdin=zero, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    limit = limits.size(limits.MAX_TEXT if command[0] == "input" else limits.MAX_LINE)
    assert limit in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- damage of any kind


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@dataclass(frozen=True)
class Damage:
    """What to do to one of the folder's files (small, so that hypothesis shows it, not the file)."""

    name: str
    kind: str  # overwrite, insert, truncate; or json: a value somewhere replaced by any JSON value
    at: float = 0.0  # where, as a share of the file (of the header, for the checkpoint)
    payload: bytes = b""
    key: str = ""  # json: the key replaced (in the tokenizer, of its model when model_key)
    model_key: bool = False
    value: Any = None

    def applied(self, files: dict[str, bytes]) -> bytes:
        data = files[self.name]
        if self.kind == "json":
            parsed = json.loads(data)
            (parsed["model"] if self.model_key else parsed)[self.key] = self.value
            return json.dumps(parsed).encode()
        span = 8 + int.from_bytes(data[:8], "little") if self.name == "model.safetensors" else len(data)
        i = int(self.at * min(span, len(data)))
        if self.kind == "truncate":
            return data[:i]
        if self.kind == "insert":
            return data[:i] + self.payload + data[i:]
        return data[:i] + self.payload + data[i + len(self.payload) :]


@st.composite
def damage(draw: st.DrawFn, files: dict[str, bytes]) -> Damage:
    """One of the folder's files, damaged: bytes overwritten, inserted or cut (in the header, for the
    checkpoint, where its structure is), or for a JSON file a value somewhere replaced by any JSON value."""
    name = draw(st.sampled_from(FILES))
    if name != "model.safetensors" and draw(st.booleans()):
        parsed = json.loads(files[name])
        model_key = name == "tokenizer.json" and draw(st.booleans())
        key = draw(st.sampled_from(sorted(parsed["model"] if model_key else parsed)))
        return Damage(name, "json", key=key, model_key=model_key, value=draw(JSON_VALUES))
    kind = draw(st.sampled_from(["overwrite", "insert", "truncate"]))
    return Damage(name, kind, draw(st.floats(0, 1)), draw(st.binary(min_size=1, max_size=16)))


def test_fuzz_damaged_files_get_a_clean_answer(model_files: dict[str, bytes]) -> None:
    """Any damage to config.json, tokenizer.json or model.safetensors: exit 0 or 6, never a crash."""
    seen: dict[int, int] = {}

    @FUZZ
    @given(damage(model_files))
    def run(damaged: Damage) -> None:
        name, data = damaged.name, damaged.applied(model_files)
        with tempfile.TemporaryDirectory() as where:
            model = folder_with(model_files, Path(where) / "m", **{name: data})
            os.environ["GPT2EMB_CACHE_DIR"] = str(Path(where) / "cache")
            for command in (["vector", "king", "--json"], ["tying", "--json"]):
                if command[0] == "tying" and name == "tokenizer.json":
                    continue  # tying reads no tokenizer
                result = run_cli(*command, "-m", model)
                assert result.exit_code in (0, 6), (command, name, clean(result))
                clean(result)
                seen[result.exit_code] = seen.get(result.exit_code, 0) + 1

    run()
    # pytest -s shows the counts of a deep run
    print(f"damaged files: {sum(seen.values())} runs, by exit code {dict(sorted(seen.items()))}")
    assert seen.get(6, 0) > 0 and seen.get(0, 0) > 0, seen  # both kinds of damage were met
