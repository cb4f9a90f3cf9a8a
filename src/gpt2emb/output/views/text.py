"""The views of input (a text's h0) and context (a word's vectors, layer by layer)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gpt2emb.output.layout import (
    Matrix,
    maybe,
    note_lines,
    num,
    signed_cell,
    titled_table,
)
from gpt2emb.output.views import view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.text import ContextResult, InputResult


@view.register
def _(result: ContextResult, dims: int | None) -> RenderableType:
    word = " + ".join(tok(t.token) for t in result.word_tokens)
    sentences = [
        [
            str(n),
            Text(" ".join(f"[{tok(t.token)}]" if t.position in s.at else tok(t.token) for t in s.tokens)),
            " ".join(str(p) for p in s.at),
        ]
        for n, s in enumerate(result.sentences, 1)
    ]
    last = len(result.layers) - 1
    pairs = [f"{p.a + 1} vs {p.b + 1}>" for p in result.layers[0].pairs]
    statics = [f"{n} vs wte>" for n in range(1, len(result.sentences) + 1)]
    rows = [
        [
            "0 (h0)" if x.layer == 0 else f"{x.layer} (last)" if x.layer == last else str(x.layer),
            *(maybe(p.cosine) for p in x.pairs),
            *(maybe(c) for c in x.static),
        ]
        for x in result.layers
    ]
    undefined = any(p.cosine is None for x in result.layers for p in x.pairs) or any(
        c is None for x in result.layers for c in x.static
    )
    notes = [*result.notes, "- is a vector of zeros: it has no direction, so no cosine" if undefined else ""]
    return Group(
        titled_table(
            f"{word} in {result.model}: the sentences, as tokens (the word's in [ ])",
            "_> tokens at>",
            sentences,
        ),
        Matrix(
            f"cosine of {word}'s vectors, between sentences and with its static row (wte), layer by layer",
            ["layer"],
            [r[:1] for r in rows],
            [*pairs, *statics],
            [r[1:] for r in rows],
        ),
        *note_lines(notes),
    )


def _span(n: int, offset: int = 0) -> str:
    return str(offset) if n == 1 else f"{offset}..{offset + n - 1}"


MAX_TEXT_SHOWN = 60


@view.register
def _(result: InputResult, dims: int | None) -> RenderableType:
    n, d = result.n_tokens, result.d_model
    positions = result.n_positions > 0  # a rotary model has no position table: h0 = wte[ids]
    total = f"wte[ids] ({n}, {d})"
    total += f" + wpe[{_span(n, result.row_offset)}] ({n}, {d})" if positions else ""
    total += f" + type[0] ({d},)" if result.type_row else ""
    shapes = f"LayerNorm({total}) = h0 ({n}, {d})" if result.layer_norm else f"{total} = h0 ({n}, {d})"
    text = result.text if len(result.text) <= MAX_TEXT_SHOWN else result.text[:MAX_TEXT_SHOWN] + "..."
    plural = "token" if result.text_tokens == 1 else "tokens"
    about = f"{tok(text)} in {result.model}: {result.text_tokens:,} {plural}, as typed"
    # the rows of wpe are in the line of shapes (RoBERTa: wpe[2..n+1])
    columns = ["pos>", "id>", "token", "|wte|>", "|wpe|>", "|h0|>", "cos(wte, wpe)>"]
    rows = [
        [str(t.position), str(t.id), tok(t.token), num(t.wte_norm), maybe(t.wpe_norm), num(t.h0_norm),
         maybe(t.cos_wte_wpe)]
        for t in result.tokens
    ]  # fmt: skip
    if not positions:
        columns = [c for c in columns if "wpe" not in c]
        rows = [[*row[:4], row[5]] for row in rows]
    if result.layer_norm:  # the sum before the layer norm, beside h0
        columns.insert(5, "|sum|>")
        for row, t in zip(rows, result.tokens, strict=True):
            row.insert(5, num(t.sum_norm))
    parts: list[RenderableType] = [
        *note_lines(list(result.notes)),
        Text(shapes, style="bold"),
        titled_table(about, columns, rows),
    ]
    if result.h0 is not None:
        width = len(str(n - 1))
        parts.append(Text("h0, every number:", style="bold"))
        parts += [
            Text(f"{p:>{width}} [{', '.join(map(signed_cell, row))}]") for p, row in enumerate(result.h0)
        ]
    return Group(*parts)
