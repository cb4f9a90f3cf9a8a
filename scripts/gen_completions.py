"""Write completions/ for bash, zsh, fish and PowerShell from the app itself (tests/test_completions.py
checks them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SHELLS = {"bash": "gpt2emb.bash", "zsh": "_gpt2emb", "fish": "gpt2emb.fish", "powershell": "gpt2emb.ps1"}
ROOT = Path(__file__).resolve().parents[1]


def script(shell: str) -> str:
    """The script Typer prints for `gpt2emb --show-completion SHELL`."""
    code = "from gpt2emb.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "--show-completion", shell],
        capture_output=True,
        text=True,
        env={"PATH": "", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"},
        check=True,
    )
    return proc.stdout


if __name__ == "__main__":
    for shell, name in SHELLS.items():
        (ROOT / "completions" / name).write_text(script(shell))
        print(f"wrote completions/{name}")
