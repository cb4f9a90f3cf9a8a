"""Benchmark `gpt2emb neighbors -` (10,000 words from stdin) against gensim's most_similar called per word.

    pip install -e ".[bench]" && python bench/stdin.py --out docs/performance.md  # 10 minutes on 2 cores

On bench/run.py's gpt2 and gpt2-xl checkpoints (GPT-2's real vocabulary, random rows), with the first 10,000
vocabulary entries that are a space and ASCII letters (" the", " king": one token each), round after round:
`gpt2emb neighbors - --jsonl` as a whole process reading the words from a file (warm cache: process start,
reading, printing included), and gensim in one warm process (bench/gensim_each.py: a KeyedVectors of the same
rows under the same keys, memory-mapped, `most_similar(word, topn=10)` for each word; only the loop is
timed, its loading is not). The top 10 of both are compared for the first 100 words. Medians, ranges, words
per second and peak RSS (GNU time); with --out, the section "Words from stdin" of docs/performance.md.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from run import (
    BIN,
    ROOT,
    SHAPES,
    VOCAB,
    machine,
    make_checkpoint,
    make_gensim,
    measure,
    put_section,
    rounds,
    spread,
    tokenizer_json,
)

from gpt2emb.batch import BLOCK

TITLE = "Words from stdin"
WORDS = 10_000
TOP = 10
START = [sys.executable, "-c", "import numpy"]  # the least a Python process doing the product must start


def words() -> list[str]:
    pieces = json.loads((VOCAB / "vocab.json").read_text(encoding="utf-8"))
    chosen = [
        p[1:] for p, _ in sorted(pieces.items(), key=lambda kv: kv[1]) if p[:1] == "Ġ" and p[1:].isascii()
    ]
    return [w for w in chosen if w.isalpha()][:WORDS]


def tokens(folder: Path, listed: list[str], env: dict[str, str]) -> list[int]:
    """Each word's token id, as gpt2emb makes it (every listed word is one token)."""
    command = [str(BIN / "gpt2emb"), "vector", "-", "-m", str(folder), "--jsonl", "--dims", "1"]
    proc = subprocess.run(
        command, input="\n".join(listed), capture_output=True, text=True, env=env, check=True
    )
    return [json.loads(line)["tokens"][0]["id"] for line in proc.stdout.splitlines()]


def floor(wte: np.ndarray, ids: list[int]) -> float:
    """Seconds of the float32 matrix products alone: the words' rows against every row, a block at a time."""
    started = time.perf_counter()
    for start in range(0, len(ids), BLOCK):
        wte[ids[start : start + BLOCK]] @ wte.T
    return time.perf_counter() - started


def main() -> None:
    parser = rounds(__doc__)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-stdin-"))
    env = {**os.environ, "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
    listed = words()
    file = work / "words.txt"
    file.write_text("\n".join(listed) + "\n", encoding="utf-8")
    tokenizer = tokenizer_json()
    rows = []
    for name in args.models.split(","):
        folder = work / name
        folder.mkdir()
        wte = make_checkpoint(folder, name, tokenizer)
        make_gensim(work / f"{name}.kv", wte)
        ids = tokens(folder, listed, env)
        ours_cmd = [str(BIN / "gpt2emb"), "neighbors", "-", "-m", str(folder), "-k", str(TOP), "--jsonl"]
        peer_cmd = [
            sys.executable,
            str(ROOT / "bench" / "gensim_each.py"),
            str(work / f"{name}.kv"),
            str(TOP),
        ]
        ours, peer, ours_rss, peer_rss, starts, floors = [], [], [], [], [], []
        for r in range(args.runs):
            floors.append(floor(wte, ids))
            starts.append(measure(START, env, 1, warmup=r == 0).wall)
            mine = measure(ours_cmd, env, 1, warmup=r == 0, stdin=file)
            theirs = measure(peer_cmd, env, 1, warmup=r == 0, stdin=file)
            ours.append(mine.wall)
            ours_rss.append(mine.rss)
            peer.append(json.loads(theirs.out.splitlines()[-1])["loop_seconds"])
            peer_rss.append(theirs.rss)
        answers = [json.loads(line) for line in mine.out.splitlines()]
        assert len(answers) == len(listed), "every word answered"
        theirs_top = json.loads(theirs.out.splitlines()[-1])["first"]
        same = sum(
            [n["token"] for n in a["neighbors"]] == t for a, t in zip(answers, theirs_top, strict=False)
        )
        del wte
        rows.append((name, peer, ours, floors, starts, peer_rss, ours_rss, same, len(theirs_top)))
        print(name, spread(peer, 1), spread(ours, 2), flush=True)
    lines = [
        f"## {TITLE}",
        "",
        f"Run on {time.strftime('%Y-%m-%d')} with `python bench/stdin.py` (see its docstring).",
        f"Machine: {machine()}.",
        f"{len(listed):,} words, top {TOP}: `gpt2emb neighbors - --jsonl` as a whole process (start, reading",
        "and printing included) against gensim's `most_similar` called per word in one warm process (only",
        f"its loop timed). {args.runs} rounds taking turns (each also times the floor and the start):",
        "median (min-max). The floor is the float32",
        f"matrix product alone (the words' rows against all of wte, {BLOCK} words a product), in one",
        "process; start is a Python process that only imports numpy. 10x asks for a whole run within",
        "a tenth of gensim's loop, the budget below; floor + start is the least any Python process can take",
        "(each round's own sum), and gensim ÷ (floor + start) the most any could reach.",
        "",
        "| model | gensim loop (s) | gpt2emb process (s) | gensim ÷ gpt2emb | gpt2emb words/s | floor (s) "
        "| start (s) | 10x budget (s) | floor + start (s) "
        "| gensim ÷ (floor + start) | gensim RSS (MiB) | gpt2emb RSS | same top 10 |",
        "| --- |" + " ---: |" * 11 + " --- |",
    ]
    for name, peer, ours, floors, starts, peer_rss, ours_rss, same, compared in rows:
        ratio = statistics.median(peer) / statistics.median(ours)
        least = [f + s for f, s in zip(floors, starts, strict=True)]
        lines.append(
            f"| {name} | {spread(peer, 1)} | {spread(ours, 2)} | **{ratio:.1f}x** "
            f"| {len(listed) / statistics.median(ours):,.0f} | {spread(floors, 2)} | {spread(starts, 2)} "
            f"| {spread([p / 10 for p in peer], 2)} | {spread(least, 2)} "
            f"| {spread([p / q for p, q in zip(peer, least, strict=True)], 1)}x "
            f"| {statistics.median(peer_rss):.0f} | {max(ours_rss):.0f} (max) "
            f"| {same} of the first {compared} |"
        )
    print("\n".join(lines))
    if args.out:
        put_section(args.out, TITLE, lines)


if __name__ == "__main__":
    assert SHAPES and VOCAB.is_dir(), f"needs {VOCAB}"
    main()
