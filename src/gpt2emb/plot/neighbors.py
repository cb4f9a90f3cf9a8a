"""neighbors --figure: each word and its k neighbours, placed by the first two principal components of
their rows, labelled as tokens (a leading space shows), each point's cosine to the word beside it; a panel
per word. The plane is a projection, and the figure says so: nearness on it is not cosine, the number
beside each label is (docs/commands/neighbors.md says why the plane is kept)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gpt2emb import measures, ops
from gpt2emb.choices import Pool
from gpt2emb.plot.canvas import new_figure, suptitle
from gpt2emb.plot.place import Job, place
from gpt2emb.results.neighbors import NeighborsItem, NeighborsResult
from gpt2emb.tokens import quote

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from gpt2emb.core.open import Opened

PROJECTION = (
    "The plane is a projection of these rows (their first two principal components): nearness on it is "
    "not cosine. The number beside each token is its cosine to the word."
)


def rows_of(o: Opened, item: NeighborsItem) -> np.ndarray:
    """The word's vector (its tokens' rows pooled, as the command pooled them), then each neighbour's row."""
    word = ops.pooled(np.asarray(o.model.wte[[t.id for t in item.tokens]], dtype=np.float32), Pool(item.pool))
    return np.vstack([word, np.asarray(o.model.wte[[n.id for n in item.neighbors]], dtype=np.float32)])


def figure(result: NeighborsResult, o: Opened) -> Figure:
    n = len(result.items)
    columns = min(n, 3)
    fig = new_figure(7 * columns, 6 * math.ceil(n / columns) + 0.4)
    jobs = [
        panel(fig.add_subplot(math.ceil(n / columns), columns, at), item, rows_of(o, item))
        for at, item in enumerate(result.items, 1)
    ]
    words = ", ".join(item.word for item in result.items[:6]) + (", ..." if n > 6 else "")
    suptitle(fig, f"{result.model}: which tokens lie nearest to {words}?")
    fig.supxlabel(PROJECTION, fontsize=9, wrap=True)
    place(fig, jobs, fontsize=9)
    return fig


def panel(ax: Axes, item: NeighborsItem, rows: np.ndarray) -> Job:
    """The panel of one word, drawn but for its labels: the labels to place, by their points."""
    xy = measures.principal_components(rows, 2)
    colours = ["tab:red", *["tab:blue"] * (len(rows) - 1)]
    ax.scatter(xy[:, 0], xy[:, 1], c=colours, s=[90, *[30] * (len(rows) - 1)], zorder=2)
    labels = [
        f"{' + '.join(quote(t.token) for t in item.tokens)} (the word)",  # its tokens, as the neighbours are
        *(f"{quote(nb.token)} {nb.score:.3f}" for nb in item.neighbors),
    ]
    ax.set(
        title=f"{quote(item.word)} and its {len(item.neighbors)} nearest tokens",
        xlabel="PC1 (projection)",
        ylabel="PC2 (projection)",
    )
    ax.margins(0.12)
    ax.grid(alpha=0.3)
    return ax, [(float(x), float(y)) for x, y in xy], labels
