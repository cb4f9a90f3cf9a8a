"""context --figure: the cosine between the word's vectors in each pair of sentences, layer by layer;
layer 0 (the static row plus the position) marked."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure
from gpt2emb.results.text import ContextResult
from gpt2emb.tokens import quote

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figure(result: ContextResult) -> Figure:
    fig = new_figure(9, 5.5)
    ax = fig.add_subplot()
    layers = [layer.layer for layer in result.layers]
    said = [quote(s.text, 28) for s in result.sentences]
    for p, pair in enumerate(result.layers[0].pairs):
        found = [layer.pairs[p].cosine for layer in result.layers]
        cosines = np.array([np.nan if c is None else c for c in found], dtype=np.float64)
        ax.plot(
            layers,
            cosines,
            marker="o",
            label=f"{pair.a + 1} vs {pair.b + 1}: {said[pair.a]} / {said[pair.b]}",
        )
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
    ax.set(xlabel="layer (0: h0 = wte + wpe; last: the final hidden state)", ylabel="cosine", xticks=layers)
    ax.legend(fontsize=8, loc="best")
    fig.suptitle(
        f"{result.model}: does {quote(result.word)} mean the same in these sentences, layer by layer?"
    )
    return fig
