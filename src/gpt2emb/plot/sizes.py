"""sizes --figure: is wte the largest single piece? A panel per model, its single pieces side by side as
bars of one linear scale: wte, one block whole, that block's largest matrix, wpe, the final layer norm (from
a checkpoint: wte, a separate output layer, one block on average, wpe), each bar's count written beside it.
The shapes come from the result (the registry's, or a checkpoint's config): no weights are read. Where wte
is not the largest piece (a tiny model's few tokens), the panel says why."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING

from gpt2emb.plot.canvas import new_figure, suptitle
from gpt2emb.results.sizes import ModelSizes, SizesResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

NAME_LINE = 40  # characters of a model's name in its panel's title, a line


def _lines(name: str) -> str:
    """A model's name as its panel's title says it: a long one (a folder's path) on lines of NAME_LINE."""
    return "\n".join(name[i : i + NAME_LINE] for i in range(0, len(name), NAME_LINE)) or name


def pieces(m: ModelSizes) -> dict[str, int]:
    """A model's single pieces, by kind, in the order drawn (top first), each with its parameters: by the
    formula, wte, one block whole, that block's largest matrix (the MLP's d x 4d), wpe, the final layer norm;
    counted from a checkpoint, wte, a separate output layer, one block on average (what is neither wte, wpe
    nor the output layer, over the layers: the final norm counted in), wpe. A part the model lacks (no
    position table, a tied output layer) is left out."""
    d = m.d_model
    if m.block_params is not None and m.final_ln_params is not None:
        found = {
            f"wte ({m.vocab_size:,} tokens x {d:,})": m.wte_params,
            f"one block, whole (of {m.n_layer})": m.block_params // max(m.n_layer, 1),
            f"one block's largest matrix (MLP, {d:,} x {4 * d:,})": 4 * d * d,
            f"wpe ({m.position_rows:,} positions x {d:,})": m.wpe_params,
            "the final layer norm": m.final_ln_params,
        }
    else:
        rest = m.total_params - m.wte_params - m.wpe_params - m.output_params
        found = {
            f"wte ({m.vocab_size:,} tokens x {d:,})": m.wte_params,
            "output layer (not tied to wte)": m.output_params,
            f"one block, on average (of {m.n_layer})": rest // max(m.n_layer, 1),
            f"wpe ({m.position_rows:,} positions x {d:,})": m.wpe_params,
        }
    return {k: v for k, v in found.items() if v > 0 or k.startswith("wte")}


def count(n: int) -> str:
    """A bar's count as written beside it: millions to one decimal, or every digit below a million."""
    return f"{n / 1e6:,.1f} M" if n >= 1e6 else f"{n:,}"


def why_not(m: ModelSizes, found: dict[str, int]) -> str | None:
    """Why wte is not this model's largest single piece, or None when it is."""
    largest = max(found, key=lambda k: found[k])
    if largest.startswith("wte"):
        return None
    if largest.startswith("wpe"):
        return (
            f"Here wpe outweighs wte: {m.position_rows:,} positions against only {m.vocab_size:,} tokens, "
            f"each a row of {m.d_model:,}. GPT-2's 50,257 tokens make wte its largest piece."
        )
    return (
        f"Here {largest.split(' (')[0]} outweighs wte: {m.vocab_size:,} tokens of {m.d_model:,} make a "
        "small table. GPT-2's 50,257 tokens make wte its largest piece."
    )


def panel(ax: Axes, m: ModelSizes) -> None:
    found = pieces(m)
    names = list(found)
    unit, said = (1e6, "millions") if max(found.values()) >= 1e6 else (1e3, "thousands")
    values = [found[k] / unit for k in names]
    colours = ["tab:red" if k.startswith("wte") else "tab:blue" for k in names]
    ax.barh(range(len(names)), values, color=colours, height=0.6)
    top = max(values) or 1.0
    for y, (v, n) in enumerate(zip(values, found.values(), strict=True)):
        ax.text(v + top * 0.02, y, count(n), va="center", fontsize=9)
    ax.set_yticks(range(len(names)), names, fontsize=9)
    ax.invert_yaxis()  # wte on top
    ax.set_xlim(0, top * 1.3)  # room for the last count, written beside its bar
    note = why_not(m, found)
    # the note under the scale, where no bar or count can be under it
    ax.set_xlabel(f"parameters ({said})" + ("" if note is None else "\n\n" + textwrap.fill(note, 60)))
    total = f"{m.total_params / 1e6:,.0f} M" if m.total_params >= 1e6 else f"{m.total_params:,}"
    ax.set_title(f"{_lines(m.name)}: {total} in all, wte {m.wte_share:.1%}", fontsize=10)


def figure(result: SizesResult) -> Figure:
    n = len(result.models)
    columns = min(n, 2)
    rows = math.ceil(n / columns)
    fig = new_figure(7.5 * columns, 0.6 + 3.2 * rows)
    for at, m in enumerate(result.models, 1):
        panel(fig.add_subplot(rows, columns, at), m)
    names = ", ".join(m.name for m in result.models)
    suptitle(fig, f"{names}: is wte (red) the largest single piece?")
    return fig
