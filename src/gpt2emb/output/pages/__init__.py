"""Pages: a result as one self-contained HTML file a browser opens offline (lab --html). Here what a page
shares: its frame and style, its tables and numbers, and the writing of its file. No rich, nothing loaded
from outside: no script, font, stylesheet or image but what the file holds."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from gpt2emb import targets
from gpt2emb.errors import UsageError, option

# One column on a phone; from 960 px a part's tables beside its figure. Nothing is wider than the page but a
# table or a figure, which scrolls in its own box: a shadow at the edge where more lies (the backgrounds that
# scroll with the content cover it at the ends), and under a figure a line saying so.
STYLE = """
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:#1d1d1f;background:#fff}
main{margin:0 auto;padding:12px 16px 32px;max-width:1800px}
h1{font-size:1.5rem;margin:.4em 0}
h2{font-size:1.2rem;margin:.2em 0 .4em}
h1,h2,p,li,figcaption{overflow-wrap:anywhere}
.model{color:#444}
.part{border-top:2px solid #e3e3e3;margin-top:28px;padding-top:8px}
.question{font-style:italic;margin:.2em 0 .8em}
.answer{font-weight:600;background:#f1f6fd;border-left:4px solid #1f77b4;padding:6px 10px}
.note{color:#555;font-size:.9rem}
.body{display:grid;grid-template-columns:minmax(0,1fr);gap:8px 32px;align-items:start}
@media (min-width:960px){.body.drawn:not(.wide){grid-template-columns:minmax(0,2fr) minmax(0,3fr)}}
@media (max-width:480px){main{padding:8px 10px 24px}th,td{padding:3px 6px}}
.scroll{overflow-x:auto;max-width:100%;
background:linear-gradient(to right,#fff 30%,#fff0) left/40px 100% no-repeat local,
linear-gradient(to left,#fff 30%,#fff0) right/40px 100% no-repeat local,
radial-gradient(farthest-side at 0 50%,#0006,#0000) left/16px 100% no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,#0006,#0000) right/16px 100% no-repeat scroll}
.cue{display:none;color:#555;font-size:.85rem;margin:2px 0}
table{border-collapse:collapse;margin:4px 0 16px;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:2px 0 4px;white-space:normal}
th,td{padding:3px 10px;border-bottom:1px solid #e8e8e8;text-align:left;white-space:nowrap;vertical-align:top}
th{border-bottom:2px solid #ccc}
.num{text-align:right}
td.wrap{white-space:normal;min-width:14em}
.tok{font-family:ui-monospace,"Cascadia Mono",Consolas,Menlo,monospace;white-space:pre}
ul.numbers{list-style:none;padding:0;margin:0 0 12px;display:flex;flex-wrap:wrap;gap:4px 14px;
font-family:ui-monospace,"Cascadia Mono",Consolas,Menlo,monospace;font-variant-numeric:tabular-nums}
figure{margin:0;min-width:0}
figure svg{display:block;width:100%;height:auto}
figcaption{color:#555;font-size:.9rem}
footer{margin-top:32px;color:#666;font-size:.85rem}
"""

READABLE = 9  # CSS pixels: a figure is never drawn so narrow that its smallest text is smaller
PADDING, GAP = 32, 32  # main's padding (both sides, at its widest) and the gap between a part's columns
TWO_COLUMNS = 960  # from this width a part's figure stands beside its tables, in 3/5 of the width

FIXED_BELOW = 1e6  # past this a number is shown as 1.2346e+07, as the tables in a terminal show it


def text(value: str) -> str:
    return html.escape(value, quote=True)


def number(x: float | None, digits: int = 4, sign: bool = False) -> str:
    """A number as the terminal's tables show it: fixed to digits, -0.0000 as 0.0000; None as '-'."""
    if x is None:
        return "-"
    plus = "+" if sign else ""
    if abs(x) >= FIXED_BELOW and math.isfinite(x):
        return f"{x:{plus}.{digits}e}"
    shown = f"{x:{plus}.{digits}f}"
    return shown[1:] if shown.startswith("-") and not float(shown) and not sign else shown


def cell(shown: str, source: str | None = None, kind: str = "") -> str:
    """A table cell; source: where its value is in the command's --json document (a dotted path), so that a
    reader (or a test) finds each number of the page in the JSON."""
    at = f' data-json="{text(source)}"' if source is not None else ""
    css = f' class="{kind}"' if kind else ""
    return f"<td{css}{at}>{shown}</td>"


def table(caption: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table in a box of its own that scrolls sideways when it is wider than the page. head: column names,
    a name ending in > right-aligned (numbers); rows: cells made by cell()."""
    heads = "".join(
        f'<th class="num">{text(h[:-1])}</th>' if h.endswith(">") else f"<th>{text(h)}</th>" for h in head
    )
    body = "".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    return (
        f'<div class="scroll"><table><caption>{text(caption)}</caption>'
        f"<thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def least_width(svg: str) -> int:
    """The fewest CSS pixels a figure (an <svg> from plot.svg) may be drawn across: its smallest text is then
    READABLE pixels high."""
    view = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ', svg)
    size = re.search(r'data-smallest-text="([\d.]+)"', svg)
    width = float(view.group(1)) if view else 0.0
    return math.ceil(width * READABLE / float(size.group(1))) if size and float(size.group(1)) > 0 else 0


def beside(svg: str, window: int = 1280) -> bool:
    """Whether a figure, beside its tables in 3/5 of a window this wide, keeps its text readable."""
    return least_width(svg) <= (window - PADDING - GAP) * 3 / 5


def figure_box(svg: str, ident: str, wide: bool = False) -> str:
    """A figure (an <svg> from plot.svg) in a box that scrolls sideways, never narrower than keeps its
    smallest text READABLE pixels high, with a line under it saying it scrolls, shown at the widths where it
    does (the figure's own rules, by ident: the id of the element holding it). wide: the figure has the
    page's whole width at every size (not beside its tables)."""
    least = least_width(svg)
    shown = svg.replace("<svg", f'<svg style="min-width:{least}px"', 1)
    cue = f"#{ident} .cue{{display:block}}"
    rules = f"@media (max-width:{least + PADDING}px){{{cue}}}"
    holds = math.ceil(least * 5 / 3) + PADDING + GAP  # the window's width at which 3/5 of it holds it
    if not wide and holds >= TWO_COLUMNS:
        rules += f"@media (min-width:{TWO_COLUMNS}px) and (max-width:{holds}px){{{cue}}}"
    return (
        f'<style>{rules}</style><div class="scroll">{shown}</div>'
        '<p class="cue">The figure is wider than the page: scroll it sideways &rarr;</p>'
    )


def frame(title: str, body: str) -> str:
    """The whole file: one page in UTF-8, readable at a phone's width, its style inside it."""
    made = f"Made by gpt2emb {text(version('gpt2emb'))}. Everything this page shows is inside this file."
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}\n"
        f"<footer>{made}</footer>\n</main>\n</body>\n</html>\n"
    )


def target(path: str | Path, name: str = "html", example: str = "lab.html") -> targets.Target:
    writes = f"{option(name)} writes a regular file; give a file's path, such as"
    return targets.Target(
        Path(path),
        option(name, path),
        f"{writes} {option(name, example)}",
        folder_fix=f"{writes} {option(name, Path(path) / example)}",  # a folder: a file in it, likely
    )


def check(path: str, name: str = "html", example: str = "lab.html") -> str:
    """A page's file, checked before any model is opened: a name, and nothing but a regular file (or
    nothing) at the path; the path with ~ expanded."""
    if not path.strip():
        raise UsageError(f"{option(name)} needs a file name, such as {option(name, example)}")
    given = target(path, name, example)
    real = targets.user_file(path, given.said, given.folder_fix or given.fix)
    target(real, name, example).real()  # a device, FIFO, folder or what gpt2emb reads: refused now
    return str(real)


def write(page: str, path: str, name: str = "html", example: str = "lab.html") -> None:
    """The page written as every file of gpt2emb is (targets.py): checked, beside it, then renamed."""
    targets.save(target(path, name, example), lambda f: f.write(page.encode("utf-8")))
