"""Figures with matplotlib, an optional extra: pip install "gpt2emb[plot]"; each written to its file as
targets.py writes every file: checked, beside it, then renamed onto it."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from gpt2emb import targets
from gpt2emb.errors import UsageError, option, spelt


def check_available() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(f'{option("png")} needs matplotlib: pip install "gpt2emb[plot]"') from None


def figure_target(path: str | Path) -> targets.Target:
    """Where --png's figure goes, and how a refusal names it."""
    writes = f"{spelt('positions --png', 'position_map')} writes a regular file; give a file's path, such as"
    return targets.Target(
        Path(path),
        option("png", path),
        f"{writes} {option('png', 'wpe.png')}",
        folder_fix=f"{writes} {option('png', Path(path) / 'wpe.png')}",  # a folder: a file in it, likely
    )


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
    # the format its extension names, as matplotlib reads it from a path; none: PNG, and the file is still
    # the one named (given a path, matplotlib would write wpe.png for wpe, a file no check has seen)
    fmt = Path(path).suffix[1:] or "png"

    def fill(f: BinaryIO) -> None:
        fig.savefig(f, format=fmt, dpi=110)

    try:
        targets.write([(figure_target(path), fill)])
    except OSError as e:
        raise UsageError(
            f"cannot write {option('png', path)}: {e.strerror or e}; {targets.WRITABLE}"
        ) from None
    except ValueError as e:  # a format matplotlib does not write (.xyz)
        raise UsageError(f"cannot write {option('png', path)}: {e}") from None
    finally:
        plt.close(fig)
