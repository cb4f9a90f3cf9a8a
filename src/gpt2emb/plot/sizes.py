"""sizes --figure: one stacked bar per model, its parameters by part (wte, wpe, the blocks, the final
norm; counted from a checkpoint: wte, wpe, a separate output layer, the rest), wte's share beside its bar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpt2emb.plot.canvas import new_figure
from gpt2emb.results.sizes import ModelSizes, SizesResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

NAME_LINE = 28  # characters of a model's name under its bar, a line: about the 2.2 inches a bar has


def _lines(name: str) -> str:
    """A model's name as its bar's label: a long one (a folder's path) on lines of NAME_LINE characters,
    so that the label fits under its bar and leaves the panel its room."""
    return "\n".join(name[i : i + NAME_LINE] for i in range(0, len(name), NAME_LINE)) or name


COLOURS = {"wte": "tab:red", "wpe": "tab:orange", "output layer": "tab:purple"}


def parts(m: ModelSizes) -> dict[str, int]:
    """A model's parameters by part, in millions of the bar's order: the formula's four parts, or what a
    checkpoint's headers tell apart."""
    if m.block_params is not None and m.final_ln_params is not None:
        return {
            "wte": m.wte_params,
            "wpe": m.wpe_params,
            f"the {m.n_layer} blocks": m.block_params,
            "final layer norm": m.final_ln_params,
        }
    counted = {"wte": m.wte_params, "wpe": m.wpe_params, "output layer": m.output_params}
    return {**counted, "the rest": m.total_params - sum(counted.values())}


def figure(result: SizesResult) -> Figure:
    fig = new_figure(max(8.0, 3 + 2.2 * len(result.models)), 6)
    ax = fig.add_subplot()
    for x, m in enumerate(result.models):
        bottom = 0.0
        for name, count in parts(m).items():
            if count == 0 and name != "wte":  # no position table, a tied output layer: no part to show
                continue
            label = "the blocks" if name.startswith("the ") and name.endswith("blocks") else name
            colour = COLOURS.get(label, "tab:blue" if label == "the blocks" else "tab:grey")
            millions = count / 1e6
            ax.bar(x, millions, bottom=bottom, color=colour, label=label if x == 0 else None, width=0.6)
            if name == "wte":  # beside its bar: a small share leaves no room on it
                ax.text(
                    x + 0.32,
                    bottom + millions / 2,
                    f"wte {m.wte_share:.1%}",
                    ha="left",
                    va="center",
                    color=colour,
                    fontsize=10,
                    fontweight="bold",
                )
            bottom += millions
        total = f"{m.total_params / 1e6:,.0f} M" if m.total_params >= 1e6 else f"{m.total_params:,}"
        ax.text(x, bottom, total, ha="center", va="bottom", fontsize=9)
    ax.set_xticks(range(len(result.models)), [_lines(m.name) for m in result.models])
    ax.set_xlim(-0.6, len(result.models) - 0.4 + 0.5)  # room for the last bar's share, written beside it
    ax.set_ylabel("parameters (millions)")
    ax.legend(loc="upper left", fontsize=9)
    names = ", ".join(m.name for m in result.models)
    fig.suptitle(f"{names}: where are the parameters? (wte's share beside its bar)")
    return fig
