"""geometry --figure: three histograms of cosines (token pairs, position pairs, token against position),
with what random directions in d dimensions give drawn over each."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure
from gpt2emb.results.geometry import GeometryResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpt2emb.core.open import Opened

SAMPLE = 2048  # token rows at most (drawn at random, seed 0): 2 million pairs, not GPT-2's 1.3 billion
EDGES = np.linspace(-1.0, 1.0, 201)  # bins of 0.01


def sample(n: int) -> np.ndarray:
    """The token rows the figure uses: all of them, or SAMPLE drawn at random (seed 0), in order."""
    if n <= SAMPLE:
        return np.arange(n)
    chosen: np.ndarray = np.sort(np.random.default_rng(0).choice(n, SAMPLE, replace=False))
    return chosen


def units(rows: np.ndarray) -> np.ndarray:
    """The rows with a direction (not zeros, finite) as float64 unit vectors."""
    x = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1)
    kept = (norms > 0) & np.isfinite(norms)
    unit: np.ndarray = x[kept] / norms[kept, None]
    return unit


def histograms(o: Opened) -> dict[str, tuple[np.ndarray, int]]:
    """Each panel's title, and its counts over EDGES with how many pairs they count: each pair of distinct
    token rows, of distinct position rows, every token row with every position row (rows of zeros, which
    have no direction, left out)."""
    tokens = sample(len(o.model.wte))
    u = units(o.model.wte[tokens])
    said = "all" if len(tokens) == len(o.model.wte) else f"{len(tokens):,} drawn at random"
    found = {f"token pairs ({said} tokens)": (u @ u.T)[np.triu_indices(len(u), 1)]}
    if o.model.shape.position_table:
        p = units(o.model.wpe)
        found["position pairs (all positions)"] = (p @ p.T)[np.triu_indices(len(p), 1)]
        found[f"token against position ({said} tokens)"] = (u @ p.T).ravel()
    return {title: (np.histogram(np.clip(c, -1, 1), EDGES)[0], len(c)) for title, c in found.items()}


def random_density(c: np.ndarray, d: int) -> np.ndarray:
    """The density of the cosine of two independent random directions in d dimensions:
    Gamma(d/2) / (sqrt(pi) Gamma((d-1)/2)) (1 - c^2)^((d-3)/2)."""
    log_scale = math.lgamma(d / 2) - math.lgamma((d - 1) / 2) - 0.5 * math.log(math.pi)
    density: np.ndarray = np.exp(log_scale + (d - 3) / 2 * np.log1p(-(c * c)))
    return density


def figure(result: GeometryResult, o: Opened) -> Figure:
    panels = histograms(o)
    d = result.d_model
    fig = new_figure(6 * len(panels), 4.8)
    width = EDGES[1] - EDGES[0]
    for ax, (title, (counts, pairs)) in zip(
        fig.subplots(1, len(panels), squeeze=False)[0], panels.items(), strict=True
    ):
        ax.stairs(counts, EDGES, fill=True, alpha=0.7, label=f"{pairs:,} pairs")
        used = np.flatnonzero(counts)
        c = np.linspace(-0.998, 0.998, 401)  # where the density is a number (d = 2: not at ±1)
        if d >= 2:
            ax.plot(
                c,
                pairs * width * random_density(c, d),
                color="black",
                lw=1,
                label=f"random directions, d = {d:,}",
            )
        spread = 4 / math.sqrt(d)
        low = min(EDGES[used[0]] if len(used) else 0.0, -spread)
        high = max(EDGES[used[-1] + 1] if len(used) else 0.0, spread)
        ax.set(title=title, xlabel="cosine", ylabel="pairs per bin of 0.01", xlim=(low - 0.02, high + 0.02))
        ax.legend(fontsize=8)
    fig.suptitle(f"{result.model}: are its rows as near orthogonal as random directions in {d:,} dimensions?")
    return fig
