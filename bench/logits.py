"""Benchmark `gpt2emb logits` and `logits --layers` on a cached model against a plain transformers script
that does the same (bench/logits_plain.py: AutoModelForCausalLM from the same local folder, the top 10; with
--layers, every layer through ln_f and the output layer), as whole processes: wall time and peak RSS (GNU
time), the four ways interleaved in each round after one warm-up round, median and range.

    python bench/logits.py                  # gpt2-shaped; a few minutes
    python bench/logits.py --runs 7

The checkpoint is GPT-2-shaped with GPT-2's real tokenizer (tests/data/gpt2-vocab), random wte/wpe and zeros
in the blocks (bench/run.py's make_checkpoint): the arithmetic and its cost are those of real weights. It is
served as openai-community/gpt2 by the tests' loopback fake Hub; a first use (not timed) fetches it and builds
gpt2emb's entry. The plain script loads the same files from the HF cache's snapshot folder.
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
from context import summary  # noqa: E402
from run import BIN, machine, make_checkpoint, measure, tokenizer_json  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from fakehub import Content, DiskFile, FakeHub, Repo  # noqa: E402

TEXT = "The cat sat on the"


def row(way: str, cells: tuple[str, str]) -> str:
    return f"| {way} | {cells[0]} | {cells[1]} |"


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (at least 5)")
    args = parser.parse_args()
    if args.runs < 5:
        raise SystemExit("--runs must be 5 or more")
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-bench-logits-"))
    hub = FakeHub().start()
    try:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(work / "hf"),
               "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip
        folder = work / "gpt2"
        make_checkpoint(folder, "gpt2", tokenizer_json())
        files: dict[str, Content] = {f: (folder / f).read_bytes() for f in ("config.json", "tokenizer.json")}
        files["model.safetensors"] = DiskFile(folder / "model.safetensors")
        hub.repos["openai-community/gpt2"] = Repo(f"{4:040d}", files)
        ours = [str(BIN / "gpt2emb"), "logits", TEXT, "--json"]
        measure(ours, env, 1, warmup=False)  # the first use: fetch and build, not timed
        snapshot = next((work / "hf").glob("models--*/snapshots/*"))
        plain = [sys.executable, str(ROOT / "bench" / "logits_plain.py"), str(snapshot), TEXT]
        ways = {
            "ours": ours,
            "plain": plain,
            "ours_layers": [*ours, "--layers"],
            "plain_layers": [*plain, "--layers"],
        }
        hub.requests.clear()
        rounds = [
            {name: measure(cmd, env, 1, warmup=r == 0) for name, cmd in ways.items()}
            for r in range(args.runs)
        ]
        assert hub.requests == [], "a warm logits asked the Hub"
        mine, theirs = json.loads(rounds[-1]["ours_layers"].out), json.loads(rounds[-1]["plain_layers"].out)
        for s, (i, logit, _) in zip(mine["top"], theirs["top"], strict=True):  # the same numbers, both ways
            assert abs(s["logit"] - logit) <= 1e-4 * abs(logit) + 1e-5, (s, i, logit)
        cells = {name: summary([r[name] for r in rounds]) for name in ways}

        def ratio(a: str, b: str, key: str = "wall") -> float:
            return statistics.median(getattr(r[a], key) / getattr(r[b], key) for r in rounds)

        def ratios(a: str, b: str) -> tuple[str, str]:
            return f"{ratio(a, b):.2f}", f"{ratio(a, b, 'rss'):.2f}"

        added = statistics.median(r["ours_layers"].wall - r["ours"].wall for r in rounds)
        lines = [
            f"Machine: {machine()}.",
            f'`gpt2emb logits "{TEXT}"` on a gpt2-shaped checkpoint, {args.runs} interleaved rounds after a '
            "warm-up round: median (min-max).",
            "",
            "| way | wall (s) | peak RSS (MiB) |",
            "| --- | ---: | ---: |",
            row("plain transformers script, top 10 (bench/logits_plain.py)", cells["plain"]),
            row("`gpt2emb logits --json`, cached", cells["ours"]),
            row("gpt2emb ÷ plain (median of each round's ratio)", ratios("ours", "plain")),
            row("plain script, every layer (`--layers`)", cells["plain_layers"]),
            row("`gpt2emb logits --layers --json`, cached", cells["ours_layers"]),
            row("gpt2emb ÷ plain, every layer", ratios("ours_layers", "plain_layers")),
            "",
            f"`--layers` adds {added:.2f} s to `logits` (median of each round's difference).",
        ]
        print("\n".join(lines))
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
