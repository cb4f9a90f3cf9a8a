"""`context` (static against contextual) and `tying --grad` (exercise 4), on the tiny GPT-2, checked against
values computed here: numpy on the fixture's own arrays, and transformers' own forward pass and autograd."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import N_LAYER, D, Tiny, save_local

RIVER, PAID = "the cat and king", "hello king is a man"


def ids_of(tiny: Tiny, text: str) -> list[int]:
    ids: list[int] = tiny.tokenizer.encode(text).ids
    return ids


def cos(a: np.ndarray, b: np.ndarray) -> float:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))


def strict_json(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in the JSON")

    return json.loads(text, parse_constant=refuse)


def checkpoint_reads(hub: FakeHub) -> list[str]:
    """The Range of each GET of the checkpoint: none (or bytes=0-) for a whole download."""
    return [r[2] for r in hub.requests if r[0] == "GET" and r[1].split("?")[0].endswith("model.safetensors")]


# ---------------------------------------------------------------- context


def test_context_layer_0_is_the_cosine_of_the_h0_rows(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("context", "king", RIVER, PAID)
    king = tiny.id("king")
    rows = []
    for sentence, text in zip(doc["sentences"], (RIVER, PAID), strict=True):
        ids = ids_of(tiny, text)
        assert [t["id"] for t in sentence["tokens"]] == ids
        assert [t["position"] for t in sentence["tokens"]] == list(range(len(ids)))
        assert sentence["at"] == [ids.index(king)] and sentence["occurrences"] == 1
        rows.append(tiny.wte[king] + tiny.wpe[ids.index(king)])  # h0 = wte[id] + wpe[position], float32
    layer0 = doc["layers"][0]
    assert layer0["layer"] == 0 and layer0["pairs"][0]["a"] == 0 and layer0["pairs"][0]["b"] == 1
    assert layer0["pairs"][0]["cosine"] == pytest.approx(cos(rows[0], rows[1]), abs=1e-6)
    assert layer0["static"] == pytest.approx([cos(r, tiny.wte[king]) for r in rows], abs=1e-6)
    assert (
        doc["model"] == "gpt2"
        and doc["word"] == "king"
        and doc["word_tokens"] == [{"id": king, "token": " king"}]
    )
    assert doc["notes"] == []  # what layer 0 is, the same on every run, is in docs/commands/context.md


def test_context_every_layer_matches_transformers(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    sentences = [RIVER, PAID, "the kingdom and king", "queen and king and king"]
    import torch
    from transformers import GPT2Model

    doc = run_json("context", "king", *sentences)
    model = GPT2Model.from_pretrained(save_local(tiny, tmp_path / "tiny"))
    vectors = []
    with torch.no_grad():
        for text in sentences:
            ids = ids_of(tiny, text)
            out = model(torch.tensor([ids]), output_hidden_states=True)
            states = torch.stack(out.hidden_states)[:, 0].numpy()
            assert np.array_equal(states[-1], out.last_hidden_state[0].numpy())  # the last is after ln_f
            at = (
                len(ids) - 1 if text == sentences[2] else ids.index(tiny.id("king"))
            )  # " king" + "do" + "m" is not it
            vectors.append(states[:, at])
    assert [x["layer"] for x in doc["layers"]] == list(range(N_LAYER + 1))
    for x in doc["layers"]:
        layer = x["layer"]
        expected = [
            cos(vectors[a][layer], vectors[b][layer])
            for a, b in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
        ]
        assert [(p["a"], p["b"]) for p in x["pairs"]] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
        assert [p["cosine"] for p in x["pairs"]] == pytest.approx(expected, abs=1e-6)
        assert x["static"] == pytest.approx(
            [cos(v[layer], tiny.wte[tiny.id("king")]) for v in vectors], abs=1e-6
        )
    # " king" starting " kingdom" is not the word; the first of two occurrences is used, and said
    assert doc["sentences"][2]["at"] == [5] and doc["sentences"][2]["occurrences"] == 1
    assert doc["sentences"][3]["occurrences"] == 2 and doc["sentences"][3]["at"] == [3]
    assert any("occurs 2 times in sentence 4; using the first, at position 3" in n for n in doc["notes"])


@pytest.mark.parametrize("pool", ["mean", "first"])
def test_a_split_word_is_pooled_as_asked(hub: FakeHub, tiny: Tiny, tmp_path: Path, pool: str) -> None:
    sentences = ["the kingdom of man", "hello kingdom"]
    word = ids_of(tiny, " kingdom")
    assert len(word) > 1  # the tiny vocabulary splits it
    import torch
    from transformers import GPT2Model

    doc = run_json("context", "kingdom", *sentences, "--pool", pool)
    model = GPT2Model.from_pretrained(save_local(tiny, tmp_path / "tiny"))
    vectors = []
    with torch.no_grad():
        for text, sentence in zip(sentences, doc["sentences"], strict=True):
            ids = ids_of(tiny, text)
            start = next(p for p in range(len(ids)) if ids[p : p + len(word)] == word)
            assert sentence["at"] == list(range(start, start + len(word)))
            states = torch.stack(model(torch.tensor([ids]), output_hidden_states=True).hidden_states)[:, 0]
            rows = states[:, start : start + len(word)].numpy()
            vectors.append(rows.mean(axis=1) if pool == "mean" else rows[:, 0])
    static = tiny.wte[word].mean(axis=0) if pool == "mean" else tiny.wte[word[0]]
    for x in doc["layers"]:
        assert x["pairs"][0]["cosine"] == pytest.approx(
            cos(vectors[0][x["layer"]], vectors[1][x["layer"]]), abs=1e-6
        )
        assert x["static"] == pytest.approx([cos(v[x["layer"]], static) for v in vectors], abs=1e-6)
    assert doc["pool"] == pool and any("splits into" in n for n in doc["notes"])


def test_a_zero_final_layer_norm_gives_null_not_nan(tiny: Tiny, tmp_path: Path) -> None:
    blocks = {**tiny.blocks, "ln_f.weight": np.zeros(D, dtype=np.float32)}
    folder = save_local(dataclasses.replace(tiny, blocks=blocks), tmp_path / "flat")
    result = run_cli("context", "king", RIVER, PAID, "-m", str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    doc = strict_json(result.stdout)
    last = doc["layers"][-1]
    assert last["layer"] == N_LAYER and last["pairs"][0]["cosine"] is None and last["static"] == [None, None]
    assert all(p["cosine"] is not None for x in doc["layers"][:-1] for p in x["pairs"])
    table = run_cli("context", "king", RIVER, PAID, "-m", str(folder)).stdout
    assert "- is a vector of zeros: it has no direction" in table and "nan" not in table.lower()


def test_context_table(hub: FakeHub) -> None:
    result = run_cli("context", "king", RIVER, PAID)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for shown in ('[" king"]', "0 (h0)", f"{N_LAYER} (last)", "1 vs 2", "1 vs wte", "2 vs wte"):
        assert shown in out
    assert "note:" not in out  # what layer 0 is, the same on every run, is in the docs


def test_context_fetches_the_weights_once_and_says_how_much_first(
    hub: FakeHub, tiny_files: dict[str, bytes]
) -> None:
    first = run_cli("context", "king", RIVER, PAID, "--json")
    assert first.exit_code == 0, first.stderr
    size = len(tiny_files["model.safetensors"])
    assert json.loads(first.stderr.splitlines()[0]) == {
        "note": "this runs the whole of gpt2: fetching all its weights once into the Hugging Face cache, "
        f"{size / 1e6:,.1f} MB (model.safetensors)"
    }
    # the header, read by ranges; then one whole download, from which the embeddings' entry was built (no
    # ranged read fetched wte a second time)
    header = int.from_bytes(tiny_files["model.safetensors"][:8], "little")
    assert checkpoint_reads(hub)[:2] == ["bytes=0-7", f"bytes=8-{8 + header - 1}"]
    assert checkpoint_reads(hub)[2:] in ([""], ["bytes=0-"])
    hub.requests.clear()
    again = run_cli("context", "king", RIVER, PAID, "--json")
    assert again.exit_code == 0 and again.stderr == "" and again.stdout == first.stdout
    assert checkpoint_reads(hub) == []


def test_bad_input_fetches_no_weights_when_the_embeddings_are_cached(hub: FakeHub) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0  # builds the entry by ranged reads
    hub.requests.clear()
    absent = run_cli("context", "king", RIVER, "the kings and queen")
    assert absent.exit_code == 2
    assert absent.stderr.startswith(
        'gpt2emb: " king" is not in sentence 2 ("the kings and queen"), whose tokens'
    )
    assert "not as part of a longer word" in absent.stderr and "note" not in absent.stderr
    assert checkpoint_reads(hub) == []
    one = run_cli("tying", "--grad", "the", "--json")
    assert one.exit_code == 2 and "needs at least two" in json.loads(one.stderr)["error"]["message"]
    assert checkpoint_reads(hub) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["context", "king", RIVER], "at least two sentences"),
        (["context", "king", RIVER, "  "], "sentence 2 is empty"),
        (["context", "king", RIVER, "King and queen"], 'not in sentence 2 ("King and queen")'),  # case counts
        (["context", "cat", "the cat", "x" * 3000], "sentence 2 has"),
        (["context", "kingdom", "the kingdom", "hello kingdom", "--pool", "strict"], "is not one token"),
        (["tying", "--grad", ""], "at least two tokens"),
        (["tying", "--grad", "the"], '--grad "the" is 1 token'),
        (["tying", "--grad", " king" * 1100], f'--grad "{" king" * 8}"... has 1,100 tokens, but position'),
    ],
)
def test_usage_errors(hub: FakeHub, args: list[str], message: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_refused_offline_when_the_weights_are_not_cached(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    assert run_cli("neighbors", "cat").exit_code == 0  # the embeddings are cached, the weights are not
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub.requests.clear()
    for args in (["context", "king", RIVER, PAID], ["tying", "--grad", RIVER], ["tying", "--load"]):
        result = run_cli(*args, "--json")
        assert result.exit_code == 4, (args, result.stderr)
        assert json.loads(result.stderr)["error"]["message"] == (
            "this runs the whole of gpt2, and its weights (model.safetensors) are not in the Hugging Face "
            "cache while HF_HUB_OFFLINE is set: run once with the network to fetch them"
        )
    assert hub.requests == []
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    assert run_cli("context", "king", RIVER, PAID).exit_code == 0
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert run_cli("context", "king", RIVER, PAID).exit_code == 0  # cached now: offline is fine
    assert run_cli("tying", "--grad", RIVER).exit_code == 0


# ---------------------------------------------------------------- tying --grad


def independent_gradients(folder: Path, ids: list[int]) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The loss, and wte's gradient by the input lookup, by the output layer and in the tied model, computed
    with autograd on the embeddings the model is fed (not by untying it, as gpt2emb does)."""
    import torch
    from transformers import GPT2LMHeadModel

    model = GPT2LMHeadModel.from_pretrained(folder)
    wte = model.transformer.wte.weight
    x = torch.tensor([ids])
    loss = model(x, labels=x).loss
    loss.backward()
    assert wte.grad is not None
    tied = wte.grad.numpy().copy()
    wte.grad = None
    # fed wte[ids] as a constant: the only way left to wte is the output layer
    embeds = wte[x].detach().requires_grad_(True)
    model(inputs_embeds=embeds, labels=x).loss.backward()
    assert wte.grad is not None and embeds.grad is not None
    by_output = wte.grad.numpy().copy()
    by_input = torch.zeros_like(wte).index_add_(0, x[0], embeds.grad[0]).numpy()
    return float(loss.item()), by_input, by_output, tied


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


def test_help_shows_the_chapters_examples() -> None:
    context = run_cli("context", "--help").stdout
    assert 'gpt2emb context bank "I sat on the river bank" "I paid at the bank"' in context
    assert "banco" in context
    assert "gpt2emb tying --grad" in run_cli("tying", "--help").stdout
