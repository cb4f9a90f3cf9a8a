"""A static word table as -m FILE (issue 55, point 6), run by hand: exits 1 past a limit.

    python bench/static.py --runs 5 --workdir /tmp/gpt2emb-static

On a generated GloVe-shaped text file (100,000 keys x 300 numbers of 5 decimals, seed 0: about 300 MB,
written once into --workdir and reused), whole processes, interleaved (each way once per round, after one
warm-up round), median (min-max):
- first use: `gpt2emb neighbors KEY --json` on an empty cache (reading the file and building its entry),
  against gensim's `load_word2vec_format(no_header=True)` of the same file (what gensim pays on every run);
  at most FIRST_LIMIT times gensim's;
- warm: the same command once the entry is built, against gensim's load plus `most_similar(KEY)`; at most
  WARM_LIMIT of gensim's;
- the floor (bench/floor.py on the same entry): the warm command's ratio to it is printed beside the gpt2
  ratio docs/performance.md gives for a warm gpt2 query (1.39).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ROWS, DIM = 100_000, 300
KEY = "w12345"
FIRST_LIMIT = 1.5
WARM_LIMIT = 0.1
GENSIM = (
    "import sys; from gensim.models import KeyedVectors as K; "
    "kv = K.load_word2vec_format(sys.argv[1], no_header=True); "
    "sys.argv[2:] and print(kv.most_similar(sys.argv[2], topn=10))"
)


def table_file(workdir: Path) -> Path:
    """The GloVe-shaped file, written once (a block of rows at a time)."""
    path = workdir / f"glove-{ROWS}x{DIM}.txt"
    if path.is_file():
        return path
    rng = np.random.default_rng(0)
    tmp = path.with_suffix(".partial")
    with tmp.open("w") as f:
        for start in range(0, ROWS, 5000):
            block = rng.standard_normal((min(5000, ROWS - start), DIM)).astype(np.float32)
            f.writelines(
                f"w{start + i} " + " ".join(f"{x:.5f}" for x in row) + "\n" for i, row in enumerate(block)
            )
    tmp.replace(path)
    return path


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3g} ({min(values):.3g}-{max(values):.3g})"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/gpt2emb-static"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = table_file(args.workdir)
    cache = args.workdir / "cache"
    env = {**os.environ, "GPT2EMB_CACHE_DIR": str(cache)}
    gpt2emb = [str(Path(sys.executable).with_name("gpt2emb")), "neighbors", KEY, "-m", str(path), "--json"]
    load = [sys.executable, "-c", GENSIM, str(path)]
    query = [*load, KEY]

    def first() -> float:
        shutil.rmtree(cache, ignore_errors=True)
        return timed(gpt2emb, env)

    first()  # the warm-up round; it leaves the entry built
    entry = next(cache.glob("static/*/*/manifest.json")).parent
    token = json.loads(subprocess.run(gpt2emb, env=env, capture_output=True, check=True).stdout)
    floor = [
        sys.executable,
        str(ROOT / "bench" / "floor.py"),
        str(entry),
        str(token["items"][0]["tokens"][0]["id"]),
    ]
    rows: dict[str, list[float]] = {k: [] for k in ("first", "load", "warm", "query", "floor")}
    ratios: dict[str, list[float]] = {k: [] for k in ("first", "warm", "floor")}
    for _ in range(args.runs):
        t = {"first": first(), "load": timed(load, env)}
        t |= {"warm": timed(gpt2emb, env), "query": timed(query, env), "floor": timed(floor, env)}
        for k, v in t.items():
            rows[k].append(v)
        ratios["first"].append(t["first"] / t["load"])
        ratios["warm"].append(t["warm"] / t["query"])
        ratios["floor"].append(t["warm"] / t["floor"])
    size = path.stat().st_size / 1e6
    print(f"{ROWS:,} x {DIM} GloVe-shaped text ({size:.0f} MB), {args.runs} rounds, median (range)")
    print("| run | wall (s) | ratio |\n| --- | ---: | --- |")
    print(f"| gensim load_word2vec_format | {spread(rows['load'])} | |")
    first_ratio = f"{spread(ratios['first'])} of gensim's load, ≤ {FIRST_LIMIT}"
    print(f"| first use (read + cache) | {spread(rows['first'])} | {first_ratio} |")
    print(f"| gensim load + most_similar | {spread(rows['query'])} | |")
    warm_ratio = f"{spread(ratios['warm'])} of gensim's load + query, ≤ {WARM_LIMIT}"
    print(f"| warm `neighbors --json` | {spread(rows['warm'])} | {warm_ratio} |")
    floor_ratio = f"warm ÷ floor {spread(ratios['floor'])} (gpt2: 1.39)"
    print(f"| floor (bench/floor.py) | {spread(rows['floor'])} | {floor_ratio} |")
    past = statistics.median(ratios["first"]) > FIRST_LIMIT or statistics.median(ratios["warm"]) > WARM_LIMIT
    return 1 if past else 0


if __name__ == "__main__":
    sys.exit(main())
