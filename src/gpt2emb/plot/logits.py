"""logits --figure: the logit lens as a grid, layers (h0 at the bottom) by the text's last positions, each
cell the top next token at that layer and position, coloured by its probability (a masked model: positions
around the one scored, each cell the token its head puts there). Every text is drawn as typed: matplotlib's
mathtext is off for each (a `$` stays a `$`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpt2emb.plot.canvas import new_figure, suptitle
from gpt2emb.quoting import quote
from gpt2emb.results.logits import LogitsResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CELL_CHARACTERS = 10  # a token shown in a cell, quotes included: a longer one is cut, with "…"
CELL_WIDTH, CELL_HEIGHT = 1.0, 0.42  # inches: 10 characters of 8 points fit one cell with room to spare


def shown(token: str) -> str:
    """A token as a cell (or a tick) shows it: quoted, cut to CELL_CHARACTERS (--json has it whole)."""
    text = quote(token)
    return text if len(text) <= CELL_CHARACTERS else text[: CELL_CHARACTERS - 1] + "…"


def probabilities(result: LogitsResult) -> np.ndarray:
    """The grid's colours: (layers, positions), layer 0 first."""
    grid = result.grid or ()
    return np.array([[c.probability for c in column.cells] for column in grid], dtype=np.float64).T


def figure(result: LogitsResult) -> Figure:
    grid = result.grid or ()
    values = probabilities(result)
    n_layers, n_positions = values.shape
    fig = new_figure(CELL_WIDTH * n_positions + 3.2, max(3.6, CELL_HEIGHT * n_layers + 2.2))
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap="viridis", vmin=0.0, vmax=1.0, origin="lower", aspect="auto")
    for x, column in enumerate(grid):
        for cell in column.cells:
            dark = values[cell.layer, x] < 0.6  # viridis is dark below about 0.6: white text there
            ax.text(
                x,
                cell.layer,
                shown(cell.token),
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
                parse_math=False,
            )
    last = n_layers - 1
    ax.set_yticks(
        range(n_layers),
        ["0 (h0)" if n == 0 else f"{n} (last)" if n == last else str(n) for n in range(n_layers)],
        parse_math=False,
    )
    ax.set_xticks(
        range(n_positions),
        [f"{shown(c.token)}\n{c.position}" for c in grid],
        fontsize=8,
        parse_math=False,
    )
    filled = "the token the head puts there" if result.masked else "the next token it predicts"
    ax.set_xlabel(f"the text's token at each position (the cell: {filled})", parse_math=False)
    ax.set_ylabel("layer", parse_math=False)
    fig.colorbar(image, ax=ax, label="probability of the top token", shrink=0.8)
    which = "" if result.masked else "last "
    positions = f"its {which}{n_positions} positions" if n_positions > 1 else "its one position"
    if result.masked:
        what, where = "fill in", f"its head (· {result.table}ᵀ + bias)"
    else:
        what, where = "predict next", f"{result.table}ᵀ"
    suptitle(
        fig,
        f"{result.model}: what each layer would {what}, read through {where} (the logit lens), "
        f"at {positions}",
    )
    return fig
