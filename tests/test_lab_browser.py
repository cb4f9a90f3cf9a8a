"""A real browser (cross-cutting): lab --html's page rendered by headless Chromium at 360 and 1280 px, with
screenshots; it must ask the network for nothing, show every figure it should, draw something (no blank
screenshot), not scroll sideways on a phone and use a wide window's width. Where no Chromium can run, these
tests skip, saying why (.ci/run installs Debian's chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import browser
from conftest import run_cli
from fakehub import FakeHub

pytest.importorskip("matplotlib")

# each part's section: its figures drawn (an <svg> of some size holding paths), its width, its table's and
# figure's left edges; and the page's own width against the window's
MEASURE = """(() => {
  const parts = [...document.querySelectorAll('section.part')].map(s => {
    const drawn = [...s.querySelectorAll('figure svg')].filter(svg => {
      const box = svg.getBoundingClientRect();
      return box.width > 150 && box.height > 40 && svg.querySelectorAll('path, use, image').length > 10;
    });
    const table = s.querySelector('table'), figure = s.querySelector('figure');
    return {part: Number(s.dataset.part), expected: s.dataset.figure === 'yes', drawn: drawn.length,
            table: table ? table.getBoundingClientRect().left : null,
            figure: figure ? figure.getBoundingClientRect().left : null};
  });
  // each figure: its smallest text in CSS pixels as drawn (its size in points, scaled as the svg is), whether
  // its box scrolls and whether the line saying so shows; each box that scrolls: whether a shadow cues it
  const figures = [...document.querySelectorAll('figure svg[data-smallest-text]')].map(svg => {
    const box = svg.parentElement, cue = svg.closest('figure').querySelector('.cue');
    return {id: svg.closest('figure').id,
            text: Number(svg.dataset.smallestText) * svg.getBoundingClientRect().width
                  / svg.viewBox.baseVal.width,
            scrolls: box.scrollWidth > box.clientWidth + 1,
            cue: cue !== null && getComputedStyle(cue).display !== 'none'};
  });
  const scrolling = [...document.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1
      && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).map(e => {
    const style = getComputedStyle(e);
    const figure = e.closest('figure');
    const named = figure ? figure.id : (e.querySelector('caption') || e).textContent;
    return {what: named.slice(0, 40), shadow: style.backgroundImage.includes('gradient')
            && style.backgroundAttachment.includes('local')};
  });
  const root = document.documentElement;
  return {parts, figures, scrolling, scroll: root.scrollWidth, window: root.clientWidth,
          main: document.querySelector('main').getBoundingClientRect().width};
})()"""


READABLE = 9  # CSS pixels: a figure's smallest text at any width


def blank(png: Path) -> str | None:
    """Why a screenshot shows nothing (one colour, or almost all of it the page's background), or None."""
    import matplotlib.image

    pixels = np.asarray(matplotlib.image.imread(png))[..., :3]
    background = pixels[0, 0]
    drawn = np.any(np.abs(pixels - background) > 0.05, axis=-1).mean()
    colours = len(np.unique(pixels.reshape(-1, 3)[::7], axis=0))
    if drawn < 0.01 or colours < 8:
        return f"{png.name} is blank: {drawn:.2%} of it drawn, {colours} colours"
    return None


def problems(b: browser.Browser, page: Path, width: int, shots: Path) -> list[str]:
    """What is wrong with page at width: each request it made but for itself, a figure missing (or one where
    none should be), a figure's text under READABLE pixels, a figure that scrolls with no line saying so (or
    one that says so and fits), a box that scrolls with no shadow at its edge, a sideways scroll at a phone's
    width, a narrow page in a wide window, a blank shot."""
    b.open(page, width)
    found = [f"asked for {url}" for url in b.requests if url != b.page_url and not url.startswith("data:")]
    seen = b.evaluate(MEASURE)
    for p in seen["parts"]:
        if p["drawn"] != (1 if p["expected"] else 0):
            found.append(f"part {p['part']} shows {p['drawn']} figure(s)")
    if not seen["parts"]:
        found.append("no parts")
    for f in seen["figures"]:
        if f["text"] < READABLE - 0.01:
            found.append(f"at {width} px {f['id']}'s smallest text is {f['text']:.1f} px")
        if f["scrolls"] != f["cue"]:
            state = "scrolls, its cue hidden" if f["scrolls"] else "fits, its cue shown"
            found.append(f"at {width} px {f['id']} {state}")
    for box in seen["scrolling"]:
        if not box["shadow"]:
            found.append(f"at {width} px {box['what']!r} scrolls with no shadow at its edge")
    if seen["scroll"] > seen["window"]:
        found.append(f"at {width} px the page scrolls sideways: {seen['scroll']} px wide")
    if width >= 1280:
        if seen["main"] < 0.9 * width:
            found.append(f"at {width} px the page uses {seen['main']:.0f} px")
        beside = [p for p in seen["parts"] if p["expected"] and p["figure"] is not None]
        if not any(p["figure"] > p["table"] + 100 for p in beside):
            found.append(f"at {width} px no figure stands beside its table")
    shot = shots / f"{page.stem}-{width}.png"
    shot_width, _ = b.screenshot(shot)
    if shot_width != width:
        found.append(f"the screenshot is {shot_width} px wide, not {width}")
    said = blank(shot)
    if said is not None:
        found.append(said)
    return found


@pytest.fixture(scope="module")
def chromium() -> Iterator[browser.Browser]:
    """One browser for the module's tests; none here: they skip, saying why."""
    if browser.find() is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium)")
    try:
        b = browser.Browser()
    except (OSError, RuntimeError) as e:
        pytest.skip(f"chromium does not start headless here: {e}")
    with b:
        yield b


def test_the_lab_page_in_a_real_browser(hub: FakeHub, tmp_path: Path, chromium: browser.Browser) -> None:
    page = tmp_path / "lab.html"
    result = run_cli("lab", "--html", str(page))
    assert result.exit_code == 0, result.output + result.stderr
    for width in (360, 1280):
        assert problems(chromium, page, width, tmp_path) == [], width
        seen = chromium.evaluate(MEASURE)
        assert len(seen["figures"]) == 4
        if width == 360:  # a phone: the figures and the wide tables scroll, each saying so
            assert all(f["scrolls"] for f in seen["figures"]) and len(seen["scrolling"]) > 4
        else:
            assert not any(f["scrolls"] for f in seen["figures"]), seen["figures"]
        assert chromium.requests == [chromium.page_url]  # the page itself was loaded, and nothing else


def test_the_checks_catch_a_broken_page(tmp_path: Path, chromium: browser.Browser) -> None:
    """Each check fails on a page made to break it: a font from a server, a part without its figure, a table
    wider than a phone, a blank page."""
    broken = tmp_path / "broken.html"
    broken.write_text(
        '<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width">'
        "<style>@font-face{font-family:x;src:url(http://127.0.0.1:9/x.woff)}body{font-family:x}</style>"
        '</head><body><main><section class="part" data-part="1" data-figure="yes"><h2>1. A part</h2>'
        '<table style="width:900px"><tr><td>wide</td></tr></table>'
        '<div style="overflow-x:auto"><table style="width:900px"><caption>quiet</caption></table></div>'
        '<figure id="small"><div><svg data-smallest-text="8" viewBox="0 0 800 400" style="width:100%">'
        '<rect width="800" height="400" fill="#fff"/></svg></div><p class="cue">scroll</p></figure>'
        "</section></main></body></html>"
    )
    found = problems(chromium, broken, 360, tmp_path)
    assert any(f.startswith("asked for http://127.0.0.1:9/x.woff") for f in found), found
    assert "part 1 shows 0 figure(s)" in found
    assert any("scrolls sideways" in f for f in found), found
    assert any("is blank" in f for f in found), found
    assert any("small's smallest text is" in f for f in found), found
    assert any("'quiet' scrolls with no shadow" in f for f in found), found
    assert any("small fits, its cue shown" in f for f in found), found
    wide = problems(chromium, broken, 1280, tmp_path)
    assert any("no figure stands beside" in f for f in wide), wide
