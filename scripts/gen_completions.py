"""Write completions/ for bash, zsh, fish and PowerShell from the app itself (tests/test_completions.py
checks them).

    python scripts/gen_completions.py            # write them
    python scripts/gen_completions.py --check    # name the stale scripts, exit 1 if any
"""

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


def stale(shell: str) -> bool:
    """Whether the committed script of this shell differs from what the app prints now."""
    return (ROOT / "completions" / SHELLS[shell]).read_text() != script(shell)


if __name__ == "__main__":
    if "--check" in sys.argv:  # scripts/generate.py --check
        drifted = [f"completions/{SHELLS[shell]}" for shell in SHELLS if stale(shell)]
        print(f"stale: {', '.join(drifted)}" if drifted else "completions current")
        sys.exit(1 if drifted else 0)
    for shell, name in SHELLS.items():
        (ROOT / "completions" / name).write_text(script(shell))
        print(f"wrote completions/{name}")
