"""scripts/mutate.py knows the tests of every module it is meant for (issue 43, point 4): each module of
core/, store/, plot/, output/pages/ (issue 53) and the top level of gpt2emb has tests, by a rule
(mutate.module_tests: a new module needs no list, issue 57) or its list in DEFAULT_TESTS, naming test files
that exist, and each mutant that scripts/mutants-equivalent.txt lists as equivalent belongs
to a module that is still there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gpt2emb"
sys.path.insert(0, str(ROOT / "scripts"))
import mutate  # noqa: E402

# package glue, not helpers: the lazy exports of the package, and `python -m gpt2emb`
GLUE = {"__init__.py", "__main__.py"}


def mutated_modules() -> list[Path]:
    found = [*PACKAGE.glob("*.py"), *(PACKAGE / "core").glob("*.py"), *(PACKAGE / "store").glob("*.py")]
    drawn = [*(PACKAGE / "plot").glob("*.py"), *(PACKAGE / "output" / "pages").glob("*.py")]  # issue 53
    return sorted([*(p for p in found if p.name not in GLUE), *drawn])


def test_module_names_are_unique() -> None:
    """DEFAULT_TESTS is keyed by file name: two modules of the same name would share one list."""
    names = [mutate.key_of(p) for p in mutated_modules()]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("module", mutated_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_has_a_test_list(module: Path) -> None:
    tests = mutate.module_tests(module)
    assert tests, f"scripts/mutate.py: no tests for {module.relative_to(ROOT)} (by its rule or DEFAULT_TESTS)"
    missing = [t for t in tests if not (ROOT / t.split("::")[0]).is_file()]
    assert not missing, f"{module.name}: no such test file {missing}"


def test_no_list_for_a_module_that_is_gone() -> None:
    names = {mutate.key_of(p) for p in mutated_modules()}
    assert set(mutate.DEFAULT_TESTS) <= names, sorted(set(mutate.DEFAULT_TESTS) - names)


def test_a_new_module_is_tested_by_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a list, a module is tested by its units file, and a command's core also by its command's
    file."""
    assert (
        mutate.module_tests(PACKAGE / "core" / "tying.py") == mutate.DEFAULT_TESTS["tying.py"]
    )  # a list wins
    unlisted = {
        k: v
        for k, v in mutate.DEFAULT_TESTS.items()
        if k
        not in ("logits.py", "tying.py", "kept.py", "sums.py", "plot/place.py", "output/pages/__init__.py")
    }
    monkeypatch.setattr(mutate, "DEFAULT_TESTS", unlisted)
    assert mutate.module_tests(PACKAGE / "core" / "logits.py") == ["tests/commands/test_logits.py"]
    assert mutate.module_tests(PACKAGE / "core" / "tying.py") == [
        "tests/commands/test_tying.py",
        "tests/units/core/test_tying.py",
    ]
    assert mutate.module_tests(PACKAGE / "kept.py") == ["tests/units/test_kept.py"]
    assert mutate.module_tests(PACKAGE / "sums.py") == ["tests/units/test_sums.py"]
    assert mutate.module_tests(PACKAGE / "core" / "nosuch.py") == []
    assert mutate.units_file(PACKAGE / "plot" / "place.py") == "tests/units/plot/test_place.py"
    assert (
        mutate.units_file(PACKAGE / "output" / "pages" / "__init__.py")
        == "tests/units/output/pages/test_init.py"
    )


def test_every_equivalent_mutant_names_a_module_with_a_list() -> None:
    modules = {module for module, _ in mutate.read_equivalent()}
    assert modules <= set(mutate.DEFAULT_TESTS), sorted(modules - set(mutate.DEFAULT_TESTS))
