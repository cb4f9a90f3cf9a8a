"""Draw the figures of the docs into docs/img/, from the tiny example model, with what each drew beside it.

A command page's ```sh line `gpt2emb ... --figure NAME.svg` is run (in the docs' workspace: ./tiny-gpt2, the
fake Hub) with docs/img/NAME.svg in place of NAME.svg; docs/img/NAME.json holds the data the figure drew,
read back from its matplotlib artists (tests/drawn.py), a big image as a digest (kept).
tests/test_figures.py draws each again and compares that data, not the bytes, so it holds on any CPU.
gen_docs.py calls this; alone:

    python scripts/gen_figures.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from gen_docs import BLOCK, DOCS, Workspace, invoke, sh_commands, words_of

IMG = DOCS / "img"


def figure_lines(text: str) -> list[tuple[list[str], str]]:
    """A page's commands that draw a figure its text shows (../img/NAME), each with NAME."""
    found = []
    for m in BLOCK.finditer(text):
        if m.group(1) != "sh":
            continue
        for command in sh_commands(m.group(2)):
            words = words_of(command)
            if "--figure" in words and f"../img/{(name := words[words.index('--figure') + 1])}" in text:
                found.append((words, name))
    return found


def pages() -> list[Path]:
    return sorted((DOCS / "commands").glob("*.md"))


def draw(words: list[str], target: Path) -> dict[str, Any]:
    """Run one figure's command with target in place of its file; what its figure drew."""
    from drawn import captured, drawn

    args = list(words[1:])
    args[args.index("--figure") + 1] = str(target)
    with captured() as figures:
        out, code = invoke(args, dict(os.environ))
    if code != 0 or len(figures) != 1:
        raise RuntimeError(f"{' '.join(words)} failed ({code}): {out}")
    return drawn(figures[0])


def rounded(value: Any) -> Any:
    """The data with 7 significant digits: what a test compares, to a tolerance, and a smaller file."""
    if isinstance(value, float):
        return float(f"{value:.7g}")
    if isinstance(value, list):
        return [rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


SIDE = 32  # an image wider or taller than this is kept as a digest (positions' heatmap: 1,024 x 1,024)


def digest(image: list[Any]) -> Any:
    """A big image kept small: its shape, the sum of each row and of each column, the number of blank
    cells and every STEP-th cell of every STEP-th row (the picture at SIDE cells a side). A change of any one
    cell beyond rounding moves its row's and its column's sum, so comparing digests still notices it; the
    whole 1,024 x 1,024 matrix kept 19 MB in git for that. A small image is kept whole."""
    from drawn import plain

    cells = np.array(image, dtype=np.float64)  # a blank cell, None, as NaN
    if cells.ndim != 2 or max(cells.shape) <= SIDE:
        return image
    step = -(-max(cells.shape) // SIDE)
    blank = np.isnan(cells)
    return {
        "shape": list(cells.shape),
        "step": step,
        "blank": int(blank.sum()),
        "row_sums": np.nansum(cells, axis=1).tolist(),
        "column_sums": np.nansum(cells, axis=0).tolist(),
        "cells": plain(cells[::step, ::step]),
    }


def kept(data: dict[str, Any]) -> dict[str, Any]:
    """What NAME.json keeps of a figure's drawn data, and what the tests compare: each panel's big images
    as digests, every number to 7 significant digits."""
    panels = [{**p, "images": [digest(im) for im in p["images"]]} for p in data["panels"]]
    small: dict[str, Any] = rounded({**data, "panels": panels})
    return small


def same_data(shown: Any, made: Any, key: str = "") -> bool:
    """Two figures' data alike: the same texts, numbers within 1e-4 (relative or absolute: another CPU's
    rounding), a histogram's counts within 4 in all (a cosine on a bin's edge may fall either way)."""
    if key == "steps":
        return len(shown) == len(made) and all(
            len(a) == len(b) and sum(abs(x - y) for x, y in zip(a, b, strict=True)) <= 4
            for a, b in zip(shown, made, strict=True)
        )
    if isinstance(shown, dict) and isinstance(made, dict):
        return shown.keys() == made.keys() and all(same_data(shown[k], made[k], k) for k in shown)
    if isinstance(shown, list) and isinstance(made, list):
        return len(shown) == len(made) and all(same_data(a, b, key) for a, b in zip(shown, made, strict=True))
    if isinstance(shown, float | int) and isinstance(made, float | int):
        return abs(shown - made) <= 1e-4 * max(1.0, abs(shown))
    return bool(shown == made)


def text_of(data: dict[str, Any]) -> str:
    """NAME.json's text: indented, but each list of plain numbers on one line (a line's points, a row of
    cells), not one number a line."""

    def one_line(m: re.Match[str]) -> str:
        return re.sub(r"\s+", " ", m.group(0)).replace("[ ", "[").replace(" ]", "]")

    return re.sub(r"\[[^\[\]{}\"]*\]", one_line, json.dumps(data, indent=1)) + "\n"


def make(hub: Any, folder: Path = IMG, only: str | None = None) -> dict[str, dict[str, Any]]:
    """Draw every page's figure (or the one named only) into folder, NAME.json beside NAME; their data."""
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    for page in pages():
        lines = [(w, n) for w, n in figure_lines(page.read_text(encoding="utf-8")) if only in (None, n)]
        if not lines:
            continue
        with Workspace(hub).opened():
            for words, name in lines:
                data = kept(draw(words, folder / name))
                (folder / name).with_suffix(".json").write_text(text_of(data))
                made[name] = data
    return made


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from fakehub import FakeHub

    hub = FakeHub().start()
    os.environ["HF_ENDPOINT"] = hub.url
    try:
        names = sorted(make(hub))
    finally:
        hub.stop()
    print(f"{len(names)} figures drawn into {IMG.relative_to(DOCS.parent)}: {', '.join(names)}")
