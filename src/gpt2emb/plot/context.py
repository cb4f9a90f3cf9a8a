"""context --figure: the cosine between the word's vectors in each pair of sentences, layer by layer;
layer 0 (the static row plus the position) marked. The y axis is the whole scale (from 0), so a small change
looks small; lines that coincide each keep a marker and dash of their own, and the legend says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure, suptitle
from gpt2emb.quoting import quote
from gpt2emb.results.text import ContextResult

MARKERS = ("o", "s", "^", "D", "v", "P")
DASHES = ("-", "--", ":", "-.")
SAME = 5e-4  # two pairs' cosines this close at every layer (equal to 3 decimals) draw one line on any scale

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figure(result: ContextResult) -> Figure:
    fig = new_figure(9, 5.5)
    ax = fig.add_subplot()
    layers = [layer.layer for layer in result.layers]
    said = [quote(s.text, 28) for s in result.sentences]
    drawn: list[tuple[str, np.ndarray]] = []
    lowest = 0.0
    for p, pair in enumerate(result.layers[0].pairs):
        found = [layer.pairs[p].cosine for layer in result.layers]
        cosines = np.array([np.nan if c is None else c for c in found], dtype=np.float64)
        name = f"{pair.a + 1} vs {pair.b + 1}"
        # a line equal to one drawn before would hide under it: each pair its own marker and dash, smaller
        # each time, and the legend says which lines coincide
        same = [other for other, line in drawn if np.allclose(line, cosines, atol=SAME, equal_nan=True)]
        ax.plot(
            layers,
            cosines,
            marker=MARKERS[p % len(MARKERS)],
            markersize=max(9 - 2 * p, 3),
            linestyle=DASHES[p % len(DASHES)],
            label=f"{name}: {said[pair.a]} / {said[pair.b]}"
            + (f" (= {', '.join(same)} to 3 decimals)" if same else ""),
        )
        drawn.append((name, cosines))
        if np.isfinite(cosines).any():
            lowest = min(lowest, float(np.nanmin(cosines)))
    ax.axvline(0, color="grey", linestyle=":", linewidth=1)
    ax.annotate(
        "layer 0: wte + wpe\n(the static row plus the position)",
        (0, 0.02),
        xycoords=("data", "axes fraction"),
        xytext=(6, 0),
        textcoords="offset points",
        color="grey",
        fontsize=8,
    )
    ax.set(
        xlabel="layer (0: h0 = wte + wpe; last: the final hidden state)",
        ylabel="cosine (the whole scale, up to 1)",
        xticks=layers,
        ylim=(lowest - 0.05 if lowest < 0 else 0.0, 1.05),
    )
    ax.legend(
        fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.14), borderaxespad=0
    )  # under: no line under it
    suptitle(
        fig, f"{result.model}: does {quote(result.word)} mean the same in these sentences, layer by layer?"
    )
    return fig
