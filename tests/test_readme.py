import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from gen_readme import README, reference  # noqa: E402


def test_command_reference_is_current() -> None:
    text = README.read_text()
    assert reference() in text, "the README's command reference is stale: run python scripts/gen_readme.py"


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.+?)\n```", README.read_text())
    install_and_run, install_and_test = commands[0], commands[1]
    assert install_and_run.endswith("gpt2emb analogy king man woman")
    assert install_and_test.endswith("pytest")
    assert install_and_test in (ROOT / ".ci" / "run").read_text()
