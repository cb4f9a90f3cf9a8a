"""plot/sizes.py: the single pieces of a model, counted and drawn."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

import pytest
from matplotlib.figure import Figure

from gpt2emb.plot import sizes

from drawn import Recorded
from tinymodel import Tiny, save_local


def test_a_count_is_in_millions_from_a_million() -> None:
    assert sizes.count(999_999) == "999,999" and sizes.count(1_000_000) == "1.0 M"
    assert sizes.count(1_557_611_200) == "1,557.6 M" and sizes.count(38_597_376) == "38.6 M"


def test_a_long_name_is_cut_into_lines_of_40() -> None:
    assert sizes._lines("a" * 85) == "a" * 40 + "\n" + "a" * 40 + "\n" + "a" * 5
    assert sizes._lines("gpt2") == "gpt2" and sizes._lines("") == ""


def test_gpt2_s_single_pieces_by_the_formula(recorded: Recorded) -> None:
    result, _, fig = recorded("sizes")
    gpt2 = result.models[0]
    assert gpt2.name == "gpt2"
    assert sizes.pieces(gpt2) == {
        "wte (50,257 tokens x 768)": 38_597_376,
        "one block, whole (of 12)": 7_087_872,
        "one block's largest matrix (MLP, 768 x 3,072)": 2_359_296,
        "wpe (1,024 positions x 768)": 786_432,
        "the final layer norm": 1_536,
    }
    assert sizes.why_not(gpt2, sizes.pieces(gpt2)) is None
    ax = fig.axes[0]
    bars = [p.get_width() for p in cast(list[Any], ax.patches)]
    assert bars == pytest.approx([38.597376, 7.087872, 2.359296, 0.786432, 0.001536])
    assert ax.get_xlim() == pytest.approx((0, 38.597376 * 1.3))
    assert [t.get_text() for t in ax.texts] == ["38.6 M", "7.1 M", "2.4 M", "786,432", "1,536"]
    assert [t.get_position()[0] for t in ax.texts] == pytest.approx([b + 38.597376 * 0.02 for b in bars])
    assert ax.get_title() == "gpt2: 124 M in all, wte 31.0%" and ax.get_xlabel() == "parameters (millions)"
    assert list(fig.get_size_inches()) == [15.0, 0.6 + 3.2 * 2]


def test_a_checkpoint_s_pieces_are_counted_and_a_tied_output_left_out(
    recorded: Recorded, tiny: Tiny, tmp_path: Path
) -> None:
    result, _, fig = recorded("sizes", "-m", str(save_local(tiny, tmp_path / "tiny")))
    (m,) = result.models
    rest = m.total_params - m.wte_params - m.wpe_params
    found = sizes.pieces(m)
    assert list(found.values()) == [m.wte_params, rest // m.n_layer, m.wpe_params]
    assert list(found)[1] == f"one block, on average (of {m.n_layer})" and m.output_params == 0
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("parameters (thousands)\n\nHere wpe outweighs wte:")
    assert ax.get_title().endswith(f": {m.total_params:,} in all, wte {m.wte_share:.1%}")
    assert [p.get_width() for p in cast(list[Any], ax.patches)] == pytest.approx(
        [v / 1e3 for v in found.values()]
    )
    untied = dataclasses.replace(m, output_params=m.wte_params, total_params=m.total_params + m.wte_params)
    assert sizes.pieces(untied)["output layer (not tied to wte)"] == m.wte_params
    assert list(sizes.pieces(untied).values())[2] == rest // m.n_layer


def test_a_model_of_one_layer_and_a_part_of_one_parameter(recorded: Recorded) -> None:
    """One layer is one block, whole or on average; a part of a single parameter is a part the model has,
    drawn; a model of a million and more parameters is titled in millions."""
    result, _, _ = recorded("sizes")
    gpt2 = result.models[0]
    one = dataclasses.replace(gpt2, n_layer=1, block_params=7_087_872, wpe_params=1, total_params=1_200_000)
    found = sizes.pieces(one)
    assert found["one block, whole (of 1)"] == 7_087_872 and found["wpe (1,024 positions x 768)"] == 1
    counted = dataclasses.replace(
        one, block_params=None, final_ln_params=None, total_params=gpt2.wte_params + 1 + 1_000
    )
    assert sizes.pieces(counted)["one block, on average (of 1)"] == 1_000
    fig = Figure()
    sizes.panel(fig.add_subplot(), one)
    assert fig.axes[0].get_title() == "gpt2: 1 M in all, wte 31.0%"
    sizes.panel(fig.add_subplot(), dataclasses.replace(one, total_params=999_999))
    assert fig.axes[1].get_title() == "gpt2: 999,999 in all, wte 31.0%"


def test_a_block_that_outweighs_wte_is_named_in_the_note_under_the_scale(recorded: Recorded) -> None:
    """With 1,000 tokens, gpt2's wte (768,000) is smaller than one block: the note names the block by its
    bar's name, before the parenthesis, wrapped at 60 characters under the scale."""
    result, _, _ = recorded("sizes")
    small = dataclasses.replace(result.models[0], vocab_size=1_000, wte_params=768_000)
    note = sizes.why_not(small, sizes.pieces(small))
    assert note == (
        "Here one block, whole outweighs wte: 1,000 tokens of 768 make a small table. GPT-2's 50,257 tokens "
        "make wte its largest piece."
    )
    fig = Figure()
    sizes.panel(fig.add_subplot(), small)
    assert fig.axes[0].get_xlabel() == (
        "parameters (millions)\n\nHere one block, whole outweighs wte: 1,000 tokens of 768\n"
        "make a small table. GPT-2's 50,257 tokens make wte its\nlargest piece."
    )
