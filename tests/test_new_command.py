"""scripts/new_command.py: a command added in one step, in a copy of the repository, passes its own tests,
ruff and the checks every command must pass (its page, schema, completions and mutation tests), and the files
it writes are all it changes beside what scripts/generate.py makes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import new_command  # noqa: E402

# the toy command's name: norm, as docs/development.md's example, unless a command holds it by then
NAME = next(n for n in ("norm", "toynorm", "toynorm2") if new_command.refusal(n) is None)
# what generate.py writes for a new command, beside the scaffold's own files
GENERATED = {
    "docs/index.md",
    "docs/schema/index.json",
    "src/gpt2emb/schemas/index.json",
    f"docs/schema/{NAME.capitalize()}Result.json",
    f"src/gpt2emb/schemas/{NAME.capitalize()}Result.json",
    "docs/img/architecture.svg",
    *(f"completions/gpt2emb.{shell}" for shell in ("bash", "zsh", "fish", "ps1")),
}


def _copy(into: Path) -> Path:
    """The repository's files (tracked, or new and not ignored) as they are, in a repository of its own."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"],
    ):
        subprocess.run(["git", *args], cwd=into, check=True, capture_output=True)
    return into


def test_a_name_that_is_taken_or_malformed_is_refused() -> None:
    assert new_command.refusal("neighbors") is not None and "taken" in str(new_command.refusal("neighbors"))
    for bad in ("Norm", "no-rm", "1norm", "class", "n", "a" * 13):
        assert new_command.refusal(bad) is not None, bad
    assert new_command.refusal(NAME) is None


def test_the_scaffold_makes_a_command_that_passes_its_tests(tmp_path: Path) -> None:
    repo = _copy(tmp_path / "repo")
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}  # the copy's package, not the one installed
    made = subprocess.run(
        [sys.executable, "scripts/new_command.py", NAME], cwd=repo, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stdout + made.stderr
    status = subprocess.run(
        ["git", "status", "--porcelain", "-uall"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    changed = {line[3:] for line in status.splitlines()}
    written = {pattern.format(name=NAME) for pattern in new_command.FILES}
    # docs/img: the figures, drawn again, differ where this machine's BLAS rounds otherwise than the one
    # that drew them (generate.py writes them all; the figure tests compare them with a tolerance)
    regenerated = {c for c in changed - written if not c.startswith("docs/img/")}
    assert written <= changed and regenerated <= GENERATED, regenerated
    assert not any(line.startswith(" M") and line[3:] in written for line in status.splitlines())
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *(w for w in written if w.endswith(".py"))], cwd=repo
    )
    assert ruff.returncode == 0
    checks = [
        f"tests/commands/test_{NAME}.py",
        "tests/test_mutation_lists.py",
        "tests/test_docs.py::test_every_command_has_a_page_and_a_line_in_the_index",
        "tests/test_completions.py",
        "tests/commands/test_schema.py",
    ]
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *checks],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0 and " passed" in ran.stdout, ran.stdout[-3000:]
