"""Model files that the first damaged-files round let through: a tokenizer of a kind gpt2emb cannot read,
two pieces under one id, a config whose counts are floats or whose blocks the weights do not hold (a pickle,
whose tensor names are not read; an info file cached by an older gpt2emb), warnings of transformers' on
stderr. Each is one line with exit 6, never an internal error, a hang or a silently wrong answer; and every
message about config.json names it as <model>/config.json."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import heavy
from gpt2emb.errors import BadModel
from gpt2emb.store import checkpoint

from conftest import COMMIT, run_cli, run_json, run_process
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, safetensors_bytes, save_local

CONTEXT = ("context", "king", "the king sat", "a king ran")


def one_line(result: Any) -> str:
    """The refusal's one line on stderr, checked to be no crash."""
    text: str = result.stdout + result.stderr
    assert "Traceback" not in text and "internal error" not in text, text
    assert result.exit_code == 6, text
    lines: list[str] = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def model(tiny: Tiny, where: Path, weights: str = "safetensors", /, **config: Any) -> Path:
    """The tiny GPT-2 saved in a folder, with config's fields changed (a field given as None is removed)."""
    folder = save_local(tiny, where, weights)
    changed = {**tiny.config, **config}
    (folder / "config.json").write_text(json.dumps({k: v for k, v in changed.items() if v is not None}))
    return folder


def edit_tokenizer(folder: Path, change: Any) -> None:
    parsed = json.loads((folder / "tokenizer.json").read_text())
    change(parsed)
    (folder / "tokenizer.json").write_text(json.dumps(parsed))


# ---------------------------------------------------------------- tokenizer.json: its kind, its ids


def _unigram(t: dict[str, Any], typed: bool = True) -> None:
    pieces = sorted(t["model"]["vocab"].items(), key=lambda p: p[1])
    t["model"] = {"unk_id": 0, "vocab": [[piece, -float(i)] for piece, i in pieces]}
    if typed:
        t["model"]["type"] = "Unigram"


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
def test_a_unigram_tokenizer_is_named_and_refused(tiny: Tiny, tmp_path: Path, typed: bool) -> None:
    folder = model(tiny, tmp_path / "m")
    edit_tokenizer(folder, lambda t: _unigram(t, typed))  # its vocab: a list of [piece, score]
    line = one_line(run_cli("vector", "king", "-m", str(folder)))
    assert f"{folder.resolve()}/tokenizer.json holds a Unigram tokenizer; gpt2emb reads BPE" in line


def _word_level(t: dict[str, Any]) -> None:
    t["model"] = {"type": "WordLevel", "vocab": t["model"]["vocab"], "unk_token": "<|endoftext|>"}


def _untyped(t: dict[str, Any]) -> None:
    del t["model"]["type"]  # the library takes it for what its fields are: a BPE


@pytest.mark.parametrize("change", [_word_level, _untyped], ids=["WordLevel", "untyped BPE"])
def test_a_tokenizer_whose_vocab_maps_pieces_to_ids_is_read(tiny: Tiny, tmp_path: Path, change: Any) -> None:
    folder = model(tiny, tmp_path / "m")
    edit_tokenizer(folder, change)
    doc = run_json("vector", "king", "--full", "-m", str(folder))
    np.testing.assert_array_equal(doc["items"][0]["vector"], tiny.wte[tiny.id("king")])


def test_two_pieces_under_one_id_are_refused(tiny: Tiny, tmp_path: Path) -> None:
    folder = model(tiny, tmp_path / "m")
    king = tiny.id("king")

    def queen_is_king(t: dict[str, Any]) -> None:
        t["model"]["vocab"]["Ġqueen"] = king

    edit_tokenizer(folder, queen_is_king)  # queen would silently show king's row
    line = one_line(run_cli("vector", "queen", "-m", str(folder)))
    assert f"{folder.resolve()}/tokenizer.json gives the id {king} to two tokens" in line
    assert "Ġqueen" in line and "Ġking" in line and line.endswith("save the model's tokenizer again")


@pytest.mark.parametrize("taken", ["by an added token", "by a piece"])
def test_an_added_token_under_an_id_taken_is_refused(tiny: Tiny, tmp_path: Path, taken: str) -> None:
    """The tokenizers library itself gives such a token another id (the next free one)."""
    folder = model(tiny, tmp_path / "m")
    first = "<|endoftext|>" if taken == "by an added token" else "Ġking"

    def added(t: dict[str, Any]) -> None:
        t["added_tokens"].append({**t["added_tokens"][0], "content": "<|other|>", "id": tiny.vocab[first]})

    edit_tokenizer(folder, added)
    line = one_line(run_cli("vector", "king", "-m", str(folder)))
    assert f"gives the id {tiny.vocab[first]} to two tokens, {first} and <|other|>" in line


# ---------------------------------------------------------------- config.json: whole numbers are integers


@pytest.mark.parametrize("field", ["n_head", "n_embd", "n_positions", "n_layer", "vocab_size"])
@pytest.mark.parametrize("command", [("tying",), CONTEXT, ("vector", "king")], ids=lambda c: c[0])
def test_a_count_written_as_a_float_is_refused(
    tiny: Tiny, tmp_path: Path, field: str, command: tuple[str, ...]
) -> None:
    value = float(tiny.config[field])  # type: ignore[arg-type]
    folder = model(tiny, tmp_path / "m", **{field: value})  # 2.0: transformers wants 2
    line = one_line(run_cli(*command, "-m", str(folder)))
    said = f"{folder.resolve()}/config.json says {field} = {value}, which must be an integer, written without"
    assert said in line


def test_a_float_beside_its_integer_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    folder = model(tiny, tmp_path / "m", hidden_size=32.0)  # transformers maps it onto n_embd: a float
    line = one_line(run_cli("tying", "-m", str(folder)))
    assert "config.json says hidden_size = 32.0, which must be an integer" in line


@pytest.mark.parametrize("command", [("tying",), CONTEXT], ids=lambda c: c[0])
def test_an_error_of_transformers_is_quoted_whole_on_one_line(
    tiny: Tiny, tmp_path: Path, command: tuple[str, ...]
) -> None:
    folder = model(tiny, tmp_path / "m", resid_pdrop="abc")  # a field gpt2emb leaves to transformers
    line = one_line(run_cli(*command, "-m", str(folder)))
    # the reason is on the second line of transformers' message, and past its 120th character
    assert "Validation error for field 'resid_pdrop': TypeError: Field 'resid_pdrop'" in line
    assert "expected float, got str (value: 'abc')" in line


# ---------------------------------------------------------------- config.json against the weights


@pytest.mark.parametrize("command", [("tying",), CONTEXT, ("vector", "king")], ids=lambda c: c[0])
def test_a_pickle_far_too_small_for_its_config_is_refused(
    tiny: Tiny, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """A pickle's tensor names are not read: its size bounds the blocks (tying would otherwise build a
    hundred thousand of them, for many minutes)."""
    folder = model(tiny, tmp_path / "m", "bin", n_layer=100_000)
    line = one_line(run_cli(*command, "-m", str(folder)))
    size = (folder / "pytorch_model.bin").stat().st_size
    assert line.startswith(f"gpt2emb: {folder.resolve()}/config.json says n_layer = 100000 and n_embd = 32")
    assert f"{folder.resolve()}/pytorch_model.bin holds {size:,} bytes" in line
    assert "the config and the weights disagree; save the model again" in line


def test_embeddings_alone_far_too_small_for_their_config_are_refused(tiny: Tiny, tmp_path: Path) -> None:
    folder = model(tiny, tmp_path / "m", n_layer=100_000)
    alone = {"transformer.wte.weight": tiny.wte, "transformer.wpe.weight": tiny.wpe}
    (folder / "model.safetensors").write_bytes(safetensors_bytes(alone))  # no tensor names a block
    line = one_line(run_cli("tying", "-m", str(folder)))
    assert f"{folder.resolve()}/model.safetensors holds" in line and "n_layer = 100000" in line


@pytest.mark.parametrize("weights", ["bin", "embeddings alone"])
def test_context_refuses_blocks_the_weights_do_not_hold(tiny: Tiny, tmp_path: Path, weights: str) -> None:
    """Blocks a checkpoint lacks would be started at random by transformers: a silently wrong answer."""
    n_layer = 20 if weights == "bin" else 2
    folder = model(tiny, tmp_path / "m", "bin" if weights == "bin" else "safetensors", n_layer=n_layer)
    holds = 2
    if weights != "bin":
        alone = {"transformer.wte.weight": tiny.wte, "transformer.wpe.weight": tiny.wpe}
        (folder / "model.safetensors").write_bytes(safetensors_bytes(alone))
        holds = 0
    line = one_line(run_cli(*CONTEXT, "-m", str(folder)))
    file, where = "pytorch_model.bin" if weights == "bin" else "model.safetensors", folder.resolve()
    assert (
        f"{where}/config.json gives the model {n_layer} blocks, but {where}/{file} holds {holds}: the config "
        "and the weights disagree; save the model again"
    ) in line


def test_a_pickle_that_holds_its_blocks_runs(tiny: Tiny, tmp_path: Path) -> None:
    folder = model(tiny, tmp_path / "m", "bin")
    assert run_json("tying", "-m", str(folder))["tied"] is True
    doc = run_json(*CONTEXT, "-m", str(folder))
    assert len(doc["layers"]) == 3  # h0 and the output of each of the 2 blocks


def test_a_pickle_not_in_torchs_zip_format_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    """The weights-only loader maps only torch's zip archives: an older torch's pickle is refused before its
    size is trusted (tying alone never loads it)."""
    import torch

    folder = model(tiny, tmp_path / "m")
    (folder / "model.safetensors").unlink()
    buffer = io.BytesIO()
    state = {k: torch.from_numpy(v.copy()) for k, v in tiny.state(prefix="transformer.").items()}
    torch.save(state, buffer, _use_new_zipfile_serialization=False)
    (folder / "pytorch_model.bin").write_bytes(buffer.getvalue())
    line = one_line(run_cli("tying", "-m", str(folder)))
    assert (
        f"{folder.resolve()}/pytorch_model.bin could not be read safely as a weights-only checkpoint" in line
    )
    assert "it is not a zip archive" in line


def test_an_info_file_of_an_older_gpt2emb_is_read_again(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    """An older gpt2emb cached the config and header of a commit without today's checks: its info file is
    read again from the model, and checked."""
    config = {**tiny.config, "n_layer": 100_000}
    files = {**hub_files(tiny, weights="bin"), "config.json": json.dumps(config).encode()}
    hub.repos["someone/gpt2-bin"] = Repo(COMMIT, files)
    info = caches["cache"] / "hub" / "someone--gpt2-bin" / "info" / f"{COMMIT}.json"
    info.parent.mkdir(parents=True)
    old = {"commit": COMMIT, "config": config, "weights_file": "pytorch_model.bin", "tensors": {}}
    info.write_text(json.dumps(old))  # as info_to_json wrote it before info files had a format
    line = one_line(run_cli("tying", "-m", "someone/gpt2-bin"))
    assert "someone/gpt2-bin's config.json says n_layer = 100000" in line
    assert f"someone/gpt2-bin's pytorch_model.bin holds {len(files['pytorch_model.bin']):,} bytes" in line


def test_an_info_file_read_again_is_written_in_the_current_format(
    hub: FakeHub, tiny: Tiny, caches: dict[str, Path]
) -> None:
    info = caches["cache"] / "hub" / "openai-community--gpt2" / "info" / f"{COMMIT}.json"
    info.parent.mkdir(parents=True)
    info.write_text(json.dumps({"commit": COMMIT, "config": {}, "weights_file": "x", "tensors": {}}))
    doc = run_json("vector", "king", "--full", "-m", "gpt2")
    np.testing.assert_array_equal(doc["items"][0]["vector"], tiny.wte[tiny.id("king")])
    written = json.loads(info.read_text())
    assert written["format"] == checkpoint.INFO_FORMAT and written["config"] == tiny.config


# ---------------------------------------------------------------- transformers: no warning, our wording


def test_tying_lets_no_warning_of_transformers_through(tiny: Tiny, tmp_path: Path) -> None:
    # transformers warns that rope_scaling is deprecated (a FutureWarning), which many configs hold as null
    folder = model(tiny, tmp_path / "m")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "rope_scaling": None}))
    assert run_json("tying", "-m", str(folder))["tied"] is True  # in-process, a warning is an error
    done = run_process("tying", "-m", str(folder))
    assert done.returncode == 0 and done.stderr == ""


def test_context_names_an_activation_transformers_does_not_know(tiny: Tiny, tmp_path: Path) -> None:
    folder = model(tiny, tmp_path / "m", activation_function="gelu_newest")
    line = one_line(run_cli(*CONTEXT, "-m", str(folder)))
    assert line == (
        f'gpt2emb: {folder.resolve()}/config.json says activation_function = "gelu_newest", which '
        "transformers does not know (as gelu_new, gelu, relu, silu); the model folder looks damaged: "
        "save it again"
    )


def test_the_meta_model_names_the_config_file_it_is_given(tiny: Tiny) -> None:
    config = {**tiny.config, "activation_function": "gelu_newest"}
    with pytest.raises(BadModel) as e:
        heavy.meta_model_ties(
            config, ("GPT2Config", "GPT2Model", "GPT2LMHeadModel"), "someone/m's config.json"
        )
    assert e.value.message.startswith('someone/m\'s config.json says activation_function = "gelu_newest"')


# ---------------------------------------------------------------- config.json, named one way


@pytest.mark.parametrize(
    "config, said",
    [
        ({"hidden_size": 31}, "says n_embd = 32 but hidden_size = 31: they name one number; "),
        ({"n_head": 0}, "says n_head = 0, which must be a whole number from 1 up; "),
        ({"vocab_size": None}, "lacks a GPT-2 field (vocab_size); "),
        ({"layer_norm_epsilon": 2}, "says layer_norm_epsilon = 2, which must be a small positive number"),
    ],
)
def test_a_config_message_names_the_file_and_the_fix(
    tiny: Tiny, tmp_path: Path, config: dict[str, Any], said: str
) -> None:
    folder = model(tiny, tmp_path / "m", **config)
    line = one_line(run_cli("vector", "king", "-m", str(folder)))
    assert line.startswith(f"gpt2emb: {folder.resolve()}/config.json {said}")
    assert line.endswith("the model folder looks damaged: save it again")


def test_tying_refuses_blocks_a_local_pickle_does_not_hold(tiny: Tiny, tmp_path: Path) -> None:
    """Within the size bound (20 blocks over 2): the pickle's names are read before the meta model is built
    (which would build any number of blocks, some 9 s per 500)."""
    folder = model(tiny, tmp_path / "m", "bin", n_layer=20)
    line = one_line(run_cli("tying", "-m", str(folder)))
    where = folder.resolve()
    assert (
        f"{where}/config.json gives the model 20 blocks, but {where}/pytorch_model.bin holds 2: the config "
        "and the weights disagree; save the model again"
    ) in line
    assert run_cli("tying", "-m", str(model(tiny, tmp_path / "ok", "bin"))).exit_code == 0


def test_a_panic_of_the_tokenizers_library_on_a_text_is_one_line(tiny: Tiny, tmp_path: Path) -> None:
    """Found by the deep damaged-files run: a normalizer the library loads, and panics on for some texts (its
    Rust code: a PanicException, no Exception, and a backtrace on fd 2). Exit 6, one line, nothing else."""
    folder = model(tiny, tmp_path / "m")
    normalizers: list[dict[str, Any]] = [{"type": "NFKD"}, {"type": "Lowercase"}]
    normalizers.append({"type": "Replace", "pattern": {"String": ""}, "content": " (?=k)"})

    def panicking(t: dict[str, Any]) -> None:
        t["normalizer"] = {"type": "Sequence", "normalizers": normalizers}

    edit_tokenizer(folder, panicking)
    run = run_process("input", "😀 k", "-m", str(folder))
    assert run.returncode == 6, run.stderr
    assert run.stderr.splitlines() == [
        'gpt2emb: the tokenizers library fails on "😀 k" with this model\'s tokenizer.json (index out of '
        "bounds: the len is 5 but the index is 5): the tokenizer is damaged; save the model's tokenizer again"
    ]
    assert run.stdout == ""
