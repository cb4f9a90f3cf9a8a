"""Time figures of many labels: `neighbors king -k K --figure` and `analogy king man woman -k K --figure`.

    python bench/labels.py [--runs 3] [--k 10 50 100 200]   # prints a markdown table

It builds a gpt2-shaped folder (random wte/wpe, GPT-2's real tokenizer, as bench/run.py does), then runs each
command line as a whole process, round after round (interleaved; the first round, which also builds the cache
entry, is a warm-up and is not counted), and reports the median and range of wall time.

What it watches is plot/place.py, which puts each label in the first free place around its point, or else
the nearest free place on a grid over its axes. With every label checked against every box taken one at a
time, `analogy -k 100 --figure` took 109 s on the tiny model. The limit: a figure of 100 labels takes at most
5 times as long as one of 10 (the process's start and the drawing are most of the latter). The script exits
with 1 when a command line is past it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import BIN, make_checkpoint, measure, spread, tokenizer_json

LIMIT = 5.0  # 100 labels against 10


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="timed rounds")
    parser.add_argument("--k", type=int, nargs="+", default=[10, 50, 100, 200], help="labels asked for")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    with tempfile.TemporaryDirectory(prefix="gpt2emb-labels-") as tmp:
        work = Path(tmp)
        folder = work / "gpt2"
        folder.mkdir()
        make_checkpoint(folder, "gpt2", tokenizer_json())
        env = {**os.environ, "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
        exe = str(BIN / "gpt2emb")
        lines = {
            (what, k): [exe, *words, "-m", str(folder), "-k", str(k), "--figure", str(work / "f.png")]
            for k in args.k
            for what, words in (
                ("neighbors", ["neighbors", "king"]),
                ("analogy", ["analogy", "king", "man", "woman"]),
            )
        }
        walls: dict[tuple[str, int], list[float]] = {key: [] for key in lines}
        for r in range(args.runs + 1):
            for key, cmd in lines.items():
                run = measure(cmd, env, 1, warmup=False)
                if r:  # the first round warms up
                    walls[key].append(run.wall)
    print(f"| command | {' | '.join(f'-k {k} (s)' for k in args.k)} |")
    print(f"| --- | {' | '.join('---:' for _ in args.k)} |")
    for what in ("neighbors", "analogy"):
        print(f"| {what} --figure | {' | '.join(spread(walls[what, k], 2) for k in args.k)} |")
    failed = False
    if 10 in args.k and 100 in args.k:
        print()
        for what in ("neighbors", "analogy"):
            ratio = statistics.median(walls[what, 100]) / statistics.median(walls[what, 10])
            print(f"{what}: -k 100 takes {ratio:.2f} times -k 10 (limit {LIMIT})")
            failed |= ratio > LIMIT
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
