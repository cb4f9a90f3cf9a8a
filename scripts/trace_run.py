"""How often one gpt2emb run looks the same thing up (issue 43): a command traced with sys.setprofile.

    python scripts/trace_run.py neighbors king                 # on docs/examples' tiny model, built here
    python scripts/trace_run.py context king "the king sat" "a king ran" --per-module

It builds ./tiny-gpt2 (docs/examples/tiny_gpt2.py) and its cache entry in a temporary folder, runs the command
once untraced (so the run traced is warm: the entry built, the model's files read once), then runs it again
in a fresh process under sys.setprofile, with `-m ./tiny-gpt2` added, and prints what it counted:

- modules entered: the gpt2emb modules that ran a function, and the entries into them (a call from another
  module, or from outside gpt2emb);
- comebacks: the times the run came back to a gpt2emb module it had left (the innermost gpt2emb frame moved
  to a module that was innermost before), by a call or a return;
- resolutions: calls of registry.resolve (a model's name made into what to open), and lookups
  (registry.find, the registry's table read by name);
- option checks: calls of the functions that check an option's value (CHECKS below), and of contract.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# (module, function): what checks an option's value, counted one by one
CHECKS = {
    ("gpt2emb.core.open", "check_top"): "-k",
    ("gpt2emb.core.open", "check_top_fits"): "-k against the tokens, once a folder's model is open",
    ("gpt2emb.core.open", "check_candidates"): "--among/--restrict/--whole-words",
    ("gpt2emb.candidates", "read"): "--among/--restrict/--whole-words (read)",
    ("gpt2emb.plot", "check_figure"): "--figure",
    ("gpt2emb.core.open", "open_checked"): "words and -k before opening",
}
RESOLVE = ("gpt2emb.registry", "resolve")
FIND = ("gpt2emb.registry", "find")


def traced(argv: list[str]) -> dict[str, Any]:
    """Run the CLI on argv in this process under sys.setprofile; the counts."""
    entries: Counter[str] = Counter()
    calls: Counter[tuple[str, str]] = Counter()
    stack: list[str | None] = [None]  # the innermost gpt2emb module at each depth
    comebacks, left = 0, set()

    def module_of(frame: FrameType) -> str | None:
        name = frame.f_globals.get("__name__", "")
        return name if isinstance(name, str) and name.split(".")[0] == "gpt2emb" else None

    def moved(before: str | None, after: str | None) -> None:
        nonlocal comebacks
        if before == after or after is None:
            return
        if before is not None:
            left.add(before)
        if after in left:
            comebacks += 1

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            mod = module_of(frame)
            inner = mod or stack[-1]
            if mod is not None:
                calls[mod, frame.f_code.co_name] += 1
                if mod != stack[-1]:
                    entries[mod] += 1
            moved(stack[-1], inner)
            stack.append(inner)
        elif event == "return" and len(stack) > 1:
            before = stack.pop()
            moved(before, stack[-1])

    from gpt2emb.cli import app

    sys.setprofile(profile)
    try:
        app(argv, prog_name="gpt2emb", standalone_mode=False)
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
    checks = {f"{m}.{f}": n for (m, f), n in sorted(calls.items()) if (m, f) in CHECKS}
    contract = {(m, f): n for (m, f), n in sorted(calls.items()) if m == "gpt2emb.contract" and f[0] != "<"}
    checks.update({f"{m}.{f}": n for (m, f), n in contract.items()})
    return {
        "modules entered": len(entries),
        "entries": sum(entries.values()),
        "comebacks": comebacks,
        "resolutions": calls[RESOLVE],
        "lookups": calls[FIND],
        "option checks": checks,
        "per module": dict(entries.most_common()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", nargs="+", help="the command and its arguments (-m ./tiny-gpt2 is added)")
    parser.add_argument("--per-module", action="store_true", help="also the entries into each module")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    argv = [*args.command, "-m", "./tiny-gpt2"]
    if args.child:
        print(json.dumps(traced(argv)))
        return
    with tempfile.TemporaryDirectory(prefix="gpt2emb-trace-") as where:
        env = {**os.environ, "GPT2EMB_CACHE_DIR": str(Path(where) / "cache"), "HF_HUB_OFFLINE": "1"}
        tiny = [sys.executable, str(ROOT / "docs/examples/tiny_gpt2.py")]
        subprocess.run(tiny, cwd=where, env=env, check=True, capture_output=True)
        warm = [sys.executable, "-m", "gpt2emb", *argv]  # the entry built: the run traced is warm
        subprocess.run(warm, cwd=where, env=env, check=True, capture_output=True)
        child = [sys.executable, __file__, "--child", *args.command]
        done = subprocess.run(child, cwd=where, env=env, check=True, capture_output=True, text=True)
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    per_module = counts.pop("per module")
    print(f"gpt2emb {' '.join(argv)} (warm)")
    for key, value in counts.items():
        if isinstance(value, dict):
            print(f"  {key}: " + (", ".join(f"{k} {n}" for k, n in value.items()) or "none"))
        else:
            print(f"  {key}: {value}")
    if args.per_module:
        for mod, n in per_module.items():
            print(f"    {n:5d}  {mod}")


if __name__ == "__main__":
    main()
