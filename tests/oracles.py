"""The oracles tests share: answers computed here, independently of gpt2emb, from a fixture's own rows
(numpy in float64) or from transformers' own forward pass and autograd; and the checks every family runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import run_cli, run_json
from tinymodel import Tiny

# the chapter's two sentences for `context` and `tying --grad`
RIVER, PAID = "the cat and king", "hello king is a man"


def unit(rows: np.ndarray) -> np.ndarray:
    r = rows.astype(np.float64)
    return np.asarray(r / np.linalg.norm(r, axis=1, keepdims=True))


def geometry_similarity_vector(
    model: str, wte: np.ndarray, positions: np.ndarray, id_of: Callable[[str], int]
) -> None:
    """geometry's wpe norms (positions: the usable rows), similarity's matrix and vector's row against the
    fixture's tables, and each command's table."""
    geo = run_json("geometry", "-m", model)
    assert geo["wpe"]["rows"] == len(positions) and geo["wte"]["rows"] == len(wte)
    norms = np.linalg.norm(positions.astype(np.float64), axis=1)
    assert geo["wpe"]["norm"]["mean"] == pytest.approx(norms.mean(), rel=1e-6)
    sim = run_json("similarity", "cat", "cats", "dog", "-m", model)
    u = unit(wte[[id_of("cat"), id_of("cats"), id_of("dog")]])
    np.testing.assert_allclose(np.array(sim["matrix"]), u @ u.T, atol=1e-6)
    vec = run_json("vector", "cat", "--full", "-m", model)
    np.testing.assert_allclose(vec["items"][0]["vector"], wte[id_of("cat")], rtol=1e-6)
    for args in (["geometry"], ["similarity", "cat", "dog"], ["vector", "cat"]):
        assert run_cli(*args, "-m", model).exit_code == 0


def cosines(wte: np.ndarray, v: np.ndarray) -> np.ndarray:
    w = wte.astype(np.float64)
    result: np.ndarray = (w @ v) / (np.linalg.norm(w, axis=1) * np.linalg.norm(v))
    return result


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


def cos(a: np.ndarray, b: np.ndarray) -> float:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))


def ids_of(tiny: Tiny, text: str) -> list[int]:
    """The fixture's own tokenizer, as typed: the ids a command must show."""
    ids: list[int] = tiny.tokenizer.encode(text, add_special_tokens=False).ids
    return ids


def encoder_context_cosines(
    model_class: Any, folder: Path, tokenizer: Any, sentences: list[str], at: list[int]
) -> list[float]:
    """`context`'s oracle for an encoder that puts [CLS] first (BERT, DistilBERT): the cosine, at each layer
    (h0 first), of one word's hidden states in two sentences (at: its token's place in each, after [CLS]),
    from transformers' own forward pass of the sentences as in use, [CLS] ... [SEP]."""
    import torch

    model = model_class.from_pretrained(folder).eval()
    with torch.no_grad():
        states = [
            model(torch.tensor([tokenizer.encode(s).ids]), output_hidden_states=True).hidden_states
            for s in sentences
        ]
    pairs = ([states[n][layer][0, 1 + at[n]].numpy() for n in range(2)] for layer in range(len(states[0])))
    return [cos(a, b) for a, b in pairs]


def close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= 1e-4 * abs(theirs) + 1e-5


def assert_top_matches(top: list[dict[str, Any]], logits: np.ndarray) -> None:
    """Each listed logit is transformers' for its id, each probability its softmax, and the order is theirs
    wherever two logits differ by more than the tolerance."""
    x = logits.astype(np.float64)
    p = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    for s in top:
        assert close(s["logit"], float(logits[s["id"]])), s
        assert s["probability"] == pytest.approx(p[s["id"]], rel=1e-4, abs=1e-9)
    order = np.argsort(-logits, kind="stable")
    expected, tol = logits[order[: len(top)]], 1e-4 * np.abs(logits).max() + 1e-5
    for s, want in zip(top, expected, strict=True):  # the k-th best logit, whichever id holds it
        assert abs(s["logit"] - want) <= tol
    separated = [s["id"] for s in top if np.sum(np.abs(logits - logits[s["id"]]) <= tol) == 1]
    assert [i for i in order[: len(top)] if i in separated] == separated


def assert_lens_matches(
    layers: list[dict[str, Any]], scores: list[np.ndarray], top: list[dict[str, Any]]
) -> None:
    """logits --layers' rows against each layer's scores computed by hand (h0 first), and the last row
    against the answer (top)."""
    assert len(layers) == len(scores)
    final = top[0]["id"]
    for row, x in zip(layers, scores, strict=True):
        assert_top_matches(row["top"], x)
        p = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
        assert row["final_probability"] == pytest.approx(p[final], rel=1e-4, abs=1e-9)
        tol = 1e-4 * abs(x[final]) + 1e-5  # a rank among scores within the tolerance of its own may differ
        assert abs(row["final_rank"] - (1 + np.sum(x > x[final]))) <= np.sum(np.abs(x - x[final]) <= tol)
    assert layers[-1]["top"] == top[:5]  # the last row is the answer itself
    assert layers[-1]["final_rank"] == 1


# The tolerance of a float64 figure against a float64 oracle that sums in another order. It lies far below
# what any changed constant in the code would move.
REL = 1e-9


def cos64(x: np.ndarray, y: np.ndarray) -> float:
    """The cosine of two rows by scipy's cosine distance, in float64."""
    from scipy.spatial import distance  # imported here: most tests that import this module need no scipy

    return float(1 - distance.cosine(x.astype(np.float64), y.astype(np.float64)))
