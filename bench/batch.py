"""Time neighbors for 1, 10 and 100 words in one call, warm, in-process (the math, not the process start).

    python bench/batch.py [--runs 7]       # prints a markdown table

It builds GPT-2- and gpt2-xl-shaped folders (random rows, the real tokenizer) in a temporary folder, opens
each once so its cache entry exists, then times `core.neighbors.neighbors` on the same words, interleaving the
batch sizes, and reports the median and the range. Run it on two versions of the code to compare them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import make_checkpoint, tokenizer_json


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-batch-"))
    os.environ["GPT2EMB_CACHE_DIR"] = str(work / "cache")
    from gpt2emb.core import neighbors as core_neighbors
    from gpt2emb.core.open import RankOptions
    from gpt2emb.registry import resolve

    tok = tokenizer_json()
    words = [f"id:{i}" for i in range(1000, 1100)]  # 100 distinct single tokens
    print("| model | words | median (ms) | range (ms) |\n|---|---|---|---|")
    for name in ("gpt2", "gpt2-xl"):
        folder = work / name
        make_checkpoint(folder, name, tok)
        core_neighbors.neighbors(resolve(str(folder)), ["cat"], RankOptions())  # build the entry
        times: dict[int, list[float]] = {1: [], 10: [], 100: []}
        for _ in range(args.runs):
            for n in times:
                t0 = time.perf_counter()
                core_neighbors.neighbors(resolve(str(folder)), words[:n], RankOptions())
                times[n].append((time.perf_counter() - t0) * 1000)
        for n, ts in times.items():
            print(f"| {name} | {n} | {statistics.median(ts):.0f} | {min(ts):.0f}-{max(ts):.0f} |")


if __name__ == "__main__":
    main()
