"""positions --png: three panels, the cosine heatmap of all position rows, each row's norm, the first
principal axes of wpe."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figure(matrix: np.ndarray, norms: np.ndarray, components: np.ndarray, model: str) -> Figure:
    fig = new_figure(17, 5)
    heat, norm, pca = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.1, 1, 1]})
    image = heat.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    heat.set(title="cosine similarity of position rows", xlabel="position", ylabel="position")
    fig.colorbar(image, ax=heat, fraction=0.046)
    positions = np.arange(len(norms))
    norm.plot(positions, norms)
    norm.set(title="norm of each position row", xlabel="position", ylabel="L2 norm")
    norm.ticklabel_format(useOffset=False)
    for i in range(components.shape[1]):
        pca.plot(positions, components[:, i], label=f"PC{i + 1}")
    pca.set(title="first principal components of wpe", xlabel="position", ylabel="projection")
    pca.legend()
    fig.suptitle(f"{model}: the learned position embedding wpe")
    return fig
