"""Long analogy sums against their floor (issue 49, point 4), run by hand: exits 1 past the limit.

    python bench/long_sums.py --runs 5 --workdir /tmp/gpt2emb-warm

On bench/warm.py's gpt2-shaped entry (50257 x 768, built once in --workdir, reused after), a T-term sum of
random `id:N` terms (seed 0) for T = 100 and 1000, with each method: `gpt2emb analogy SUM --method M --json`
against bench/long_sums_plain.py, a plain numpy script that loads the same table, scores the whole vocabulary
(one product of the unit rows with the T terms, then the method's sum or log-product) and ranks the inputs.
Both run as whole processes, interleaved (each way once per round, after one warm-up round); the figure is
the median of each round's ratio, with its range. Every ratio must be at most LIMIT.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from warm import prepare  # noqa: E402

LIMIT = 1.5
TERMS = (100, 1000)
METHODS = ("add", "3cosadd", "3cosmul")


def sum_of(count: int) -> list[tuple[str, int]]:
    """count signed ids, the first positive (a sum starts with a term that takes no sign)."""
    r = random.Random(0)
    return [("+" if i == 0 else r.choice("+-"), r.randrange(256, 50257)) for i in range(count)]


def timed(cmd: list[str], env: dict[str, str], limit: float) -> float:
    """A whole process's wall time; inf past limit seconds (the code before issue 49 took minutes)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return float("inf")
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{proc.stderr.decode()[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--limit", type=float, default=600, help="seconds a run may take (inf past it)")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="gpt2emb-sums-"))
    work.mkdir(parents=True, exist_ok=True)
    env, _, entry = prepare(work)
    ours, py = str(Path(sys.executable).parent / "gpt2emb"), sys.executable
    cases = []
    for count in TERMS:
        terms = sum_of(count)
        written = " ".join([f"id:{terms[0][1]}", *(f"{s} id:{i}" for s, i in terms[1:])])
        plain_spec = " ".join(f"{s}{i}" for s, i in terms)
        for method in METHODS:
            cases.append(
                (
                    f"T={count} {method}",
                    [ours, "analogy", written, "--method", method, "--json"],
                    [py, str(ROOT / "bench" / "long_sums_plain.py"), str(entry), method, plain_spec],
                )
            )
    walls: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in cases}
    for r in range(args.runs + 1):
        for name, cmd, plain in cases:
            a, b = timed(cmd, env, args.limit), timed(plain, env, args.limit)
            if r:  # round 0 warms the page cache
                walls[name][0].append(a)
                walls[name][1].append(b)
        print(f"round {r} done", file=sys.stderr, flush=True)
    print("| sum | gpt2emb (s) | plain numpy (s) | ratio |")
    print("| --- | ---: | ---: | --- |")
    ok = True
    for name, (a, b) in walls.items():
        ratios = [x / y for x, y in zip(a, b, strict=True)]
        m = statistics.median(ratios)
        ok = ok and m <= LIMIT
        print(
            f"| {name} | {statistics.median(a):.2f} ({min(a):.2f}-{max(a):.2f}) | "
            f"{statistics.median(b):.2f} ({min(b):.2f}-{max(b):.2f}) | "
            f"{m:.2f} ({min(ratios):.2f}-{max(ratios):.2f}) {'≤' if m <= LIMIT else '>'} {LIMIT:g} |"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
