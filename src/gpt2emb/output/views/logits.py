"""The view of logits: the next token's scores, the two tables side by side (--through wte), the lens."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

from gpt2emb.output.layout import note_lines, num, titled_table
from gpt2emb.output.views import view
from gpt2emb.quoting import quote as tok
from gpt2emb.results.logits import Head, LensLayer, LogitsResult, MaskScores, Score

MAX_TEXT_SHOWN = 60


def probability(p: float) -> str:
    """A probability in four decimals, a small one in two significant digits (never a row of zeros)."""
    return f"{p:.4f}" if p >= 1e-4 or p == 0 else f"{p:.1e}"


class Entries:
    """Short texts (a token and its probability) laid out in lines as wide as the cell allows, each entry
    whole: rich would wrap at any space, inside a token's quotes too."""

    def __init__(self, entries: list[str], gap: int = 2) -> None:
        self.entries, self.gap = entries, gap

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widths = [cell_len(e) for e in self.entries]
        return Measurement(max(widths, default=0), sum(widths) + self.gap * max(0, len(widths) - 1))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line: list[str] = []
        for entry in self.entries:
            wider = cell_len((" " * self.gap).join([*line, entry]))
            if line and wider > options.max_width:
                yield Segment((" " * self.gap).join(line))
                yield Segment.line()
                line = []
            line.append(entry)
        if line:
            yield Segment((" " * self.gap).join(line))
            yield Segment.line()


def _title(table: str, tied: bool) -> str:
    return f"h · {table}ᵀ" + (" (the output layer is wte)" if tied else "")


def _head(head: Head, table: str) -> str:
    """A masked head's tensors in the order they apply, as its tables' titles name them."""
    return f"{head.dense}, {head.activation}, {head.norm}, then · {table}ᵀ + {head.bias}"


def _score_cells(s: Score) -> list[str]:
    return [str(s.id), tok(s.token), num(s.logit), probability(s.probability)]


def _lens(result: LogitsResult, at: int, final: Score, layers: tuple[LensLayer, ...]) -> RenderableType:
    last = len(layers) - 1
    rows = [
        [
            "0 (h0)" if x.layer == 0 else f"{x.layer} (last)" if x.layer == last else str(x.layer),
            Entries([f"{tok(s.token)} {probability(s.probability)}" for s in x.top]),
            probability(x.final_probability),
            str(x.final_rank),
        ]
        for x in layers
    ]
    if result.head is not None:
        through = (
            f"through the head ({_head(result.head, result.table)}); no final layer norm: the model has none"
        )
    else:
        through = f"through the final layer norm and {result.table}ᵀ (the last already has that norm)"
    return titled_table(
        f"the logit lens: each layer's hidden state at position {at}, {through}",
        ["layer", "top 5 (probability)", f"p({tok(final.token)})>", "rank>"],
        rows,
    )


def _scores_table(about: str, result: LogitsResult, top: tuple[Score, ...]) -> RenderableType:
    if result.head is not None:
        decoder = " (the decoder is wte)" if result.tied else f" (its decoder, {result.stored_as})"
        how = f"the head: {_head(result.head, result.table)}{decoder}"
    else:
        how = _title(result.table, result.tied)
    return titled_table(
        f"{about}: {how}",
        ["#>", "id>", "token", "logit>", "probability>"],
        [[str(s.rank), *_score_cells(s)] for s in top],
    )


def _masks(result: LogitsResult, text: str, masks: tuple[MaskScores, ...]) -> list[RenderableType]:
    """A masked model's tables: each position scored (each mask, in order), and its lens."""
    parts: list[RenderableType] = []
    for n, mask in enumerate(masks, 1):
        token = tok(result.tokens[mask.at].token)
        which = f"mask {n} of {len(masks)}: " if len(masks) > 1 else ""
        about = f"{which}the token at position {mask.at} ({token}) of {tok(text)} in {result.model}"
        if n == 1 and result.through_wte is not None:
            parts.append(_side_by_side(about, result))
        else:
            parts.append(_scores_table(about, result, mask.top))
        if mask.layers is not None:
            parts.append(_lens(result, mask.at, mask.top[0], mask.layers))
    return parts


def _side_by_side(about: str, result: LogitsResult) -> RenderableType:
    """--through wte on an untied model: its output layer's list beside wte's."""
    rows = [
        [str(a.rank), *_score_cells(a)[1:], *_score_cells(b)[1:]]
        for a, b in zip(result.top, result.through_wte or (), strict=True)
    ]
    return titled_table(
        f"{about}: {_title(result.table, False)} (its output layer, {result.stored_as}) beside "
        "h · wteᵀ (what tying would have given)",
        ["#>", f"{result.table}: token", "logit>", "p>", "wte: token", "logit>", "p>"],
        rows,
        caption=f"{result.overlap} of the {len(result.top)} tokens are in both lists",
    )


@view.register
def _(result: LogitsResult, dims: int | None) -> RenderableType:
    text = result.text if len(result.text) <= MAX_TEXT_SHOWN else result.text[:MAX_TEXT_SHOWN] + "..."
    parts: list[RenderableType] = []
    if result.masks is not None:
        parts += _masks(result, text, result.masks)
    else:
        after = result.tokens[result.at]
        last = result.at == len(result.tokens) - 1
        where = "" if last else f", after position {result.at} ({tok(after.token)})"
        about = f"the next token after {tok(text)} in {result.model}{where}"
        if result.through_wte is None:
            parts.append(_scores_table(about, result, result.top))
        else:
            parts.append(_side_by_side(about, result))
        if result.layers is not None:
            parts.append(_lens(result, result.at, result.top[0], result.layers))
    parts += note_lines(list(result.notes))
    return Group(*parts)
