"""`logits TEXT` on masked language models (issue 52): the tiny RoBERTa, BERT and DistilBERT of the tests,
each saved with its masked-language head (its tensors given values of their own here), scored at their masks
through that head, against transformers' own AutoModelForMaskedLM; the lens against the head applied by
hand in torch; a checkpoint without the head (a BertModel's) refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from oracles import assert_lens_matches, assert_top_matches
from tiny_bert import build as build_bert
from tiny_distilbert import build as build_distilbert
from tiny_roberta import build as build_roberta

from conftest import run_cli, run_json

TEXT = "the cat {m} king and {m} queen"


class Masked(NamedTuple):
    folder: Path
    mask: str
    head: str  # the head's module in the language model, as the title names its tensors' prefix
    bias: str  # the decoder's bias, as the title names it


def with_head(folder: Path, seed: int, config: dict[str, Any]) -> None:
    """The model in folder saved again by transformers with its head's tensors drawn from seed (a fresh head
    is an identity layer norm and a zero bias: they would go unchecked), and its config.json updated."""
    import torch
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    rng = np.random.default_rng(seed)
    embeddings = model.get_input_embeddings().weight
    with torch.no_grad():
        for name, tensor in model.named_parameters():
            if tensor is not embeddings and not name.startswith(model.base_model_prefix + "."):
                scale = 0.5 if tensor.ndim == 1 else 0.3
                tensor.copy_(torch.from_numpy(rng.normal(0.0, scale, tuple(tensor.shape)).astype(np.float32)))
    model.save_pretrained(folder)
    _tensorflow_norm_names(folder / "model.safetensors")
    saved = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**saved, **config}))


def _tensorflow_norm_names(file: Path) -> None:
    """The embeddings' and the head's layer norms saved as `gamma` and `beta`, TensorFlow's names, which the
    Hub's google-bert checkpoints keep and transformers 5.4 (the lowest declared) writes for any family: the
    store and the head read either, so every version of transformers is tested on these names."""
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(file))
    renamed = {_TF_NORM.sub(lambda m: m[1] + _TF_NAME[m[2]], k): v for k, v in tensors.items()}
    assert any(k.endswith("embeddings.LayerNorm.gamma") for k in renamed)
    save_file(renamed, str(file), metadata={"format": "pt"})


_TF_NORM = re.compile(
    r"(embeddings\.LayerNorm|lm_head\.layer_norm|transform\.LayerNorm|vocab_layer_norm)\.(\w+)$"
)
_TF_NAME = {"weight": ".gamma", "gamma": ".gamma", "bias": ".beta", "beta": ".beta"}


@pytest.fixture(scope="module")
def masked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Masked]:
    made = tmp_path_factory.mktemp("masked")
    roberta, bert, distil = build_roberta(made / "roberta"), build_bert(made / "bert"), made / "distilbert"
    build_distilbert(distil)
    # RoBERTa's head applies gelu whatever hidden_act says; BERT's applies hidden_act
    with_head(roberta.folder, 1, {"hidden_act": "relu"})
    with_head(bert.folder, 2, {"hidden_act": "gelu_new"})
    with_head(distil, 3, {})
    return {
        "roberta": Masked(roberta.folder, "<mask>", "lm_head.dense", "lm_head.bias"),
        "bert": Masked(bert.folder, "[MASK]", "cls.predictions.transform.dense", "cls.predictions.bias"),
        "distilbert": Masked(distil, "[MASK]", "vocab_transform", "vocab_projector.bias"),
    }


def oracle(folder: Path, text: str) -> tuple[list[int], np.ndarray, Any, Any]:
    """The ids in use (<s> … </s>, [CLS] … [SEP]), transformers' masked-language logits at every position,
    its hidden states (layers, positions, d), and the model."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForMaskedLM

    ids = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text, add_special_tokens=True).ids
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
    return ids, out.logits[0].numpy(), torch.stack(out.hidden_states)[:, 0], model


def by_hand(model: Any, states: Any) -> np.ndarray:
    """Each hidden state through the family's head, written out in torch from the module's own tensors."""
    import torch
    from torch.nn.functional import gelu, layer_norm, linear

    with torch.no_grad():
        if hasattr(model, "lm_head"):  # RoBERTa: gelu, whatever the config's hidden_act
            head = model.lm_head
            x = layer_norm(gelu(head.dense(states)), (states.shape[-1],), *_norm(head.layer_norm))
            bias = head.bias
        elif hasattr(model, "cls"):  # BERT: the config's hidden_act, gelu_new here (the tanh form)
            head = model.cls.predictions
            assert model.config.hidden_act == "gelu_new"
            x = layer_norm(
                gelu(head.transform.dense(states), approximate="tanh"),
                (states.shape[-1],),
                *_norm(head.transform.LayerNorm),
            )
            bias = head.bias
        else:  # DistilBERT: gelu, vocab_layer_norm's epsilon fixed at 1e-12
            x = gelu(model.vocab_transform(states))
            x = layer_norm(
                x, (states.shape[-1],), model.vocab_layer_norm.weight, model.vocab_layer_norm.bias, 1e-12
            )
            bias = model.vocab_projector.bias
        scores = linear(x, model.get_input_embeddings().weight, bias)
    return np.asarray(scores.numpy(), dtype=np.float64)


def _norm(module: Any) -> tuple[Any, Any, float]:
    return module.weight, module.bias, module.eps


@pytest.mark.parametrize("name", ["roberta", "bert", "distilbert"])
def test_each_mask_matches_transformers_and_the_lens_the_head_by_hand(
    masked: dict[str, Masked], name: str
) -> None:
    from tokenizers import Tokenizer

    f = masked[name]
    text = TEXT.format(m=f.mask)
    doc = run_json("logits", text, "-m", str(f.folder), "-k", "20", "--layers")
    ids, logits, states, model = oracle(f.folder, text)
    before = len(doc["added"])
    assert ids[:before] == [t["id"] for t in doc["added"]] and before == 1  # <s>, [CLS]
    assert [t["id"] for t in doc["tokens"]] == ids[before:-1]  # and </s>, [SEP] after: run with
    mask = Tokenizer.from_file(str(f.folder / "tokenizer.json")).token_to_id(f.mask)
    at = [p for p, i in enumerate(ids[before:-1]) if i == mask]
    assert [m["at"] for m in doc["masks"]] == at and len(at) == 2
    assert doc["masked"] is True and doc["at"] == at[0] and doc["top"] == doc["masks"][0]["top"]
    assert doc["layers"] == doc["masks"][0]["layers"]
    assert doc["table"] == "wte" and doc["tied"] is True
    assert doc["head"]["dense"] == f.head and doc["head"]["bias"] == f.bias
    assert doc["head"]["activation"] == {"bert": "gelu_new"}.get(name, "gelu")
    assert doc["head"]["decoder"].endswith("embeddings.word_embeddings.weight")
    for m in doc["masks"]:
        assert_top_matches(m["top"], logits[before + m["at"]])
        # the lens: every layer's state at the mask through the head, no final layer norm
        here = states[:, before + m["at"]]
        assert len(m["layers"]) == model.config.num_hidden_layers + 1
        assert_lens_matches(m["layers"], list(by_hand(model, here)), m["top"])


def test_the_table_names_the_head_and_gives_a_table_per_mask(masked: dict[str, Masked]) -> None:
    f = masked["roberta"]
    out = run_cli("logits", TEXT.format(m="<mask>"), "-m", str(f.folder), "-k", "3", "--layers")
    assert out.exit_code == 0, out.stderr
    text = " ".join(out.stdout.split())
    doc = run_json("logits", TEXT.format(m="<mask>"), "-m", str(f.folder))
    first, second = (m["at"] for m in doc["masks"])
    assert f'mask 1 of 2: the token at position {first} ("<mask>")' in text
    assert f'mask 2 of 2: the token at position {second} ("<mask>")' in text
    assert (
        "the head: lm_head.dense, gelu, lm_head.layer_norm, then · wteᵀ + lm_head.bias (the decoder is wte)"
        in text
    )
    assert text.count("the logit lens: each layer's hidden state at position") == 2
    assert "no final layer norm: the model has none" in text
    assert "puts </s> after a text in use: the model runs with it" in text


def test_at_names_the_position_scored_itself(masked: dict[str, Masked]) -> None:
    f = masked["bert"]
    text = TEXT.format(m="[MASK]")
    _, logits, _, _ = oracle(f.folder, text)
    doc = run_json("logits", text, "-m", str(f.folder), "--at", "3")
    assert doc["at"] == 3 and [m["at"] for m in doc["masks"]] == [3]
    assert_top_matches(doc["top"], logits[1 + 3])  # position 3 itself, not the one after it
    assert any('position 3 (" king") is not a [MASK]' in n for n in doc["notes"])
    one = run_json("logits", text, "-m", str(f.folder), "--at", "5")
    assert one["notes"] == [n for n in one["notes"] if "is not a" not in n]  # a mask: nothing to say


@pytest.mark.parametrize("name", ["roberta", "distilbert"])
def test_through_wte_says_the_decoder_is_wte_and_shows_one_list(masked: dict[str, Masked], name: str) -> None:
    f = masked[name]
    args = ["logits", TEXT.format(m=f.mask), "-m", str(f.folder), "--through", "wte"]
    doc = run_json(*args)
    assert doc["through_wte"] is None and doc["overlap"] is None
    assert any("its decoder is the word embedding table (wte) itself" in n for n in doc["notes"])
    out = run_cli(*args)
    assert out.stdout.count("logit") == 2  # one table per mask, no second column of wte's
    assert "beside" not in out.stdout


@pytest.mark.parametrize(
    ("name", "mask"), [("roberta", "<mask>"), ("bert", "[MASK]"), ("distilbert", "[MASK]")]
)
def test_a_text_without_a_mask_shows_how_to_write_one(
    masked: dict[str, Masked], name: str, mask: str
) -> None:
    folder = str(masked[name].folder)
    result = run_cli("logits", "the cat and the king", "-m", folder)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert f"holds no {mask}" in said and f'as in: logits "Paris is the {mask} of France."' in said


def test_a_checkpoint_without_the_head_is_refused(tmp_path: Path) -> None:
    bare = build_bert(tmp_path / "bare", base=True)  # a BertModel: its encoder, a pooler, no head
    result = run_cli("logits", "the cat [MASK] king", "-m", str(bare.folder))
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "has no masked-language head" in said and "cls.predictions.transform.dense.weight" in said
    assert "(BertForMaskedLM)" in said


def test_the_grid_fills_in_the_positions_around_the_mask(masked: dict[str, Masked], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from drawn import captured, drawn

    f = masked["distilbert"]
    text = "the cat and king and queen is a man and [MASK] dog and the cat sat on the king"
    with captured() as figures:
        doc = run_json("logits", text, "-m", str(f.folder), "--figure", str(tmp_path / "g.png"), "--layers")
    n, at = len(doc["tokens"]), doc["at"]
    positions = [c["position"] for c in doc["grid"]]
    assert n > 16 and len(positions) == 16 and at - 8 in positions and at + 7 in positions
    column = doc["grid"][positions.index(at)]["cells"]
    assert [c["id"] for c in column] == [x["top"][0]["id"] for x in doc["layers"]]
    data = drawn(figures[0])
    assert "what each layer would fill in" in data["title"] and "its 16 positions" in data["title"]
    assert "read through its head (· wteᵀ + bias) (the logit lens)" in data["title"].replace("\n", " ")
    assert data["panels"][0]["xlabel"].endswith("(the cell: the token the head puts there)")
