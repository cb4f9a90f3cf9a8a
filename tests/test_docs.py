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


def test_a_number_in_exponent_form_is_compared_whole_and_relatively() -> None:
    shown = "the tied model's gradient (to 1e-5 relative): yes (relative difference 2.3e-08)"
    # float32 rounding noise of another CPU's kernels: both under the bound of 1e-6
    assert same_output(shown, shown.replace("2.3e-08", "2.9e-08"))
    assert same_output(shown, shown.replace("2.3e-08", "4e-07"))
    assert not same_output(shown, shown.replace("2.3e-08", "2.3e-05"))  # no longer noise
    assert not same_output(shown, shown.replace("1e-5", "1e-4"))  # a stated bound is exact to 1e-3 relative
    assert not same_output(shown, shown.replace("1e-5", "1.1e-5"))
    assert same_output("scale 3.0e+02", "scale 3.0001e+02")


def test_one_hash_shown_twice_on_a_page_stands_for_one_hash_made() -> None:
    seen: dict[str, str] = {}
    assert same_output("commit b36796fb3532", "commit 0123456789ab", seen)
    assert same_output("entry b36796fb3532 ok", "entry 0123456789ab ok", seen)
    # the same entry shown under another commit further down the page (docs/commands/cache.md did)
    assert not same_output("entry 8c56684aa528 ok", "entry 0123456789ab ok", seen)
    assert not same_output("b36796fb3532 8c56684aa528", "0123456789ab 0123456789ab")
    assert same_output("b36796fb3532 8c56684aa528", "0123456789ab ba9876543210")


RUNS = re.compile(r"```(console|sh|python|pycon)\n|<!-- help:|<!-- commands -->|`gpt2emb ")
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


def test_the_docs_speak_to_users_not_of_the_machines_they_were_written_on() -> None:
    said = re.compile(r"machines (this|they)|this machine|\.\./shared", re.IGNORECASE)
    found = [
        f"{p.relative_to(ROOT)}: {line}"
        for p in pages()
        for line in p.read_text().splitlines()
        if said.search(line)
    ]
    assert found == []


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
