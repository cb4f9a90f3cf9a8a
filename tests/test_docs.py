"""The README and docs/: every example runs and prints what the page shows, every command has its page, every
relative link resolves, and the README stays short."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from gen_docs import DOCS, README, commands, pages, regenerate, same_output  # noqa: E402


def test_same_output_tolerates_rounding_and_padding_but_not_a_change() -> None:
    shown = '  1   " cats"   290   0.9889\nbuilt in 0.03 s, entry 45c60437f6df'
    assert same_output(shown, '  1   " cats"   290    0.9890\nbuilt in 1.20 s, entry 0123456789ab')
    assert not same_output(shown, shown.replace("0.9889", "0.9899"))  # past 1e-3
    assert not same_output(shown, shown.replace("290", "291"))  # an id is exact
    assert not same_output(shown, shown.replace("cats", "dogs"))
    assert same_output("(relative difference 2.3e-08)", "(relative difference 2.9e-08)")  # noise, as a whole
    assert not same_output("2.3e-08", "2.3e+08")


RUNS = re.compile(r"```(console|sh|python|pycon)\n|<!-- help:|`gpt2emb ")
PAGES = [p for p in pages() if RUNS.search(p.read_text())]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_example_runs_and_prints_what_the_page_shows(page: Path, hub: Any) -> None:
    """Each page made again (its --help parts, every console example's output, its sh, python and inline
    examples run)
    is the page as committed, within the tolerance above; each example exits as the page says (0, or the code
    an `echo $?` after it shows: gen_docs refuses a failing console example without one)."""
    failed: list[str] = []
    ran: list[str] = []

    def seen(kind: str, command: str, code: int) -> None:
        ran.append(command)
        if kind != "console" and code != 0:
            failed.append(f"{command}: exit {code}")

    made = regenerate(page, hub, seen)
    assert failed == [], f"{page.name}: examples failed: {failed}"
    parts = zip(page.read_text(encoding="utf-8").split("\n```"), made.split("\n```"), strict=True)
    drift = [f"shown:\n{a}\nmade now:\n{b}" for a, b in parts if a != b]
    assert drift == [], f"{page.name} drifted: run python scripts/gen_docs.py\n" + "\n---\n".join(drift[:2])


def test_every_command_has_a_page_and_a_line_in_the_index() -> None:
    index = (DOCS / "index.md").read_text()
    top = sorted({c.split()[0] for c in commands()})
    no_page = [c for c in top if not (DOCS / "commands" / f"{c}.md").is_file()]
    no_line = [c for c in top if f"(commands/{c}.md)" not in index]
    assert len(top) > 10 and no_page == [] and no_line == [], (no_page, no_line)
    for command in commands():  # each page holds the --help of its command (a group's: of each subcommand)
        page = (DOCS / "commands" / f"{command.split()[0]}.md").read_text()
        assert f"<!-- help:{command} -->" in page, f"docs/commands has no --help of {command}"
    topics = [p.name for p in DOCS.glob("*.md") if p.name != "index.md"]
    assert [t for t in topics if f"({t})" not in index] == []


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in pages():
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            if not where.exists() or (anchor and where.suffix == ".md" and anchor not in anchors(where)):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == [], broken


def test_the_readme_is_short_and_maps_the_chapter_early() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 250
    first = next(i for i, line in enumerate(lines, 1) if "gpt2emb context" in line)
    assert first <= 80, f"the chapter's map reaches context only at line {first}"


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.+?)\n```", README.read_text())
    install_and_run, install_and_test = commands[0], commands[1]
    assert install_and_run.endswith("gpt2emb analogy king man woman")
    assert install_and_test.endswith("pytest")
    assert install_and_test in (ROOT / ".ci" / "run").read_text()


def test_the_development_map_names_every_module() -> None:
    text = (DOCS / "development.md").read_text()
    package = ROOT / "src" / "gpt2emb"
    modules = [p.name for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")]
    missing = [m for m in modules if f"  {m} " not in text]
    assert len(modules) > 10 and missing == [], f"docs/development.md's map lacks {missing}"


def test_the_json_page_names_only_keys_the_schemas_hold() -> None:
    """docs/json.md's key summary is written by hand: every key it names outside a comment is a property of
    one of the shipped schemas, so a renamed or invented key there fails."""
    import json

    def properties(node: object) -> set[str]:
        if isinstance(node, dict):
            found = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
            return found.union(*(properties(v) for v in node.values()))
        if isinstance(node, list):
            return set().union(*(properties(v) for v in node))
        return set()

    known = set().union(*(properties(json.loads(p.read_text())) for p in (DOCS / "schema").glob("*.json")))
    text = (DOCS / "json.md").read_text()
    summary = text[text.index("## The keys") :].split("```text\n")[1].split("```")[0]
    keys = [re.sub(r'"\w+"(\|"\w+")+', "", line.split("#")[0]) for line in summary.splitlines()]  # not values
    named = {key for line in keys for key in re.findall(r'"(\w+)"', line)}
    assert len(named) > 100 and sorted(named - known) == []
