import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from gen_completions import SHELLS, script  # noqa: E402

BIN = str(Path(sys.executable).parent)


@pytest.mark.parametrize("shell", SHELLS)
def test_committed_scripts_are_current(shell: str) -> None:
    committed = (ROOT / "completions" / SHELLS[shell]).read_text()
    assert committed == script(shell), "completions are stale: run python scripts/gen_completions.py"


def complete_in_bash(*words: str) -> list[str]:
    line = " ".join(f"'{w}'" for w in words)
    code = (
        f"source {ROOT / 'completions' / 'gpt2emb.bash'}; COMP_WORDS=({line}); "
        f"COMP_CWORD={len(words) - 1}; _gpt2emb_completion gpt2emb; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"]}
    proc = subprocess.run(["bash", "-c", code], capture_output=True, text=True, env=env, check=True)
    return [x for x in proc.stdout.splitlines() if x]


def test_bash_completes_commands_models_and_choices() -> None:
    assert complete_in_bash("gpt2emb", "ne") == ["neighbors"]
    assert complete_in_bash("gpt2emb", "neighbors", "-m", "x") == ["xl"]
    assert complete_in_bash("gpt2emb", "vector", "--pool", "") == ["mean", "first", "strict"]
    assert complete_in_bash("gpt2emb", "sizes", "--dtype", "fp1") == ["fp16"]


def test_fish_and_zsh_protocols() -> None:
    env = {
        **os.environ,
        "PATH": BIN + os.pathsep + os.environ["PATH"],
        "_TYPER_COMPLETE_FISH_ACTION": "get-args",
        "_GPT2EMB_COMPLETE": "complete_fish",
        "_TYPER_COMPLETE_ARGS": "gpt2emb analogy -m medi",
    }
    fish = subprocess.run(["gpt2emb"], capture_output=True, text=True, env=env)
    assert fish.stdout.split() == ["medium"]
    env.update({"_GPT2EMB_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "gpt2emb posi"})
    zsh = subprocess.run(["gpt2emb"], capture_output=True, text=True, env=env)
    assert "positions" in zsh.stdout
