"""Benchmark `gpt2emb context` on a cached model against a plain transformers script doing the same forward
passes (bench/context_plain.py), as whole processes: wall time and peak RSS (GNU time), interleaved rounds
after one warm-up round, median and range.

    python bench/context.py                 # gpt2-shaped; a few minutes
    python bench/context.py --runs 5 --model gpt2-xl

The checkpoint is GPT-2-shaped with GPT-2's real tokenizer (tests/data/gpt2-vocab), random wte/wpe and zeros
in the blocks (bench/run.py's make_checkpoint): the arithmetic is the same as with real weights. It is served
as openai-community/<model> by the tests' loopback fake Hub; the first use (not timed here beyond one run)
fetches the weights into the HF cache and builds gpt2emb's entry from them. The plain script loads the same
files, from the HF cache's snapshot folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from run import BIN, Run, machine, make_checkpoint, measure, tokenizer_json  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from fakehub import Content, DiskFile, FakeHub, Repo  # noqa: E402

WORD, SENTENCES = "bank", ["I sat on the river bank", "I paid at the bank"]


def summary(runs: list[Run]) -> tuple[str, str]:
    walls, rss = [r.wall for r in runs], [r.rss for r in runs]
    return (
        f"{statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f})",
        f"{statistics.median(rss):.0f} ({min(rss):.0f}-{max(rss):.0f})",
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (at least 3)")
    parser.add_argument("--model", default="gpt2", choices=["gpt2", "gpt2-xl"])
    args = parser.parse_args()
    if args.runs < 3:
        raise SystemExit("--runs must be 3 or more")
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-bench-context-"))
    hub = FakeHub().start()
    try:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(work / "hf"),
               "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip
        folder = work / args.model
        print(f"[{args.model}] building the checkpoint", flush=True)
        make_checkpoint(folder, args.model, tokenizer_json())
        files: dict[str, Content] = {f: (folder / f).read_bytes() for f in ("config.json", "tokenizer.json")}
        files["model.safetensors"] = DiskFile(folder / "model.safetensors")
        repo = f"openai-community/{args.model}"
        hub.repos[repo] = Repo(f"{len(args.model):040d}", files)
        name = {"gpt2": "gpt2", "gpt2-xl": "xl"}[args.model]
        ours = [str(BIN / "gpt2emb"), "context", WORD, *SENTENCES, "-m", name, "--json"]

        print(f"[{args.model}] first use through the fake Hub", flush=True)
        first = measure(ours, env, 1, warmup=False)
        size = (folder / "model.safetensors").stat().st_size
        served = hub.bytes_served
        snapshot = next((work / "hf").glob("models--*/snapshots/*"))
        plain = [sys.executable, str(ROOT / "bench" / "context_plain.py"), str(snapshot), WORD, *SENTENCES]

        print(f"[{args.model}] {args.runs} interleaved rounds after a warm-up round", flush=True)
        hub.requests.clear()
        rounds = [[measure(cmd, env, 1, warmup=r == 0) for cmd in (ours, plain)] for r in range(args.runs)]
        assert hub.requests == [], "a warm context asked the Hub"
        mine, theirs = json.loads(rounds[-1][0].out), json.loads(rounds[-1][1].out)
        for layer, other in zip(mine["layers"], theirs, strict=True):  # the same numbers, both ways
            for x, y in zip(
                [p["cosine"] for p in layer["pairs"]] + layer["static"],
                other["pairs"] + other["static"],
                strict=True,
            ):
                assert (x is None and y is None) or abs(x - y) < 1e-5, (x, y)
        (ours_wall, ours_rss), (plain_wall, plain_rss) = (summary([r[i] for r in rounds]) for i in (0, 1))
        ratio_wall = statistics.median(r[0].wall / r[1].wall for r in rounds)
        ratio_rss = statistics.median(r[0].rss / r[1].rss for r in rounds)
        lines = [
            f"Machine: {machine()}.",
            f'`gpt2emb context {WORD} "{SENTENCES[0]}" "{SENTENCES[1]}"` on a {args.model}-shaped '
            f"checkpoint, {args.runs} interleaved rounds after a warm-up round: median (min-max).",
            "",
            "| way | wall (s) | peak RSS (MiB) |",
            "| --- | ---: | ---: |",
            f"| plain transformers script (bench/context_plain.py) | {plain_wall} | {plain_rss} |",
            f"| `gpt2emb context --json`, cached | {ours_wall} | {ours_rss} |",
            f"| gpt2emb ÷ plain (median of each round's ratio) | {ratio_wall:.2f} | {ratio_rss:.2f} |",
            "",
            f"First use: {first.wall:.1f} s, {served / 1e6:,.1f} MB fetched, for a checkpoint of "
            f"{size / 1e6:,.1f} MB.",
        ]
        print("\n".join(lines))
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
