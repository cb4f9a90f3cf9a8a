"""vector --figure: each word's row as a strip of d coloured cells on one shared diverging scale, one strip
per word, stacked: the stripes two rows share show as columns of one colour; the title asks what the strips
answer, for one word or several."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure, suptitle
from gpt2emb.quoting import quote
from gpt2emb.results.vector import VectorResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def question(result: VectorResult, d: int) -> str:
    """The title: what the strips answer at a glance, for one word (which dimensions stand out) or several
    (whether they stand out in the same dimensions: a column of one colour across the strips)."""
    if len(result.items) == 1:
        word = result.items[0].word
        return f"{result.model}: which of the {d:,} dimensions of the row of wte for {word} stand out?"
    words = ", ".join(item.word for item in result.items[:6]) + (", ..." if len(result.items) > 6 else "")
    return (
        f"{result.model}: do the rows of wte for {words} stand out in the same dimensions? "
        "(a column of one colour down the strips)"
    )


def figure(result: VectorResult) -> Figure:
    rows = np.array([item.vector for item in result.items], dtype=np.float64)
    finite = rows[np.isfinite(rows)]
    top = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0
    fig = new_figure(11, 1.2 + 0.45 * len(rows))
    ax = fig.add_subplot()
    image = ax.imshow(rows, cmap="RdBu_r", vmin=-top, vmax=top, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(rows)), [quote(item.word) for item in result.items])
    ax.set_xlabel(f"dimension (0 to {rows.shape[1] - 1})")
    fig.colorbar(image, ax=ax, label="value", fraction=0.03, pad=0.01)
    suptitle(fig, question(result, rows.shape[1]))
    return fig
