"""The view of logits: the next token's scores, the two tables side by side (--through wte), the lens."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

from gpt2emb.output.layout import note_lines, num, titled_table
from gpt2emb.output.views import view
from gpt2emb.results.logits import LensLayer, LogitsResult, Score
from gpt2emb.tokens import quote as tok

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


def _score_cells(s: Score) -> list[str]:
    return [str(s.id), tok(s.token), num(s.logit), probability(s.probability)]


def _lens(result: LogitsResult, layers: tuple[LensLayer, ...]) -> RenderableType:
    final = result.top[0]
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
    norm = "the final layer norm"
    return titled_table(
        f"the logit lens: each layer's hidden state at position {result.at}, through {norm} and "
        f"{result.table}ᵀ (the last already has that norm)",
        ["layer", "top 5 (probability)", f"p({tok(final.token)})>", "rank>"],
        rows,
    )


@view.register
def _(result: LogitsResult, dims: int | None) -> RenderableType:
    text = result.text if len(result.text) <= MAX_TEXT_SHOWN else result.text[:MAX_TEXT_SHOWN] + "..."
    after = result.tokens[result.at]
    last = result.at == len(result.tokens) - 1
    where = "" if last else f", after position {result.at} ({tok(after.token)})"
    about = f"the next token after {tok(text)} in {result.model}{where}"
    parts: list[RenderableType] = []
    if result.through_wte is None:
        parts.append(
            titled_table(
                f"{about}: {_title(result.table, result.tied)}",
                ["#>", "id>", "token", "logit>", "probability>"],
                [[str(s.rank), *_score_cells(s)] for s in result.top],
            )
        )
    else:
        rows = [
            [str(a.rank), *_score_cells(a)[1:], *_score_cells(b)[1:]]
            for a, b in zip(result.top, result.through_wte, strict=True)
        ]
        parts.append(
            titled_table(
                f"{about}: {_title(result.table, False)} (its output layer, {result.stored_as}) beside "
                "h · wteᵀ (what tying would have given)",
                ["#>", f"{result.table}: token", "logit>", "p>", "wte: token", "logit>", "p>"],
                rows,
                caption=f"{result.overlap} of the {len(result.top)} tokens are in both lists",
            )
        )
    if result.layers is not None:
        parts.append(_lens(result, result.layers))
    parts += note_lines(list(result.notes))
    return Group(*parts)
