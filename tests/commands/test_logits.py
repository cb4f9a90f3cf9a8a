"""`logits TEXT` (h · Wᵀ by the output table gpt2emb read), --through wte, --layers (the logit lens), --at and
--figure, on the docs' tiny GPT-2 and the tiny GPT-Neo, GPT-NeoX and rotary Llama, checked against
transformers' own forward pass: AutoModelForCausalLM's logits, and output_hidden_states put through the final
layer norm and the output table by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from oracles import assert_lens_matches, assert_top_matches, close
from tiny_gpt_neo import build as build_neo
from tiny_llama import build as build_llama
from tiny_neox import build as build_neox

from conftest import copy_model, run_cli, run_json
from tinymodel import Tiny, save_local

TEXT = "the cat and king and queen"


class Family(NamedTuple):
    folder: Path
    wte: np.ndarray
    final_norm: Callable[[Any], Any]  # the loaded model -> its final layer norm module
    table: str  # the output layer as the title names it
    stored: str  # its tensor in the checkpoint


@pytest.fixture(scope="module")
def families(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Family]:
    from tinymodel import build

    made = tmp_path_factory.mktemp("families")
    tiny = build()
    neo, neox, llama = build_neo(made / "neo"), build_neox(made / "neox"), build_llama(made / "llama")
    return {
        "gpt2": Family(save_local(tiny, made / "gpt2"), tiny.wte, lambda m: m.transformer.ln_f, "wte", "wte"),
        "gpt_neo": Family(neo.folder, neo.wte, lambda m: m.transformer.ln_f, "wte", "wte"),
        "gpt_neox": Family(
            neox.folder, neox.wte, lambda m: m.gpt_neox.final_layer_norm, "lm_head", "embed_out"
        ),
        "llama": Family(llama.folder, llama.wte, lambda m: m.model.norm, "lm_head", "lm_head"),
    }


def oracle(folder: Path, text: str) -> tuple[list[int], np.ndarray, Any, Any]:
    """The ids as the tokenizer makes them in use (with its BOS), transformers' logits for each position,
    its hidden states (layers, positions, d), and the model."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    ids = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text, add_special_tokens=True).ids
    model = AutoModelForCausalLM.from_pretrained(folder).eval()  # type: ignore[no-untyped-call]
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
    states = torch.stack(out.hidden_states)[:, 0]
    return ids, out.logits[0].numpy(), states, model


@pytest.mark.parametrize("name", ["gpt2", "gpt_neo", "gpt_neox", "llama"])
@pytest.mark.parametrize("at", [None, 1])
def test_logits_and_the_lens_match_transformers(
    families: dict[str, Family], name: str, at: int | None
) -> None:
    import torch

    f = families[name]
    args = ["logits", TEXT, "-m", str(f.folder), "-k", "20", "--layers"]
    doc = run_json(*args, *(["--at", str(at)] if at is not None else []))
    ids, logits, states, model = oracle(f.folder, TEXT)
    before = len(ids) - len(doc["tokens"])  # what the tokenizer puts in front (Llama's <s>)
    assert [t["id"] for t in doc["tokens"]] == ids[before:]
    assert [t["id"] for t in doc["added"]] == ids[:before]
    position = len(doc["tokens"]) - 1 if at is None else at
    assert doc["at"] == position
    assert doc["table"] == f.table and f.stored in doc["stored_as"] and doc["tied"] is (f.table == "wte")
    assert doc["formula"] == f"h · {f.table}ᵀ" and doc["vocab_size"] == len(f.wte)
    assert_top_matches(doc["top"], logits[before + position])
    # the lens: every hidden state through the final layer norm (the last has it already), then the table
    table = model.get_output_embeddings().weight.detach().numpy()
    norm = f.final_norm(model)
    with torch.no_grad():
        here = states[:, before + position]
        read = [*(norm(h) for h in here[:-1]), here[-1]]
    assert len(doc["layers"]) == len(read) == model.config.num_hidden_layers + 1
    assert_lens_matches(doc["layers"], [(h.numpy() @ table.T).astype(np.float64) for h in read], doc["top"])


def test_the_answer_does_not_depend_on_the_lens(families: dict[str, Family]) -> None:
    f = families["gpt2"]
    plain = run_json("logits", TEXT, "-m", str(f.folder))
    lens = run_json("logits", TEXT, "-m", str(f.folder), "--layers")
    assert plain["layers"] is None and plain["through_wte"] is None and plain["grid"] is None
    assert [s["id"] for s in plain["top"]] == [s["id"] for s in lens["top"]]
    for a, b in zip(plain["top"], lens["top"], strict=True):
        assert close(a["logit"], b["logit"])


def test_through_wte_on_the_untied_llama_is_h_times_wte(families: dict[str, Family]) -> None:
    f = families["llama"]
    doc = run_json("logits", TEXT, "-m", str(f.folder), "--through", "wte", "-k", "15")
    _, logits, states, _ = oracle(f.folder, TEXT)
    by_hand = states[-1, -1].numpy().astype(np.float64) @ f.wte.T.astype(np.float64)  # h · wteᵀ
    assert_top_matches(doc["through_wte"], by_hand.astype(np.float32))
    assert_top_matches(doc["top"], logits[-1])
    shared = {s["id"] for s in doc["top"]} & {s["id"] for s in doc["through_wte"]}
    assert doc["overlap"] == len(shared)
    assert [s["id"] for s in doc["top"]] != [s["id"] for s in doc["through_wte"]]  # two tables, two lists
    table = " ".join(
        run_cli("logits", TEXT, "-m", str(f.folder), "--through", "wte", "-k", "15").stdout.split()
    )
    assert "h · lm_headᵀ" in table and "h · wteᵀ (what tying would have given)" in table
    assert f"{doc['overlap']} of the 15 tokens are in both lists" in table


def test_through_wte_on_a_tied_model_says_it_is_the_same_table(families: dict[str, Family]) -> None:
    f = families["gpt2"]
    doc = run_json("logits", TEXT, "-m", str(f.folder), "--through", "wte")
    assert doc["through_wte"] is None and doc["overlap"] is None
    assert any("tied: its output layer is wte itself" in n for n in doc["notes"])
    table = run_cli("logits", TEXT, "-m", str(f.folder))
    assert "h · wteᵀ (the output layer is wte)" in " ".join(table.stdout.split())


def test_neox_names_its_embed_out(families: dict[str, Family]) -> None:
    doc = run_json("logits", TEXT, "-m", str(families["gpt_neox"].folder), "--through", "wte")
    assert doc["stored_as"] == "embed_out.weight" and doc["table"] == "lm_head"
    table = run_cli("logits", TEXT, "-m", str(families["gpt_neox"].folder), "--through", "wte").stdout
    assert "(its output layer, embed_out.weight)" in " ".join(table.split())


def test_the_llama_runs_with_its_bos_and_counts_positions_in_the_text(
    families: dict[str, Family], tmp_path: Path
) -> None:
    from tokenizers import Tokenizer, processors

    f = families["llama"]
    folder = copy_model({p.name: p.read_bytes() for p in f.folder.iterdir() if p.is_file()}, tmp_path / "bos")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", bos), ("</s>", eos)]
    )  # as Llama 2's, with an EOS after too: the model runs with <s> in front and without </s>
    tok.save(str(folder / "tokenizer.json"))
    doc = run_json("logits", TEXT, "-m", str(folder), "--at", "0")
    ids, logits, _, _ = oracle(folder, TEXT)
    assert ids[0] == bos and ids[-1] == eos
    assert doc["added"] == [{"id": bos, "token": "<s>"}] and doc["tokens"][0]["id"] == ids[1]
    assert_top_matches(doc["top"], logits[1])  # the text's position 0 is the model's position 1
    assert any("puts <s> before a text in use" in n for n in doc["notes"])
    assert any("puts </s> after a text in use: left out here" in n for n in doc["notes"])
    last = run_json("logits", TEXT, "-m", str(folder))
    assert last["at"] == len(ids) - 3
    assert_top_matches(last["top"], logits[-2])  # after the text's last token, not after </s>


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--at", "8"], "--at 8 is past the text: its 8 tokens are positions 0 to 7"),
        (["--at", "1024"], "tiny-gpt2's limit: position 1024 does not exist"),
        (["--at", "-1"], "-1 is less than 0"),
        (["-k", "0"], "-k/--top must be 1 or more"),
        (["-k", "400"], "-k/--top must be at most 343"),
    ],
)
def test_refusals(tiny: Tiny, tmp_path: Path, args: list[str], said: str) -> None:
    folder = save_local(tiny, tmp_path / "tiny-gpt2")
    result = run_cli("logits", "the cat sat on the", "-m", str(folder), *args)
    assert result.exit_code == 2 and said in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.stderr


def test_an_empty_text_is_refused(hub: Any) -> None:
    result = run_cli("logits", "")
    assert result.exit_code == 2 and "the text is empty" in result.stderr


def test_a_bare_model_whose_config_does_not_tie_has_no_output_layer(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "bare")  # a GPT2Model's tensors: no lm_head
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "tie_word_embeddings": False}))
    result = run_cli("logits", "the cat", "-m", str(folder))
    assert result.exit_code == 2
    assert "has no output layer" in result.stderr and "stores no lm_head.weight" in result.stderr


def test_a_special_token_typed_is_told(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "tiny-gpt2")
    doc = run_json("logits", "the cat<|endoftext|> king", "-m", str(folder))
    end = tiny.vocab["<|endoftext|>"]
    assert end in [t["id"] for t in doc["tokens"]]
    assert any(
        f"<|endoftext|>, which the tokenizer takes as one special token (id:{end})" in n for n in doc["notes"]
    )


def test_the_text_comes_from_stdin(tiny: Tiny, tmp_path: Path, stdin: Callable[[bytes], None]) -> None:
    folder = save_local(tiny, tmp_path / "tiny-gpt2")
    stdin(b"the cat and king\n")
    piped = run_json("logits", "-", "-m", str(folder))
    typed = run_json("logits", "the cat and king", "-m", str(folder))
    assert piped["text"] == "the cat and king" and [s["id"] for s in piped["top"]] == [
        s["id"] for s in typed["top"]
    ]


def test_the_first_use_fetches_the_weights_once(hub: Any) -> None:
    first = run_cli("logits", "the cat")
    assert first.exit_code == 0 and "fetching all its weights once" in first.stderr
    again = run_cli("logits", "the cat")
    assert again.exit_code == 0 and "fetching" not in again.stderr


def test_a_zero_final_layer_norm_gives_equal_probabilities_not_nan(tiny: Tiny, tmp_path: Path) -> None:
    import dataclasses

    from tinymodel import D

    blocks = {
        **tiny.blocks,
        "ln_f.weight": np.zeros(D, dtype=np.float32),
        "ln_f.bias": np.zeros(D, np.float32),
    }
    folder = save_local(dataclasses.replace(tiny, blocks=blocks), tmp_path / "flat")
    result = run_cli("logits", TEXT, "-m", str(folder), "--json", "--layers")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert all(s["logit"] == 0 and s["probability"] == pytest.approx(1 / len(tiny.wte)) for s in doc["top"])
    assert [s["id"] for s in doc["top"]] == list(range(10))  # ties ranked by id


def test_a_copy_served_by_the_hub_answers_as_the_folder(hub: Any, tiny: Tiny, tmp_path: Path) -> None:
    folder = copy_model(
        {p.name: p.read_bytes() for p in save_local(tiny, tmp_path / "a").iterdir()}, tmp_path / "b"
    )
    served, local = run_json("logits", TEXT), run_json("logits", TEXT, "-m", str(folder))
    assert [s["id"] for s in served["top"]] == [s["id"] for s in local["top"]]


# ---------------------------------------------------------------- --figure: the lens grid


def test_the_grid_draws_what_the_json_holds_each_text_as_typed(tiny: Tiny, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from gpt2emb.plot.logits import shown

    from drawn import captured, drawn

    folder = save_local(tiny, tmp_path / "tiny-gpt2")
    text = "the cat and $x$ king and queen is a man and the dog"
    target = tmp_path / "lens.png"
    with captured() as figures:
        doc = run_json("logits", text, "-m", str(folder), "--figure", str(target), "--layers")
    assert doc["figure"] == str(target) and target.stat().st_size > 1000
    grid = doc["grid"]
    n = len(doc["tokens"])
    assert n > 16 and [c["position"] for c in grid] == list(range(n - 16, n))  # the last 16, up to --at
    assert [c["id"] for c in grid] == [t["id"] for t in doc["tokens"][-16:]]
    last = grid[-1]["cells"]  # the last column is the lens at the position scored
    assert [c["id"] for c in last] == [x["top"][0]["id"] for x in doc["layers"]]
    assert [c["probability"] for c in last] == [x["top"][0]["probability"] for x in doc["layers"]]
    fig = figures[0]
    data = drawn(fig)
    assert "at its last 16 positions" in data["title"] and "wteᵀ" in data["title"]
    (panel,) = data["panels"]
    image = np.array(panel["images"][0])
    assert image.shape == (len(last), 16)
    np.testing.assert_array_equal(
        image, [[c["cells"][layer]["probability"] for c in grid] for layer in range(3)]
    )
    cells = [shown(c["cells"][layer]["token"]) for c in grid for layer in range(3)]
    assert panel["texts"] == cells
    assert panel["xlabels"] == [f"{shown(c['token'])}\n{c['position']}" for c in grid]
    assert '"$"' in " ".join(panel["xlabels"])  # drawn as typed: no mathtext
    everything = [*fig.axes[0].texts, *fig.axes[0].get_xticklabels(), *fig.axes[0].get_yticklabels()]
    assert fig.texts and all(not t.get_parse_math() for t in [*everything, *fig.texts])
    # no label over another, and each cell's text inside its cell
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
    ax = fig.axes[0]
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    for i, a in enumerate(boxes):
        assert not any(a.overlaps(b) for b in boxes[i + 1 :])
    to_display = ax.transData.transform
    for t, box in zip(ax.texts, boxes, strict=True):
        x, y = t.get_position()
        (x0, y0), (x1, y1) = to_display((x - 0.5, y - 0.5)), to_display((x + 0.5, y + 0.5))
        assert x0 <= box.x0 and box.x1 <= x1 and y0 <= box.y0 and box.y1 <= y1, t.get_text()
    ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
    for i, a in enumerate(ticks):
        assert not any(a.overlaps(b) for b in ticks[i + 1 :])
    # the title lies inside the figure, of 16 positions or of 4 (on one line it ran past both edges)
    with captured() as short:
        run_json("logits", "the cat and king", "-m", str(folder), "--figure", str(target), "--layers")
    for drawn_fig in (fig, short[0]):
        canvas = FigureCanvasAgg(drawn_fig)
        canvas.draw()  # type: ignore[no-untyped-call]
        for title in drawn_fig.texts:
            box = title.get_window_extent(canvas.get_renderer())  # type: ignore[no-untyped-call]
            whole = drawn_fig.bbox
            assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and box.y1 <= whole.y1, title.get_text()


def test_a_long_token_is_cut_to_its_cell_and_kept_whole_in_the_json() -> None:
    from gpt2emb.plot.logits import CELL_CHARACTERS, shown

    assert shown(" king") == '" king"'
    cut = shown(" internationalisation")
    assert len(cut) == CELL_CHARACTERS and cut == '" interna…'
    assert shown("$x$") == '"$x$"'
