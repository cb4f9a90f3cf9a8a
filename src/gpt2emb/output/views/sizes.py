"""The views of sizes and models."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.layout import (
    Matrix,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.results.sizes import ModelsResult, SizesResult


@view.register
def _(result: ModelsResult, dims: int | None) -> RenderableType:
    rows = [
        [
            m.name,
            m.family,
            ", ".join(m.aliases),
            f"{m.d_model:,}",
            f"{m.n_layer:,}",
            "-" if m.total_params is None else f"{m.total_params / 1e6:,.1f}M",
            "yes" if m.cached else "no",
        ]
        for m in result.models
    ]
    title = "named models (-m also takes any Hub repo or folder of a supported family)"
    return titled_table(title, "model~ family~ aliases d_model> layers> params> cached", rows)


_SIZE_ROW: dict[str, Any] = {  # label -> how a model's column shows it
    "family": lambda m: m.family,
    "vocab": lambda m: f"{m.vocab_size:,}",
    "d_model": lambda m: f"{m.d_model:,}",
    "positions": lambda m: f"{m.n_positions:,}" if m.position_rows or not m.family else "learned none",
    "position rows": lambda m: f"{m.position_rows:,}" if m.position_rows else "none",
    "layers": lambda m: f"{m.n_layer:,}",
    "heads": lambda m: f"{m.n_head:,}",
    "wte params": lambda m: f"{m.wte_params:,}",
    "wpe params": lambda m: f"{m.wpe_params:,}",
    "one block": lambda m: f"{m.block_params // m.n_layer:,}",
    "all blocks": lambda m: f"{m.block_params:,}",
    "output layer": lambda m: f"{m.output_params:,}" if m.output_params else "tied to wte",
    "total params": lambda m: f"{m.total_params:,}",
    "wte share": lambda m: f"{100 * m.wte_share:.1f}%",
}
_FORMULA_ROWS: tuple[str, ...] = (
    *("vocab", "d_model", "positions", "layers", "heads", "wte params", "wpe params", "one block"),
    *("all blocks", "total params", "wte share"),
)
# sizes -m: any family, counted from the headers (blocks are not told apart; rotary models have no wpe)
_COUNTED_ROWS: tuple[str, ...] = (
    *("family", "vocab", "d_model", "positions", "position rows", "layers", "heads", "wte params"),
    *("wpe params", "output layer", "total params", "wte share"),
)


@view.register
def _(result: SizesResult, dims: int | None) -> RenderableType:
    counted = result.source == "checkpoint"
    labels = _COUNTED_ROWS if counted else _FORMULA_ROWS
    rows = [[label, *(_SIZE_ROW[label](m) for m in result.models)] for label in labels]
    rows.append([f"wte+wpe MB {result.dtype}", *(f"{m.embeddings_mb:,.1f}" for m in result.models)])
    if counted:
        rows.append([f"all MB {result.dtype}", *(f"{m.total_mb:,.1f}" for m in result.models)])
    if any(m.verified is not None for m in result.models):
        rows.append(["checked on Hub", *("yes" if m.verified else "MISMATCH" for m in result.models)])
    title = (
        "Parameters counted from the checkpoint headers (no weights read)"
        if counted
        else "GPT-2 sizes: wte is the largest single piece in all four"
    )
    matrix = Matrix(
        title, ["_"], [r[:1] for r in rows], [f"{m.name}>" for m in result.models], [r[1:] for r in rows]
    )
    return Group(matrix, Text(MB_MEANS))


# the chapter's exercise 2 is worked by hand: a reader counting in MiB would get 313.0 for gpt2-xl, not 328.2
MB_MEANS = "MB: 10^6 bytes (a MiB, 2^20 bytes, is 1.048576 MB)"
