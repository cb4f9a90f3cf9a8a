"""Figures with matplotlib, an optional extra: pip install "gpt2emb[plot]". One module per figure, each
drawing from a command's result (and the rows it was computed from); here what they share: the checks of a
figure's file, made before any model is opened, and the writing of it, as targets.py writes every file:
checked, beside it, then renamed onto it. Nothing here imports matplotlib until a figure is drawn."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from gpt2emb import kept, targets
from gpt2emb.errors import UsageError, option, spelt

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

FORMATS = (".png", ".svg", ".pdf")  # what --figure writes, by its file's extension


def check_available(name: str = "png") -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(f'{option(name)} needs matplotlib: pip install "gpt2emb[plot]"') from None


def figure_target(path: str | Path, name: str = "png", example: str = "wpe.png") -> targets.Target:
    """Where a figure goes (--png, --figure), and how a refusal names it."""
    command = spelt("positions --png", "position_map") if name == "png" else option(name)
    writes = f"{command} writes a regular file; give a file's path, such as"
    return targets.Target(
        Path(path),
        option(name, path),
        f"{writes} {option(name, example)}",
        folder_fix=f"{writes} {option(name, Path(path) / example)}",  # a folder: a file in it, likely
    )


def check_figure(path: str) -> str:
    """--figure's file, checked before any model is opened: nothing gpt2emb reads (whatever its extension),
    a format by its extension, matplotlib there, and nothing but a regular file (or nothing) at the path."""
    if not path.strip():
        raise UsageError(f"{option('figure')} needs a file name, such as {option('figure', 'king.png')}")
    suffix = Path(path).suffix.lower()
    example = f"figure{suffix if suffix in FORMATS else '.png'}"
    given = figure_target(path, "figure", example)
    real = targets.user_file(path, given.said, given.folder_fix or given.fix)
    target = figure_target(real, "figure", example)
    kept.check(real, target.said)  # before the extension: what gpt2emb reads is refused in one way
    if suffix not in FORMATS:
        given_suffix = f"{suffix}" if suffix else "no extension"
        raise UsageError(
            f"{option('figure', path)} has {given_suffix}: a figure is written as .png, .svg or .pdf, "
            "named by its file's extension"
        )
    check_available("figure")
    target.real()  # a device, FIFO or folder: refused now
    return str(real)


_Result = TypeVar("_Result")


def draw(stem: str, result: _Result, path: str, *rows: Any) -> _Result:
    """The figure of a command's result (gpt2emb/plot/STEM.py draws it, from the result and the rows it
    was computed from), written to path; the result, naming the figure's file."""
    module = importlib.import_module(f"gpt2emb.plot.{stem}")
    with literal():
        save(module.figure(result, *rows), path, "figure")
    return dataclasses.replace(result, figure=path)  # type: ignore[type-var]


def save(fig: Figure, path: str, name: str = "png") -> None:
    """Write fig to path, in the format its extension names (none: PNG; the file is still the one named,
    where matplotlib, given a path, would write wpe.png for wpe, a file no check has seen)."""
    fmt = Path(path).suffix[1:].lower() or "png"
    formats = fig.canvas.get_supported_filetypes()
    if fmt not in formats:  # said before anything is written; "cannot write" is said of nothing else
        raise UsageError(
            f"cannot write {option(name, path)}: matplotlib writes no .{fmt} file; name it .png, .svg or .pdf"
        )
    targets.save(figure_target(path, name), lambda f: _print(fig, f, fmt))


# Every text a figure draws is drawn as typed: a word, a token, a model's name or an expression may hold $,
# which matplotlib reads as the start of its mathtext (and a matplotlibrc's usetex hands to LaTeX). Both are
# read from rcParams as each text is made, a tick's label as late as the figure is written: the figure is
# made and written within literal().
LITERAL: dict[RcKeyType, Any] = {"text.parse_math": False, "text.usetex": False}


@contextlib.contextmanager
def literal() -> Iterator[None]:
    """Within it, every text a figure makes is drawn as it is (see LITERAL), and a figure too small for its
    texts is drawn quietly. A text too long for its figure (an expression of 25 words in analogy's legend)
    leaves matplotlib no room to lay the panels out: it draws them where they stand, and says so to stderr
    with its own source line, each time the figure is drawn (place.py draws it to measure the labels, before
    it is written); the figure is written all the same."""
    import matplotlib

    with matplotlib.rc_context(LITERAL), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "constrained_layout not applied", UserWarning)
        yield


def _print(fig: Figure, f: BinaryIO, fmt: str) -> None:
    import matplotlib

    # no date in an SVG or a PDF: the same figure makes the same file; an SVG's ids made alike on every run,
    # its text drawn as paths (no font asked of the reader's machine, whatever a matplotlibrc says)
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    rc: dict[RcKeyType, Any] = {"svg.hashsalt": "gpt2emb", "svg.fonttype": "path", **LITERAL}
    with matplotlib.rc_context(rc):
        fig.savefig(f, format=fmt, dpi=110, metadata=metadata)


def svg(stem: str, result: Any, *rows: Any, prefix: str = "") -> str:
    """The figure --figure draws for a command's result (gpt2emb/plot/STEM.py), as an <svg> element for a
    page to hold inline (lab --html): no XML prolog, each id (and each reference to one) given prefix, so
    that several figures on one page never share an id. The root carries data-smallest-text, the size in
    points of the smallest text drawn: a page keeps the figure wide enough to read it (its text is paths)."""
    from matplotlib.text import Text

    module = importlib.import_module(f"gpt2emb.plot.{stem}")
    buffer = io.BytesIO()
    with literal():
        fig = module.figure(result, *rows)
        _print(fig, buffer, "svg")
    sizes = [float(t.get_fontsize()) for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    text = buffer.getvalue().decode("utf-8")
    text = text[text.index("<svg") :]
    text = text.replace("<svg", f'<svg data-smallest-text="{min(sizes, default=10):g}"', 1)
    if prefix:
        text = re.sub(r'(\bid="|xlink:href="#|href="#|url\(#)', rf"\1{prefix}", text)
    return text


def positions_figure(
    matrix: Any, norms: Any, components: Any, model: str, path: str, name: str = "figure"
) -> None:
    """positions --figure (--png, its old name): see plot/positions.py."""
    from gpt2emb.plot import positions

    with literal():
        save(positions.figure(matrix, norms, components, model), path, name)
