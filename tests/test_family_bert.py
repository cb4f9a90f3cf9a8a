"""BERT (families/bert.py) on a tiny BERT made by transformers: served by the fake Hub as
google-bert/bert-base-uncased and read as a local folder, every command in table and JSON; WordPiece words.

Oracles: the model's own tables read at row p (no offset), and transformers' own modules for h0 (the layer
norm of token + position + token-type 0 rows) and for the hidden states of `context`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oracles import encoder_context_cosines, geometry_similarity_vector, unit
from tiny_bert import N_POSITIONS, TinyBert, build

from conftest import copy_model, hub_or_folder, run_cli, run_json, serve
from fakehub import FakeHub

REPO = "google-bert/bert-base-uncased"


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> TinyBert:
    return build(tmp_path_factory.mktemp("bert"))


@pytest.fixture
def served(hub: FakeHub, bert: TinyBert) -> FakeHub:
    return serve(hub, {REPO: bert.files()})


def h0_oracle(folder: Path, ids: list[int]) -> np.ndarray:
    """transformers' own embedding module on the ids: token type 0, positions from 0."""
    import torch
    from transformers import BertForMaskedLM

    model = BertForMaskedLM.from_pretrained(folder).eval()  # type: ignore[no-untyped-call]
    with torch.no_grad():
        return np.asarray(model.bert.embeddings(input_ids=torch.tensor([ids]))[0].numpy())


def test_wordpiece_pieces_as_text() -> None:
    from gpt2emb.families.bert import FAMILY
    from gpt2emb.queries import Specials, check_word

    words = FAMILY.words
    assert [words.text(p) for p in ("king", "##ing", "[CLS]", "[unused0]", ",", "##")] == [
        " king",
        "ing",
        "[CLS]",
        "[unused0]",
        " ,",
        " ##",
    ]
    assert words.raw("##é") == "é".encode()
    assert words.running("running") == "running"
    # a dictionary lookup only where the tokenizer's answer is certain
    assert [words.whole(t) for t in ("king", "2024", "King", " king", "k-9", "a" * 101)] == [
        "king",
        "2024",
        None,
        None,
        None,
        None,
    ]
    for n, special in enumerate(("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")):  # as a registry model's
        with pytest.raises(Exception, match=rf"special token, not a word.*\(id:{100 + n}\)"):
            check_word(special, False, Specials(FAMILY.specials, ((special, 100 + n),)))
    assert check_word("[unused0]", False, Specials(FAMILY.specials, ())) is None


def test_the_entry_keeps_wordpiece_pieces_and_no_bpe_table(served: FakeHub, bert: TinyBert) -> None:
    from gpt2emb import bpe
    from gpt2emb.core.open import open_ref
    from gpt2emb.registry import resolve

    parsed = json.loads(bert.tokenizer.to_str())
    assert bpe.table(parsed) is None  # not byte-level BPE: the tokenizers library encodes
    o = open_ref(resolve(str(bert.folder)))
    m, vocab = o.model, o.vocab
    assert not (m.path / bpe.FILE).exists()
    pieces, texts = vocab.texts()
    for piece, i in parsed["model"]["vocab"].items():
        assert pieces[i] == piece
    assert texts[bert.id("##ing")] == "ing" and texts[bert.id("king")] == " king"


@pytest.mark.parametrize("at", ["hub", "folder"])
def test_neighbors_of_cat(served: FakeHub, bert: TinyBert, at: str) -> None:
    model = hub_or_folder(REPO, bert.folder, at)
    doc = run_json("neighbors", "cat", "-k", "3", "-m", model)
    first = doc["items"][0]
    assert first["tokens"] == [{"id": bert.id("cat"), "token": " cat"}]
    assert [n["token"] for n in first["neighbors"][:2]] == [" cats", " kitten"]
    assert first["neighbors"][0]["id"] == bert.id("cats")
    table = run_cli("neighbors", "cat", "-m", model)
    assert table.exit_code == 0 and '" kitten"' in table.stdout


def test_analogy_king_man_woman(served: FakeHub, bert: TinyBert) -> None:
    doc = run_json("analogy", "king", "man", "woman", "-k", "3", "-m", REPO)
    assert doc["results"][0]["token"] == " queen" and doc["results"][0]["id"] == bert.id("queen")
    assert doc["results"][0]["score"] == pytest.approx(1.0, abs=1e-6)
    table = run_cli("analogy", "king", "man", "woman", "-m", REPO)
    assert table.exit_code == 0 and '" queen"' in table.stdout


def test_wordpiece_words(served: FakeHub, bert: TinyBert) -> None:
    """A typed word is the word itself; case folds in an uncased vocabulary; a split shows its pieces as
    text; what the vocabulary cannot spell is refused, not answered by [UNK]'s row."""
    king = run_json("vector", "King", "--full", "-m", REPO)["items"][0]
    assert king["tokens"] == [{"id": bert.id("king"), "token": " king"}]
    np.testing.assert_allclose(king["vector"], bert.wte[bert.id("king")], rtol=1e-6)
    split = run_json("vector", "playing", "--full", "-m", REPO)["items"][0]
    assert split["tokens"] == [
        {"id": bert.id("play"), "token": " play"},
        {"id": bert.id("##ing"), "token": "ing"},
    ]
    assert (
        split["note"]
        == '"playing" splits into 2 tokens (" play" + "ing"); using the mean of their rows (--pool)'
    )
    np.testing.assert_allclose(
        split["vector"], bert.wte[[bert.id("play"), bert.id("##ing")]].mean(0), rtol=1e-6
    )
    strict = run_cli("vector", "playing", "--pool", "strict", "-m", REPO)
    assert strict.exit_code == 2 and '(" play" + "ing")' in strict.stderr
    for word in ("🙂", "cat🙂"):
        unknown = run_cli("vector", word, "-m", REPO)
        assert unknown.exit_code == 2
        assert f"the tokenizer makes [UNK] (id:{bert.id('[UNK]')}) of it" in unknown.stderr
    reserved = run_json("vector", f"id:{bert.id('[unused0]')}", "-m", REPO)["items"][0]
    assert reserved["tokens"][0]["token"] == "[unused0]"


@pytest.mark.parametrize("special", ["[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"])
def test_special_tokens_are_refused_with_their_id(served: FakeHub, bert: TinyBert, special: str) -> None:
    for model in (REPO, str(bert.folder)):
        result = run_cli("vector", special, "-m", model)
        assert result.exit_code == 2
        want = bert.id(special)
        assert f"special token, not a word: ask for its row by id (id:{want})" in result.stderr
    doc = run_json("vector", f"id:{bert.id(special)}", "-m", REPO)
    assert doc["items"][0]["tokens"][0] == {"id": bert.id(special), "token": special}


def test_positions_start_at_row_zero(served: FakeHub, bert: TinyBert) -> None:
    doc = run_json("positions", "0", "1", "2", "40", "-m", REPO)
    assert doc["positions"] == doc["rows"] == [0, 1, 2, 40]
    u = unit(bert.positions[[0, 1, 2, 40]])
    np.testing.assert_allclose(np.array(doc["matrix"]), u @ u.T, atol=1e-6)
    table = run_cli("positions", "0", "1", "2", "-m", REPO)
    assert table.exit_code == 0 and "cosine similarity of position rows" in table.stdout
    past = run_cli("positions", str(N_POSITIONS), "-m", REPO)
    assert past.exit_code == 2
    assert (
        f"position {N_POSITIONS} does not exist: {REPO} learned {N_POSITIONS} positions, 0 to " in past.stderr
    )
    assert "rows" not in past.stderr  # no offset to explain
    heat = run_json("positions", "--heatmap", "--cells", "8", "-m", REPO)
    assert heat["n_positions"] == N_POSITIONS and len(heat["matrix"]) == 8
    assert run_cli("positions", "--heatmap", "--cells", "8", "-m", REPO).exit_code == 0


@pytest.mark.parametrize("at", ["hub", "folder"])
def test_input_is_transformers_own_embedding_output(served: FakeHub, bert: TinyBert, at: str) -> None:
    model = hub_or_folder(REPO, bert.folder, at)
    text = "the King and the cats"
    doc = run_json("input", text, "--full", "-m", model)
    ids = list(bert.tokenizer.encode(text, add_special_tokens=False).ids)
    assert [t["id"] for t in doc["tokens"]] == ids and bert.id("king") in ids
    assert [t["row"] for t in doc["tokens"]] == list(range(len(ids)))
    h0 = h0_oracle(bert.folder, ids)
    np.testing.assert_allclose(np.array(doc["h0"]), h0, atol=2e-5)
    summed = bert.wte[ids] + bert.positions[: len(ids)] + bert.types[0]  # before the layer norm
    np.testing.assert_allclose(
        [t["sum_norm"] for t in doc["tokens"]], np.linalg.norm(summed, axis=1), rtol=1e-5
    )
    table = run_cli("input", text, "-m", model)
    assert table.exit_code == 0
    n = len(ids)
    assert (
        f"LayerNorm(wte[ids] ({n}, 32) + wpe[0..{n - 1}] ({n}, 32) + type[0] (32,)) = h0 ({n}, 32)"
        in table.stdout
    )
    too_long = run_cli("input", " cat" * (N_POSITIONS - 1), "-m", model)  # [CLS] and [SEP] come around it
    assert too_long.exit_code == 2 and f"but {N_POSITIONS - 2} fit: " in too_long.stderr
    blank = run_cli("input", "  \t ", "-m", model)  # WordPiece drops white space: nothing would go in
    assert blank.exit_code == 2
    assert blank.stderr == f'gpt2emb: the text "  \\x09 " is no tokens at all in {model}: type some words\n'


def _folder_with_keys(bert: TinyBert, folder: Path, rename: dict[str, str]) -> Path:
    """The tiny BERT's files, its checkpoint's tensors renamed."""
    from safetensors.numpy import load_file, save_file

    copy_model(bert.files(), folder)
    tensors = load_file(str(folder / "model.safetensors"))
    renamed = {next((new for old, new in rename.items() if k == old), k): v for k, v in tensors.items()}
    save_file(renamed, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


def test_the_hubs_gamma_and_beta_names(tmp_path: Path, bert: TinyBert) -> None:
    """google-bert's own checkpoints keep TensorFlow's names for the embedding layer norm."""
    folder = _folder_with_keys(
        bert,
        tmp_path / "tf-names",
        {"bert.embeddings.LayerNorm.weight": "bert.embeddings.LayerNorm.gamma"}
        | {"bert.embeddings.LayerNorm.bias": "bert.embeddings.LayerNorm.beta"},
    )
    ids = list(bert.tokenizer.encode("the king", add_special_tokens=False).ids)
    doc = run_json("input", "the king", "--full", "-m", str(folder))
    np.testing.assert_allclose(np.array(doc["h0"]), h0_oracle(bert.folder, ids), atol=2e-5)


def test_a_bert_model_checkpoint_without_the_bert_prefix(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    base = build(tmp_path / "base", base=True)
    from safetensors import safe_open

    with safe_open(str(base.folder / "model.safetensors"), "np") as f:
        assert "embeddings.word_embeddings.weight" in f.keys()  # noqa: SIM118 (a safetensors handle)
    doc = run_json("neighbors", "cat", "-k", "2", "-m", str(base.folder))
    assert [n["token"] for n in doc["items"][0]["neighbors"]] == [" cats", " kitten"]
    ids = list(base.tokenizer.encode("the king", add_special_tokens=False).ids)
    got = run_json("input", "the king", "--full", "-m", str(base.folder))
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(base.folder).eval()  # type: ignore[no-untyped-call]
    with torch.no_grad():
        h0 = model.embeddings(input_ids=torch.tensor([ids]))[0].numpy()
    np.testing.assert_allclose(np.array(got["h0"]), h0, atol=2e-5)
    # tying: the checkpoint holds no head at all, which is not the same as a head tied to wte
    checked = next(
        c for c in run_json("tying", "-m", str(base.folder))["checks"] if c["name"] == "checkpoint"
    )
    assert checked["detail"].endswith(
        "and no cls.* tensor: a BertModel without the language-model head, which BertForMaskedLM ties to wte "
        "and whose other layers it starts at random"
    )


def test_tying_names_bert_s_layers(served: FakeHub, bert: TinyBert) -> None:
    doc = run_json("tying", "-m", REPO)
    assert doc["tied"] is True
    meta = next(c for c in doc["checks"] if c["name"] == "meta_model")
    assert "BertForMaskedLM" in meta["detail"]
    assert "cls.predictions.decoder.weight is bert.embeddings.word_embeddings.weight" in meta["detail"]
    checked = next(c for c in doc["checks"] if c["name"] == "checkpoint")
    assert checked["detail"].endswith(
        "and no cls.predictions.decoder.weight: the output layer is read from wte"
    )
    loaded = run_json("tying", "--load", "-m", str(bert.folder))
    assert next(c for c in loaded["checks"] if c["name"] == "loaded_model")["passed"] is True
    assert run_cli("tying", "-m", REPO).exit_code == 0
    grad = run_cli("tying", "--grad", "the cat sat", "-m", REPO)
    assert grad.exit_code == 2 and "masked language model (BERT)" in grad.stderr


def test_geometry_similarity_and_vector(served: FakeHub, bert: TinyBert) -> None:
    geometry_similarity_vector(REPO, bert.wte, bert.positions, bert.id)


def test_context_is_transformers_own_hidden_states(served: FakeHub, bert: TinyBert) -> None:
    from transformers import BertModel

    sentences = ["the cat sat", "a dog and a cat"]
    doc = run_json("context", "cat", *sentences, "-m", REPO)
    assert len(doc["layers"]) == 3  # h0 and two layers
    at = [s["at"] for s in doc["sentences"]]
    assert at == [[1], [4]]
    want = encoder_context_cosines(BertModel, bert.folder, bert.tokenizer, sentences, [a[0] for a in at])
    for layer in doc["layers"]:
        assert layer["pairs"][0]["cosine"] == pytest.approx(want[layer["layer"]], abs=1e-5)
    assert run_cli("context", "cat", *sentences, "-m", REPO).exit_code == 0


def test_side_by_side_with_gpt2_is_joined_by_token_text(served: FakeHub, bert: TinyBert) -> None:
    doc = run_json("neighbors", "cat", "-k", "3", "-m", "gpt2", "-m", str(bert.folder))
    gpt2, ours = (r["items"][0]["neighbors"] for r in doc["results"])
    assert gpt2[0]["token"] == ours[0]["token"] == " cats" and gpt2[0]["id"] != ours[0]["id"]
    overlap = doc["overlap"][0]
    shared = {n["token"] for n in gpt2} & {n["token"] for n in ours}
    assert overlap["shared"] == len(shared) >= 2 and " kitten" in overlap["tokens"]
    table = run_cli("neighbors", "cat", "-k", "3", "-m", "gpt2", "-m", str(bert.folder))
    assert table.exit_code == 0 and "without its leading space" in " ".join(table.stdout.split())
