"""neighbors --figure: each word and its k neighbours, placed by the first two principal components of
their rows, labelled as tokens (a leading space shows), each point's cosine to the word beside it; a panel
per word."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gpt2emb import measures, ops
from gpt2emb.choices import Pool
from gpt2emb.plot.canvas import new_figure
from gpt2emb.results.neighbors import NeighborsItem, NeighborsResult
from gpt2emb.tokens import quote

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from gpt2emb.core.open import Opened


def rows_of(o: Opened, item: NeighborsItem) -> np.ndarray:
    """The word's vector (its tokens' rows pooled, as the command pooled them), then each neighbour's row."""
    word = ops.pooled(np.asarray(o.model.wte[[t.id for t in item.tokens]], dtype=np.float32), Pool(item.pool))
    return np.vstack([word, np.asarray(o.model.wte[[n.id for n in item.neighbors]], dtype=np.float32)])


def figure(result: NeighborsResult, o: Opened) -> Figure:
    n = len(result.items)
    columns = min(n, 3)
    fig = new_figure(7 * columns, 6 * math.ceil(n / columns))
    for at, item in enumerate(result.items, 1):
        panel(fig.add_subplot(math.ceil(n / columns), columns, at), item, rows_of(o, item))
    words = ", ".join(item.word for item in result.items[:6]) + (", ..." if n > 6 else "")
    fig.suptitle(f"{result.model}: which tokens lie nearest to {words}? (cosine beside each)")
    return fig


def panel(ax: Axes, item: NeighborsItem, rows: np.ndarray) -> None:
    xy = measures.principal_components(rows, 2)
    colours = ["tab:red", *["tab:blue"] * (len(rows) - 1)]
    ax.scatter(xy[:, 0], xy[:, 1], c=colours, s=[90, *[30] * (len(rows) - 1)], zorder=2)
    labels = [
        f"{' + '.join(quote(t.token) for t in item.tokens)} (the word)",  # its tokens, as the neighbours are
        *(f"{quote(nb.token)} {nb.score:.3f}" for nb in item.neighbors),
    ]
    for (x, y), label in zip(xy, labels, strict=True):
        ax.annotate(label, (x, y), xytext=(5, 3), textcoords="offset points", fontsize=9)
    ax.set(
        title=f"{quote(item.word)} and its {len(item.neighbors)} nearest tokens", xlabel="PC1", ylabel="PC2"
    )
    ax.grid(alpha=0.3)
