"""similarity --figure: the cosine matrix as a heatmap, each cell's value written in it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure
from gpt2emb.quoting import quote
from gpt2emb.results.similarity import SimilarityResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figure(result: SimilarityResult) -> Figure:
    matrix = np.array([[np.nan if x is None else x for x in row] for row in result.matrix], dtype=np.float64)
    n = len(matrix)
    side = min(3 + 0.6 * n, 30)
    fig = new_figure(side + 1.5, side)
    ax = fig.add_subplot()
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    names = [quote(item.word) for item in result.items]
    ax.set_xticks(range(n), names, rotation=45, ha="right")
    ax.set_yticks(range(n), names)
    if n <= 30:  # beyond, a cell is too small to hold its number
        for i in range(n):
            for j in range(n):
                value = matrix[i, j]
                dark = np.isfinite(value) and abs(value) > 0.6
                ax.text(
                    j,
                    i,
                    "-" if not np.isfinite(value) else f"{value:.2f}",
                    ha="center",
                    va="center",
                    color="white" if dark else "black",
                    fontsize=9,
                )
    fig.colorbar(image, ax=ax, label="cosine", fraction=0.046)
    fig.suptitle(f"{result.model}: how alike are these words' rows of wte? (cosine)")
    return fig
