"""positions --figure (--png, its old name): three panels, the cosine heatmap of all position rows, each
row's norm, the first principal axes of wpe. A quantity that varies by less than FLAT of its size over the
positions is written as a number in its panel, not drawn: a line would show float rounding as variation."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure, suptitle

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FLAT = 1e-6  # relative: below it, what varies is rounding (float32 keeps about 7 digits)


def flat(values: np.ndarray, scale: float | None = None) -> bool:
    """Whether values vary by less than FLAT of their size (or of scale): rounding, not a change."""
    v = np.asarray(values, dtype=np.float64)
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return False
    size = scale if scale is not None else float(np.abs(finite).max())
    return bool(finite.max() - finite.min() <= FLAT * size)


def written(ax: Axes, said: str) -> None:
    """A panel that states its one value instead of drawing it."""
    ax.text(0.5, 0.5, said, transform=ax.transAxes, ha="center", va="center", fontsize=11, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def figure(matrix: np.ndarray, norms: np.ndarray, components: np.ndarray, model: str) -> Figure:
    fig = new_figure(17, 5)
    heat, norm, pca = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.1, 1, 1]})
    image = heat.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    heat.set(title="cosine similarity of position rows", xlabel="position", ylabel="position")
    fig.colorbar(image, ax=heat, fraction=0.046)
    positions = np.arange(len(norms))
    norm.set(title="norm of each position row")
    if flat(norms):
        value = float(np.mean(norms))
        written(
            norm,
            f"every row's norm is {value:.6g}\n(it varies by less than {FLAT:g} of it:\nrounding, not drawn)",
        )
    else:
        norm.plot(positions, norms)
        norm.set(xlabel="position", ylabel="L2 norm")
        norm.ticklabel_format(useOffset=False)
    pca.set(title="first principal components of wpe")
    scale = float(np.abs(components).max()) if components.size else 0.0
    drawn = [i for i in range(components.shape[1]) if not flat(components[:, i], scale)]
    for i in drawn:
        pca.plot(positions, components[:, i], label=f"PC{i + 1}")
    if drawn:
        pca.set(xlabel="position", ylabel="projection")
        pca.legend()
    else:
        written(pca, "every position projects alike:\nthe rows are one point")
    suptitle(fig, f"{model}: the learned position embedding wpe")
    return fig
