"""neighbors --figure: each word and its k neighbours, placed by the first two principal components of
their rows, labelled as tokens (a leading space shows), each point's cosine to the word beside it; a panel
per word. The plane is a projection, and the figure says so: nearness on it is not cosine, the number
beside each label is (docs/commands/neighbors.md says why the plane is kept)."""

from __future__ import annotations

import math
from textwrap import fill
from typing import TYPE_CHECKING

import numpy as np

from gpt2emb import measures, ops
from gpt2emb.choices import Pool
from gpt2emb.plot.canvas import new_figure, suptitle
from gpt2emb.plot.place import Job, place
from gpt2emb.quoting import quote
from gpt2emb.results.compare import SideBySideResult
from gpt2emb.results.neighbors import NeighborsItem, NeighborsResult

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


def figure(result: NeighborsResult | SideBySideResult, o: Opened | list[Opened]) -> Figure:
    if isinstance(result, SideBySideResult):
        return side_by_side(result, o if isinstance(o, list) else [o])
    one = o[0] if isinstance(o, list) else o
    n = len(result.items)
    columns = min(n, 3)
    fig = new_figure(7 * columns, 6 * math.ceil(n / columns) + 0.4)
    jobs = [
        panel(fig.add_subplot(math.ceil(n / columns), columns, at), item, rows_of(one, item))
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


def side_by_side(result: SideBySideResult, opened: list[Opened]) -> Figure:
    """Several models' neighbours of the same words: a row of panels per word, a column per model, each
    panel its model's own plane (two models' planes share no axes: compare the lists, not the places)."""
    models = [r for r in result.results if isinstance(r, NeighborsResult)]
    words = len(models[0].items)
    fig = new_figure(6.5 * len(models), 6 * words + 0.6)
    jobs = []
    for row in range(words):
        for column, (r, o) in enumerate(zip(models, opened, strict=True)):
            ax = fig.add_subplot(words, len(models), row * len(models) + column + 1)
            item = r.items[row]
            if not item.tokens:  # a word this model lacks: its panel says why
                ax.set_axis_off()
                ax.set_title(f"{r.model}: no {quote(item.word)}")
                ax.text(0.5, 0.5, fill(item.note, 40), ha="center", va="center", transform=ax.transAxes)
                continue
            jobs.append(panel(ax, item, rows_of(o, item)))
            ax.set_title(f"{r.model}: {ax.get_title()}")
    asked = ", ".join(item.word for item in models[0].items[:6]) + (", ..." if words > 6 else "")
    suptitle(fig, f"which tokens lie nearest to {asked} in {' and '.join(result.models)}?")
    fig.supxlabel(f"{PROJECTION} Each panel is its own model's plane.", fontsize=9, wrap=True)
    place(fig, jobs, fontsize=9)
    return fig
