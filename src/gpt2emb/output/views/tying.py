"""The view of tying: the checks, the output layer against wte, the gradient that reaches wte by each path."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.layout import (
    MAX_PIECES_SHOWN,
    maybe,
    mb,
    note_lines,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.tying import Comparison, GradientResult, TyingResult

_MARK = {True: Text("yes", style="green"), False: Text("no", style="red")}


@view.register
def _(result: TyingResult, dims: int | None) -> RenderableType:
    verdict = "tied: the output layer reuses wte" if result.tied else "not tied"
    rows = [[c.name, _MARK[c.passed], c.detail] for c in result.checks]
    saved = f"tying saves {result.saved_params:,} parameters (vocab x d_model)" if result.tied else ""
    checks = titled_table(f"{result.model}: {verdict}", "check _ detail", rows, caption=saved)
    parts: list[RenderableType] = [checks]
    if result.gradient is not None:
        parts.append(_gradient(result.gradient))
    if result.comparison is not None:
        parts.append(_comparison(result.comparison))
    return Group(*parts)


def _comparison(c: Comparison) -> RenderableType:
    read = mb(c.bytes_read) if c.bytes_read >= 100_000 else f"{c.bytes_read:,} bytes"
    which = (
        f"a seeded sample of {c.rows:,} of its {c.total_rows:,} rows (the table is over 1 GB; {read} read)"
        if c.sampled
        else f"all {c.rows:,} rows ({read} read)"
    )
    rows = [
        ["row i with wte row i", maybe(c.mean_cosine_matching)],
        ["row i with a random other wte row", maybe(c.mean_cosine_random)],
    ]
    title = f"the output layer ({c.output}) against wte: {which}"
    return Group(Text(""), titled_table(title, "_ mean_cosine>", rows))


def _gradient(g: GradientResult) -> RenderableType:
    tokens = " ".join(tok(t.token) for t in g.tokens[:MAX_PIECES_SHOWN])
    tokens += f" ... ({len(g.tokens):,} tokens)" if len(g.tokens) > MAX_PIECES_SHOWN else ""
    vocab = f"{g.table_rows:,}"
    rows = [
        [Text("input lookup (wte[ids])"), f"{g.input_path.norm:.6g}", f"{g.input_path.rows:,} of {vocab}"],
        [
            Text("output layer (lm_head = wte)"),
            f"{g.output_path.norm:.6g}",
            f"{g.output_path.rows:,} of {vocab}",
        ],
        [Text("tied model (both uses)"), f"{g.tied_norm:.6g}", ""],
    ]
    title = f"gradient of the loss on {tokens} (mean next-token cross-entropy {g.loss:.4f}) reaching wte"
    difference = "-" if g.relative_difference is None else f"{g.relative_difference:.1e}"
    return Group(
        Text(""),
        titled_table(title, "path norm> rows>", rows),
        Text(
            f"cosine of the two on the {g.shared_rows:,} row{'' if g.shared_rows == 1 else 's'} both touch: "
            f"{maybe(g.cosine_on_shared_rows)}"
        ),
        Text.assemble(
            "input + output = the tied model's gradient (to 1e-5 relative): ",
            _MARK[g.sum_matches_tied],
            f" (relative difference {difference})",
        ),
        *note_lines(list(g.notes)),
    )
