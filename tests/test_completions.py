"""The shell completion scripts (completions/): the committed ones current with the app, and bash, fish, zsh
and PowerShell completing commands, model names and choices."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from gen_completions import SHELLS, stale  # noqa: E402

BIN = str(Path(sys.executable).parent)


@pytest.mark.parametrize("shell", SHELLS)
def test_committed_scripts_are_current(shell: str) -> None:
    assert not stale(shell), "completions are stale: run python scripts/gen_completions.py"


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


def complete_in_powershell(line: str, word: str) -> list[str]:
    """What gpt2emb.ps1's completer gets back for a command line and the word under the cursor.

    pwsh is in none of the registries this project may use, so this plays the script's part: it sets the
    variables the script sets (read from the script: each `$Env:NAME = value` before the call), as a Windows
    pipe would deliver them (cp1252), runs gpt2emb, and splits each line at ':::' as the script does."""
    script = (ROOT / "completions" / "gpt2emb.ps1").read_text()
    assert "Register-ArgumentCompleter -Native -CommandName gpt2emb -ScriptBlock" in script
    before_call = script[: script.index("    gpt2emb | ForEach-Object")]
    values = {
        '"complete_powershell"': "complete_powershell",
        "$commandAst.ToString()": line,
        "$wordToComplete": word,
    }
    env = {name: values[value] for name, value in re.findall(r"\$Env:(\w+) = (.+)", before_call)}
    assert set(env) == {"_GPT2EMB_COMPLETE", "_TYPER_COMPLETE_ARGS", "_TYPER_COMPLETE_WORD_TO_COMPLETE"}
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "PYTHONIOENCODING": "cp1252", **env}
    proc = subprocess.run(["gpt2emb"], capture_output=True, encoding="cp1252", env=env, check=True)
    assert proc.stdout.isascii()  # PowerShell reads it in the console's code page, whatever that is
    return [x.split(":::")[0] for x in proc.stdout.splitlines() if x]


def test_powershell_completes_commands_models_and_choices() -> None:
    assert complete_in_powershell("gpt2emb ne", "ne") == ["neighbors"]
    assert complete_in_powershell("gpt2emb neighbors -m x", "x") == ["xl"]
    assert complete_in_powershell("gpt2emb vector --pool", "") == ["mean", "first", "strict"]
    assert complete_in_powershell("gpt2emb sizes --dtype fp1", "fp1") == ["fp16"]
    assert complete_in_powershell("gpt2emb cache c", "c") == ["clear"]
