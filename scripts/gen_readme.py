"""Regenerate the README's generated parts from the app itself.

- the command reference (`gpt2emb COMMAND --help` at 100 columns): tests/test_readme.py fails when it drifts;
- the example outputs, run against the test fixture's tiny GPT-2 on a loopback fake Hub (not real weights).

    python scripts/gen_readme.py            # both
    python scripts/gen_readme.py --help-only
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import typer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EXAMPLES = (
    "gpt2emb analogy king man woman -k 5",
    "gpt2emb analogy king man woman -k 3 --method 3cosmul",
    "gpt2emb neighbors cat -k 5",
    "gpt2emb neighbors gato -k 3",
    "gpt2emb neighbors kitten --fold -k 3",
    "gpt2emb neighbors cat --among animals.txt",
    "gpt2emb vector king --dims 6",
    "gpt2emb similarity cat cats dog",
    "gpt2emb positions 0 1 2 500",
    "gpt2emb positions --heatmap --cells 16",
    "gpt2emb sizes",
    "gpt2emb tying",
    "gpt2emb tying --grad 'the king and queen and man'",
    "gpt2emb input 'the king and queen'",
    "gpt2emb geometry",
    "gpt2emb context king 'the cat and king' 'hello king is a man' 'queen and king and king'",
    "gpt2emb models",
    "gpt2emb export --format projector --whole-words --limit 100 -o projector",
    "gpt2emb neighbors cat -k 2 --json",
    "gpt2emb analogy --eval questions.txt --method 3cosadd --errors",
    "gpt2emb similarity --eval pairs.tsv",
    "gpt2emb neighbors cat -m gpt2 -m someone/gpt2-noisy -k 3",
    "gpt2emb cache list",
    "gpt2emb cache verify",
    "gpt2emb positions 1024",
)
PLAIN = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}


# small benchmark files for the --eval examples, in the words of the test fixture
QUESTIONS = (
    ": royalty\nman king woman queen\nwoman queen man king\nprince king hello queen\n"
    ": animals\ncat cats dog kitten\ncat kitten dog cats\nCat cats dog kitten\n"
)
PAIRS = (
    "# word1\tword2\tscore\nking\tqueen\t8.5\ncat\tcats\t9.2\ncat\tdog\t7.4\n"
    "hello\tking\t0.5\nman\tking\t8.3\n"
)
ANIMALS = "# animals the tiny model knows, and one it splits\ncat\ncats\nkitten\ndog\ngato\n"


def run(args: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> str:
    code = "from gpt2emb.cli import main; main()"
    full_env = {**os.environ, **PLAIN, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=full_env, cwd=cwd
    )
    out = proc.stdout + proc.stderr
    return "\n".join(line.rstrip() for line in out.splitlines()).strip("\n")


def commands() -> list[str]:
    """Every command, read from the app in the order --help lists them; a group's as `cache list`, ..."""
    from gpt2emb.cli import app

    def names(command: Any, path: list[str]) -> list[str]:
        if not hasattr(command, "commands"):  # a command, not a group of them
            return [" ".join(path)]
        return [n for name, sub in command.commands.items() for n in names(sub, [*path, name])]

    return names(typer.main.get_command(app), [])


def reference() -> str:
    parts = [f"### `gpt2emb {c}`\n\n```\n{run([*c.split(), '--help'])}\n```" for c in commands()]
    return "\n\n".join(parts)


def examples() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from fakehub import FakeHub, Repo
    from tinymodel import build, hub_files

    hub = FakeHub().start()
    tiny = build()
    hub.repos["openai-community/gpt2"] = Repo("0" * 40, hub_files(tiny))
    noise = np.random.default_rng(0).normal(0, 0.1, tiny.wte.shape).astype(np.float32)  # as if fine-tuned
    hub.repos["someone/gpt2-noisy"] = Repo(
        "1" * 40, hub_files(dataclasses.replace(tiny, wte=tiny.wte + noise))
    )
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HF_ENDPOINT": hub.url, "GPT2EMB_CACHE_DIR": f"{tmp}/c", "HF_HUB_CACHE": f"{tmp}/h"}
        env["COLUMNS"] = "80"
        Path(tmp, "questions.txt").write_text(QUESTIONS)
        Path(tmp, "pairs.tsv").write_text(PAIRS)
        Path(tmp, "animals.txt").write_text(ANIMALS)
        blocks = [f"```\n$ {e}\n{run(shlex.split(e)[1:], env, cwd=tmp)}\n```" for e in EXAMPLES]
    hub.stop()
    return "\n\n".join(blocks)


def replace(text: str, name: str, body: str) -> str:
    pattern = re.compile(f"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.DOTALL)
    assert pattern.search(text), f"README has no {name} markers"
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


if __name__ == "__main__":
    text = replace(README.read_text(), "reference", reference())
    if "--help-only" not in sys.argv:
        text = replace(text, "examples", examples())
    README.write_text(text)
    print("README.md updated")
