"""Take the screenshots of lab --html's page that docs/commands/lab.md shows: the page made from the tiny
example model (in the docs' workspace: ./tiny-gpt2, the fake Hub), shown whole by headless Chromium at 360 and
1280 CSS pixels wide (tests/browser.py), written to docs/img/lab-360.png and docs/img/lab-1280.png.

Pixels differ from one Chromium and one machine's fonts to another, so no test compares them (the browser
tests check the page itself); run by hand after changing the page, where chromium is installed:

    python scripts/gen_screenshots.py
"""

from __future__ import annotations

import os
from pathlib import Path

from gen_docs import DOCS, Workspace, invoke  # which puts tests/ (browser, fakehub) on the path

WIDTHS = (360, 1280)
COMMAND = ["lab", "-m", "./tiny-gpt2", "--html", "lab.html"]


def make(hub: object, folder: Path = DOCS / "img") -> list[Path]:
    import browser

    shots = []
    with Workspace(hub).opened() as space, browser.Browser() as chromium:
        out, code = invoke(COMMAND, dict(os.environ))
        if code != 0:
            raise RuntimeError(f"gpt2emb {' '.join(COMMAND)} failed ({code}): {out}")
        for width in WIDTHS:
            chromium.open(space.folder / "lab.html", width)
            shots.append(folder / f"lab-{width}.png")
            chromium.screenshot(shots[-1])
    return shots


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from fakehub import FakeHub

    hub = FakeHub().start()
    os.environ["HF_ENDPOINT"] = hub.url
    try:
        made = make(hub)
    finally:
        hub.stop()
    print("written:", ", ".join(str(p.relative_to(DOCS.parent)) for p in made))
