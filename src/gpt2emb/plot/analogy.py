"""analogy --figure: the input words, the point their signed sum reaches and the top answers, on the plane of
the first two principal components of those rows; for A - B + C, the displacements B -> C and A -> the first
answer drawn as arrows. The inputs are drawn (and marked) even when the ranking leaves them out."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb import measures, ops, sums
from gpt2emb.choices import Method, Pool
from gpt2emb.plot.canvas import new_figure, suptitle
from gpt2emb.plot.place import place
from gpt2emb.quoting import quote
from gpt2emb.results.analogy import AnalogyResult

PROJECTION = (
    "The plane is a projection of these rows (their first two principal components); the number beside "
    "each answer is its score."
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpt2emb.core.open import Opened


def rows_of(result: AnalogyResult, o: Opened, pool: Pool | str) -> tuple[list[str], np.ndarray]:
    """The input words (in the order the sum names them) and the rows drawn: each input word's vector (its
    tokens' rows pooled), the point the signed sum reaches, each answer's row. For 3cosadd and 3cosmul,
    which score unit rows, all as unit rows and the point the sum of the signed unit vectors."""
    ids: dict[str, list[int]] = {}
    for given in result.inputs:
        ids.setdefault(given.word, []).append(given.id)
    wte = o.model.wte
    vector = {w: ops.pooled(np.asarray(wte[i], dtype=np.float32), Pool(pool)) for w, i in ids.items()}
    words = list(dict.fromkeys(t.word for t in result.terms))
    answers = [np.asarray(wte[r.id], dtype=np.float64) for r in result.results]
    unit = Method(result.method) is not Method.add
    signed = [(1 if t.sign == "+" else -1, vector[t.word]) for t in result.terms]
    point = sums.analogy_vector(signed, Method.cosadd if unit else Method.add)
    rows = np.vstack([*(vector[w] for w in words), point, *answers]).astype(np.float64)
    if unit:
        lengths = np.linalg.norm(rows, axis=1, keepdims=True)
        rows[: len(words)] /= np.where(lengths[: len(words)] > 0, lengths[: len(words)], 1)
        rows[len(words) + 1 :] /= np.where(lengths[len(words) + 1 :] > 0, lengths[len(words) + 1 :], 1)
    return words, rows


def figure(result: AnalogyResult, o: Opened, pool: Pool | str) -> Figure:
    words, rows = rows_of(result, o, pool)
    xy = measures.principal_components(rows, 2)
    n = len(words)
    fig = new_figure(9, 7)
    ax = fig.add_subplot()
    ax.scatter(xy[:n, 0], xy[:n, 1], marker="s", s=70, color="tab:green", label="input", zorder=3)
    ax.scatter(xy[n, 0], xy[n, 1], marker="X", s=110, color="tab:red", label=result.expression, zorder=3)
    ax.scatter(xy[n + 1 :, 0], xy[n + 1 :, 1], s=35, color="tab:blue", label="answers (cosine)", zorder=2)
    labels = []
    for word in words:  # each word as its tokens, as the answers are
        tokens = " + ".join(dict.fromkeys(quote(g.token) for g in result.inputs if g.word == word))
        labels.append(f"{tokens} (input)")
    for r in result.results:
        labels.append(f"{quote(r.token)} {r.score:.3f}" + (" *" if r.input else ""))
    labels.insert(n, "")  # the point the sum reaches: the legend names it
    points = [(float(x), float(y)) for x, y in xy]
    chapters = [t.sign for t in result.terms] == ["+", "-", "+"] and n == 3  # A - B + C, three words
    if chapters and result.results:  # B -> C beside A -> the first answer: the same displacement, if it holds
        for start, end, colour in ((xy[1], xy[2], "tab:green"), (xy[0], xy[n + 1], "tab:blue")):
            ax.annotate(
                "",
                xy=tuple(end),
                xytext=tuple(start),
                arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.5},
            )
    space = "unit rows" if Method(result.method) is not Method.add else "rows"
    ax.set(xlabel=f"PC1 of these {space}", ylabel=f"PC2 of these {space}")
    ax.legend(
        fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0
    )  # beside: no label under it
    ax.margins(0.12)
    ax.grid(alpha=0.3)
    suptitle(fig, f"{result.model}: {result.expression} = ? ({result.method})")
    fig.supxlabel(PROJECTION, fontsize=9)
    place(fig, [(ax, points, labels)], fontsize=9)
    return fig
