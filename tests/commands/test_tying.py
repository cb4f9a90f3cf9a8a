"""`tying`: the checks that wte is the output layer (config, meta model, checkpoint; --load), an untied model,
and `tying --grad` (exercise 4) against transformers' own autograd."""

import json
from pathlib import Path

import numpy as np
import pytest

from oracles import PAID, RIVER, cos, ids_of, independent_gradients

from conftest import run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, safetensors_bytes, save_local


def test_tying(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("tying")
    assert doc["tied"] is True and doc["model"] == "gpt2"
    assert [c["name"] for c in doc["checks"]] == ["config", "meta_model", "checkpoint"]
    assert all(c["passed"] for c in doc["checks"])
    assert doc["saved_params"] == tiny.wte.size
    assert "tied: the output layer reuses wte" in run_cli("tying").stdout
    assert not any(
        "model.safetensors" in r[1] and r[2] in ("", "bytes=0-") for r in hub.requests if r[0] == "GET"
    )


def test_untied_model(hub: FakeHub, tiny: Tiny) -> None:
    files = hub_files(tiny)
    files["config.json"] = json.dumps({**tiny.config, "tie_word_embeddings": False}).encode()
    files["model.safetensors"] = safetensors_bytes({**tiny.state(), "lm_head.weight": tiny.wte * 2})
    hub.repos["someone/untied"] = Repo("e" * 40, files)
    doc = run_json("tying", "-m", "someone/untied")
    assert doc["tied"] is False and doc["saved_params"] == 0
    assert [c["passed"] for c in doc["checks"]] == [False, False, False]


def test_tying_load_does_the_labs_proof(hub: FakeHub) -> None:
    doc = run_json("tying", "--load")
    loaded = doc["checks"][-1]
    assert loaded["name"] == "loaded_model" and loaded["passed"] is True and "data_ptr()" in loaded["detail"]


def test_grad_paths_sum_to_the_tied_gradient(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    text = "the king and queen and man"
    doc = run_json("tying", "--grad", text)
    g = doc["gradient"]
    ids = ids_of(tiny, text)
    loss, by_input, by_output, tied = independent_gradients(save_local(tiny, tmp_path / "tiny"), ids)
    assert np.linalg.norm(by_input + by_output - tied) <= 1e-5 * np.linalg.norm(tied)
    assert g["loss"] == pytest.approx(loss, rel=1e-6)
    assert g["input_path"]["norm"] == pytest.approx(np.linalg.norm(by_input), rel=1e-5)
    assert g["output_path"]["norm"] == pytest.approx(np.linalg.norm(by_output), rel=1e-5)
    assert g["tied_norm"] == pytest.approx(np.linalg.norm(tied), rel=1e-5)
    # the last position predicts nothing inside the text: only the tokens before it get a gradient as inputs
    assert g["input_path"]["rows"] == len(set(ids[:-1])) == len(set(ids)) - 1
    assert g["output_path"]["rows"] == tiny.wte.shape[0]
    shared = sorted(set(ids[:-1]))
    assert g["shared_rows"] == len(shared)
    assert g["cosine_on_shared_rows"] == pytest.approx(
        cos(by_input[shared].ravel(), by_output[shared].ravel()), abs=1e-5
    )
    assert g["sum_matches_tied"] is True and g["relative_difference"] < 1e-5
    assert g["text"] == text and [t["id"] for t in g["tokens"]] == ids
    assert {k: doc[k] for k in ("model", "tied", "saved_params")} == {
        "model": "gpt2",
        "tied": True,
        "saved_params": tiny.wte.size,
    }


def test_tying_document_is_unchanged_without_grad(hub: FakeHub) -> None:
    doc = run_json("tying")
    assert list(doc) == ["model", "tied", "saved_params", "checks", "gradient", "comparison"]
    assert doc["gradient"] is None and doc["comparison"] is None  # keys added, none renamed


def test_grad_table(hub: FakeHub) -> None:
    out = " ".join(run_cli("tying", "--grad", "hello king and queen").stdout.split())
    for shown in ("input lookup (wte[ids])", "output layer (lm_head = wte)", "343 of 343", "rows both touch"):
        assert shown in out
    assert "input + output = the tied model's gradient (to 1e-5 relative): yes" in out
    assert "the last position predicts nothing inside the text" in out


def test_grad_refused_on_an_untied_model(hub: FakeHub, tiny: Tiny) -> None:
    from fakehub import Repo
    from tinymodel import hub_files, safetensors_bytes

    files = hub_files(tiny)
    files["config.json"] = json.dumps({**tiny.config, "tie_word_embeddings": False}).encode()
    files["model.safetensors"] = safetensors_bytes({**tiny.state(), "lm_head.weight": tiny.wte * 2})
    hub.repos["someone/untied"] = Repo("e" * 40, files)
    result = run_cli("tying", "-m", "someone/untied", "--grad", "hello king")
    assert result.exit_code == 2 and "someone/untied is not tied" in result.stderr
    # what to use instead, each as it is typed, and each runs
    compare = "gpt2emb tying -m someone/untied --compare"
    context = "gpt2emb context WORD SENTENCE SENTENCE -m someone/untied"
    assert (
        f"to compare its output layer with wte: {compare}; to follow a word through its layers: {context}"
        in (result.stderr)
    )
    assert run_json(*compare.split()[1:])["comparison"]["mean_cosine_matching"] == pytest.approx(
        1.0, abs=1e-6
    )
    assert run_cli("context", "king", RIVER, PAID, "-m", "someone/untied").exit_code == 0
    # in Python's words from the handle
    import gpt2emb
    from gpt2emb.errors import UsageError

    with pytest.raises(UsageError, match=r"with wte: tying\(compare=True\); .*: context\(word, sentences\)$"):
        gpt2emb.open("someone/untied").tying(grad="hello king")


def test_grad_on_an_untied_model_without_an_output_layer_to_compare_names_the_checks(
    hub: FakeHub, tiny: Tiny
) -> None:
    """Untied by its config, with no output layer stored (transformers starts one at random): --compare has
    nothing to read, so the refusal points at the checks."""
    from fakehub import Repo
    from tinymodel import hub_files

    files = hub_files(tiny)
    files["config.json"] = json.dumps({**tiny.config, "tie_word_embeddings": False}).encode()
    hub.repos["someone/headless"] = Repo("e" * 40, files)
    result = run_cli("tying", "-m", "someone/headless", "--grad", "hello king")
    assert result.exit_code == 2 and "--compare" not in result.stderr
    assert "its checks: gpt2emb tying -m someone/headless;" in result.stderr


def test_grad_of_a_model_whose_loss_is_flat_says_so(hub: FakeHub, tiny: Tiny) -> None:
    """A final layer norm of weight 0 makes every logit 0: the gradient is all zeros by both paths."""
    from fakehub import Repo
    from tinymodel import hub_files, safetensors_bytes

    files = hub_files(tiny)
    state = tiny.state()
    files["model.safetensors"] = safetensors_bytes(
        {**state, "ln_f.weight": np.zeros_like(state["ln_f.weight"])}
    )
    hub.repos["someone/flat"] = Repo("f" * 40, files)
    g = run_json("tying", "-m", "someone/flat", "--grad", "hello king and queen")["gradient"]
    assert g["tied_norm"] == 0 and g["input_path"]["rows"] == g["output_path"]["rows"] == 0
    assert g["table_rows"] == tiny.wte.shape[0] and g["notes"][0].startswith("the gradient is all zeros")
    out = " ".join(run_cli("tying", "-m", "someone/flat", "--grad", "hello king and queen").stdout.split())
    assert f"0 of {tiny.wte.shape[0]}" in out and "the last position predicts nothing" not in out


def test_grad_takes_its_words_unquoted_as_input_does(hub: FakeHub) -> None:
    """Was: Got unexpected extra argument(s) (cat sat on the mat) (issue 54)."""
    quoted = run_json("tying", "--grad", "The cat sat on the mat")
    assert run_json("tying", "--grad", "The", "cat", "sat", "on", "the", "mat") == quoted
    assert run_json("tying", "--grad=The", "cat", "sat", "on", "the", "mat") == quoted
    assert run_json("tying", "--grad", "The", "cat", "sat", "on", "the", "mat", "-m", "gpt2") == quoted
    assert quoted["gradient"]["text"] == "The cat sat on the mat"
    after_a_flag = run_cli("tying", "--grad", "The", "cat", "--load", "yes")  # words after an option: not its
    assert after_a_flag.exit_code == 2 and "--load is a flag and takes no value (yes)" in after_a_flag.stderr
