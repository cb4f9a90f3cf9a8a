"""lab --html: the lab as one page. Each part: the question it answers, its table, its figure (inline SVG, as
--figure draws it for that part's command; tying has none) and one sentence reading the answer from the same
numbers. Every number of a table names its place in lab --json's document (data-json)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from gpt2emb.output.pages import beside, cell, figure_box, frame, number, table, text
from gpt2emb.output.views import DIMS
from gpt2emb.quoting import quote
from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.lab import LabPage, LabResult
from gpt2emb.results.sizes import ModelSizes, SizesResult


def tok(token: str) -> str:
    return f'<span class="tok">{text(quote(token))}</span>'


def num(x: float | None, source: str, digits: int = 4) -> str:
    return cell(number(x, digits), source, "num")


def whole(n: int, source: str | None) -> str:
    return cell(f"{n:,}", source, "num")


def page(p: LabPage) -> str:
    r = p.lab
    item = r.vector.items[0]
    word = item.word if item.word.strip() == item.word and item.word.isprintable() else quote(item.word)
    parts = [
        vector_part(r, word),
        neighbors_part(r, word),
        analogy_part(r),
        sizes_part(r.sizes),
        tying_part(r),
    ]
    model = "" if r.sizes.source == "formula" else f" -m {shlex.quote(p.source)}"  # as lab was given it
    commands = [f"vector {shlex.quote(item.word)}", f"neighbors {shlex.quote(item.word)}"]
    commands += [f"analogy {' '.join(t.word for t in r.analogy.terms)}", "sizes"]
    drawn = [
        None if svg is None else (svg, f"gpt2emb {command}{model} --figure FILE")
        for svg, command in zip(p.figures, [*commands, ""], strict=True)
    ]
    body = [header(p), *(section(n, *part, drawn[n - 1]) for n, part in enumerate(parts, 1))]
    return frame(f"The lab on {r.vector.model}: gpt2emb", "\n".join(body))


def header(p: LabPage) -> str:
    model = p.lab.vector.model
    if p.repo is None:
        where = f"the local folder {text(p.source)}, whose files' fingerprint is {text(p.commit)}"
    else:
        at = "" if p.revision == p.commit else f" at revision <b>{text(p.revision or 'main')}</b>"
        where = f"the Hub repo {text(p.repo)}{at}, commit <code>{text(p.commit)}</code>"
    return (
        f"<header><h1>The lab on {text(model)}</h1>\n"
        f'<p class="model">Model <b>{text(model)}</b>: {where}. Five questions the chapter asks of a '
        "model's embeddings, each answered from its tables with the numbers <code>gpt2emb lab --json</code> "
        "prints.</p></header>"
    )


def section(
    n: int, heading: str, question: str, content: str, answer: str, figure: tuple[str, str] | None
) -> str:
    """A part: figure is its SVG and the command line that draws it alone, or None."""
    drawn = figure is not None
    # a strip of cells (part 1's row) is read best the page's whole width wide, under its table; so is a
    # figure too wide to be read beside its tables in a wide window (the four GPT-2 sizes' panels)
    wide = n == 1 or (figure is not None and not beside(figure[0]))
    shown = (
        f'<figure id="figure-{n}">{figure_box(figure[0], f"figure-{n}", wide)}'
        f"<figcaption>As <code>{text(figure[1])}</code> draws it.</figcaption></figure>"
        if figure is not None
        else ""
    )
    layout = " drawn" + (" wide" if wide else "") if drawn else ""
    return (
        f'<section class="part" id="part-{n}" data-part="{n}" data-figure="{"yes" if drawn else "no"}">\n'
        f"<h2>{n}. {text(heading)}</h2>\n"
        f'<p class="question">{question}</p>\n'
        f'<div class="body{layout}"><div class="tables">{content}</div>{shown}</div>\n'
        f'<p class="answer">{answer}</p>\n</section>'
    )


def notes(said: tuple[str, ...] | list[str]) -> str:
    return "".join(f'<p class="note">{text(note)}</p>' for note in said if note)


Part = tuple[str, str, str, str]  # heading, question, content, answer


def vector_part(r: LabResult, word: str) -> Part:
    item = r.vector.items[0]
    at = "vector.items.0"
    stats = [num(getattr(item, f), f"{at}.{f}") for f in ("norm", "mean", "std", "min", "max")]
    tokens = " + ".join(f"{tok(t.token)} ({t.id})" for t in item.tokens)
    shown = item.vector[:DIMS]
    numbers = "".join(
        f'<li data-json="{at}.vector.{i}">{number(x, sign=True)}</li>' for i, x in enumerate(shown)
    )
    more = len(item.vector) - len(shown)
    full = f"gpt2emb vector {shlex.quote(item.word)} --full"
    content = (
        notes([item.note])
        + f"<p>{text(word)} in {text(r.vector.model)}: {tokens}</p>"
        + table(
            "the row's statistics",
            ["norm>", "mean>", "std>", "min>", "max>", "dims>"],
            [[*stats, whole(len(item.vector), None)]],
        )
        + f'<ul class="numbers" aria-label="the first {len(shown)} numbers of the row">{numbers}</ul>'
        + (f"<p>... and {more:,} more (<code>{text(full)}</code>)</p>" if more else "")
    )
    answer = (
        f"{text(word)} is {tokens}: a row of {len(item.vector):,} numbers, from {number(item.min)} to "
        f"{number(item.max)}, of length (norm) {number(item.norm)}."
    )
    question = f"Which numbers does {text(r.vector.model)} keep for {text(word)}?"
    return f"The first {DIMS} numbers of {word}'s row of wte", question, content, answer


def ranked_rows(ranked: Any, at: str, marked: Callable[[Any], bool] = lambda _: False) -> list[list[str]]:
    """A ranking's table rows (rank, token, id, cosine), each number tagged with its place at in lab --json;
    a token marked gets a * (an analogy's input)."""
    return [
        [
            whole(x.rank, f"{at}.{i}.rank"),
            f"<td>{tok(x.token)}{' *' if marked(x) else ''}</td>",
            whole(x.id, f"{at}.{i}.id"),
            num(x.score, f"{at}.{i}.score"),
        ]
        for i, x in enumerate(ranked)
    ]


def neighbors_part(r: LabResult, word: str) -> Part:
    item = r.neighbors.items[0]
    rows = ranked_rows(item.neighbors, "neighbors.items.0.neighbors")
    tokens = " + ".join(f"{quote(t.token)} ({t.id})" for t in item.tokens)
    caption = f"nearest to {tokens} in {r.neighbors.model}"
    content = notes(r.neighbors.notes) + table(caption, ["rank>", "token", "id>", "cosine>"], rows)
    if item.neighbors:
        first, last = item.neighbors[0], item.neighbors[-1]
        answer = f"The nearest token to {text(word)} is {tok(first.token)}, at cosine {number(first.score)}"
        answer += (
            f"; the last of the {len(item.neighbors):,}, {tok(last.token)}, is at {number(last.score)}."
            if len(item.neighbors) > 1
            else "."
        )
    else:
        answer = f"No token but {text(word)}'s own is there to rank."
    question = f"Which tokens' rows point most nearly the way {text(word)}'s does (by cosine)?"
    return f"The {len(item.neighbors):,} nearest tokens to {word}", question, content, answer


def ranking(a: AnalogyResult, key: str) -> str:
    rows = ranked_rows(a.results, f"{key}.results", marked=lambda x: x.input)
    kept = "inputs kept, marked *" if a.keep_inputs else "inputs left out"
    caption = f"{a.expression} in {a.model} ({a.method}, {kept})"
    return table(caption, ["rank>", "token", "id>", "cosine>"], rows)


def analogy_part(r: LabResult) -> Part:
    kept, left_out = r.analogy_kept, r.analogy
    at = "analogy.inputs"
    inputs = [
        [
            f"<td>{text(x.word)}</td>",
            f"<td>{tok(x.token)}</td>",
            whole(x.id, f"{at}.{i}.id"),
            whole(x.rank, f"{at}.{i}.rank"),
            num(x.score, f"{at}.{i}.score"),
        ]
        for i, x in enumerate(left_out.inputs)
    ]
    content = (
        notes(kept.notes)
        + ranking(kept, "analogy_kept")
        + notes(left_out.notes)
        + ranking(left_out, "analogy")
        + table(
            "where the inputs rank (among all tokens)", ["word", "token", "id>", "rank>", "cosine>"], inputs
        )
    )

    def first(a: AnalogyResult) -> str:
        if not a.results:
            return "no token"
        x = a.results[0]
        return f"{tok(x.token)}{' (an input)' if x.input else ''} at cosine {number(x.score)}"

    answer = f"With the inputs kept, the nearest token is {first(kept)}; left out, it is {first(left_out)}."
    expression = text(kept.expression)
    question = (
        f"Which token lies nearest to {expression}: one of the words it is made of, or, once those are "
        "left out, another?"
    )
    return f"{kept.expression}: the inputs kept, then left out", question, content, answer


Shown = Callable[[Any], str]
SIZE_ROWS: tuple[tuple[str, str, Shown], ...] = (  # a row's label, the field it shows, how it shows it
    ("family", "family", str),
    ("vocab", "vocab_size", "{:,}".format),
    ("d_model", "d_model", "{:,}".format),
    ("positions", "n_positions", "{:,}".format),
    ("layers", "n_layer", "{:,}".format),
    ("heads", "n_head", "{:,}".format),
    ("wte params", "wte_params", "{:,}".format),
    ("wpe params", "wpe_params", "{:,}".format),
    ("all blocks", "block_params", "{:,}".format),
    ("output layer", "output_params", "{:,}".format),
    ("total params", "total_params", "{:,}".format),
    ("wte share", "wte_share", "{:.1%}".format),
    ("wte+wpe MB", "embeddings_mb", "{:,.1f}".format),
    ("all MB", "total_mb", "{:,.1f}".format),
)


def size_cell(m: ModelSizes, i: int, field: str, shown: Shown) -> str:
    value = getattr(m, field)
    if field == "output_params" and not value:
        return "<td>tied to wte</td>"
    if value is None:
        return "<td>-</td>"
    return cell(text(shown(value)), f"sizes.models.{i}.{field}", "" if field == "family" else "num")


def sizes_part(s: SizesResult) -> Part:
    counted = s.source == "checkpoint"
    skip = {"block_params"} if counted else {"family", "output_params", "total_mb"}
    rows = [
        [
            f"<th>{text(label)}{' ' + s.dtype if label.endswith('MB') else ''}</th>",
            *(size_cell(m, i, field, shown) for i, m in enumerate(s.models)),
        ]
        for label, field, shown in SIZE_ROWS
        if field not in skip
    ]
    caption = (
        "Parameters counted from the checkpoint headers (no weights read)"
        if counted
        else "GPT-2 sizes: wte is the largest single piece in all four"
    )
    content = table(caption, ["", *(f"{m.name}>" for m in s.models)], rows) + (
        '<p class="note">MB: 10^6 bytes (a MiB, 2^20 bytes, is 1.048576 MB)</p>'
    )
    first, last = s.models[0], s.models[-1]
    if len(s.models) == 1:
        heading = f"{first.name}'s size and wte's share of it"
        question = f"How much of {text(first.name)} is its token table, wte?"
        answer = (
            f"wte holds {first.wte_params:,} of {text(first.name)}'s {first.total_params:,} parameters: "
            f"{first.wte_share:.1%}."
        )
    else:
        heading = "The four GPT-2 sizes and wte's share of each"
        question = "How much of each GPT-2 size is its token table, wte?"
        falling = all(a.wte_share > b.wte_share for a, b in zip(s.models, s.models[1:], strict=False))
        answer = (
            f"wte is {first.wte_share:.1%} of {text(first.name)}'s {first.total_params:,} parameters and "
            f"{last.wte_share:.1%} of {text(last.name)}'s {last.total_params:,}"
            + (": the larger the model, the smaller wte's share." if falling else ".")
        )
    return heading, question, content, answer


def tying_part(r: LabResult) -> Part:
    t = r.tying
    rows = [
        [
            f"<td>{text(c.name)}</td>",
            f"<td>{'yes' if c.passed else 'no'}</td>",
            f'<td class="wrap">{text(c.detail)}</td>',
        ]
        for c in t.checks
    ]
    verdict = "tied: the output layer reuses wte" if t.tied else "not tied"
    content = table(f"{t.model}: {verdict}", ["check", "", "detail"], rows)
    if t.tied:
        saved = f'<span data-json="tying.saved_params">{t.saved_params:,}</span>'
        content += f"<p>tying saves {saved} parameters (vocab x d_model)</p>"
        answer = (
            f"Yes: {text(t.model)}'s output layer is wte itself, so the model keeps one table, not two "
            f"({t.saved_params:,} parameters saved)."
        )
    else:
        answer = f"No: {text(t.model)}'s output layer keeps a table of its own."
    question = "Does the output layer, which scores every token, reuse wte or keep a table of its own?"
    return "The tying check: does the output layer reuse wte?", question, content, answer
