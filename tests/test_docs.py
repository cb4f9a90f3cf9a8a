import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from gen_readme import README, commands, reference  # noqa: E402


def test_command_reference_is_current() -> None:
    text = README.read_text()
    assert reference() in text, "the README's command reference is stale: run python scripts/gen_readme.py"


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.+?)\n```", README.read_text())
    install_and_run, install_and_test = commands[0], commands[1]
    assert install_and_run.endswith("gpt2emb analogy king man woman")
    assert install_and_test.endswith("pytest")
    assert install_and_test in (ROOT / ".ci" / "run").read_text()


def test_the_development_map_names_every_module() -> None:
    text = README.read_text()
    section = text[text.index("## Development") : text.index("## Command reference")]
    package = ROOT / "src" / "gpt2emb"
    modules = [p.name for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")]
    missing = [m for m in modules if f"  {m} " not in section]
    assert len(modules) > 10 and missing == [], f"README's development map lacks {missing}"
    assert "output/" in section and "output.py" not in text  # no stale module names


def test_the_commands_table_names_every_command() -> None:
    """The README's table of commands is written by hand: every command of the app has its row (a group's
    subcommands within the group's rows)."""
    text = README.read_text()
    rows = [r for r in text[text.index("## The commands") :].splitlines() if r.startswith("| `gpt2emb ")]
    missing = [
        c
        for c in commands()
        if not any(
            r.startswith(f"| `gpt2emb {c.split()[0]}") and all(w in r for w in c.split()[1:]) for r in rows
        )
    ]
    assert len(commands()) > 10 and missing == [], f"README's table of commands lacks {missing}"
