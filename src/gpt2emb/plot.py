"""Figures with matplotlib, an optional extra: pip install "gpt2emb[plot]"."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpt2emb.errors import UsageError, option


def check_available() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(f'{option("png")} needs matplotlib: pip install "gpt2emb[plot]"') from None


def positions_figure(
    matrix: np.ndarray, norms: np.ndarray, components: np.ndarray, model: str, path: str
) -> None:
    """Three panels: the cosine heatmap of all position rows, each row's norm, the first principal axes."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    fig, (heat, norm, pca) = plt.subplots(1, 3, figsize=(17, 5), gridspec_kw={"width_ratios": [1.1, 1, 1]})
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
    fig.tight_layout()
    out = Path(path)
    try:
        fig.savefig(out, dpi=110)
    except OSError as e:
        raise UsageError(f"cannot write {out}: {e.strerror}") from None
    except ValueError as e:  # a format matplotlib does not write (.xyz), or a NUL in the name
        raise UsageError(f"cannot write {str(out)!r}: {e}") from None
    finally:
        plt.close(fig)
