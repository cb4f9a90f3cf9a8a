"""Time the chapter's `input` against `neighbors`, and `geometry` against a plain numpy script, warm.

    python bench/chapter.py [--runs 5] [--no-geometry]   # prints markdown tables

It builds gpt2- and gpt2-xl-shaped folders (random wte/wpe, GPT-2's real tokenizer, as bench/run.py does),
opens each once so its cache entry exists, then runs each command as a whole process, round after round
(interleaved, after one warm-up round), and reports the median and range of wall time and peak RSS
(GNU time's %M). The plain numpy script loads the cache entry's wte.npy and wpe.npy whole and computes the
same figures the obvious way: every wte-wpe cosine in one float32 matrix, np.cov and eigvalsh.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import BIN, Run, make_checkpoint, measure, tokenizer_json

PLAIN_GEOMETRY = """
import json, sys
import numpy as np
entry = sys.argv[1]
wte, wpe = np.load(entry + '/wte.npy'), np.load(entry + '/wpe.npy')
out = {}
for name, rows in (('wte', wte), ('wpe', wpe)):
    norms = np.linalg.norm(rows.astype(np.float64), axis=1)
    unit = rows[norms > 0] / norms[norms > 0, None]
    s, n = unit.sum(axis=0), len(unit)
    ev = np.linalg.eigvalsh(np.cov(rows.astype(np.float64), rowvar=False))[::-1]
    out[name] = {'norm_mean': norms.mean(), 'mean_cosine': (s @ s - n) / (n * (n - 1)),
                 'pc_variance': list(ev[:10] / ev.sum()), 'smallest': np.argsort(norms)[:5].tolist()}
uw = (wte / np.linalg.norm(wte, axis=1, keepdims=True)).astype(np.float32)
up = (wpe / np.linalg.norm(wpe, axis=1, keepdims=True)).astype(np.float32)
cos = np.abs(uw @ up.T)
i, j = np.unravel_index(np.argmax(cos), cos.shape)
out['wte_vs_wpe'] = {'mean_abs_cosine': float(cos.mean()), 'max_abs_cosine': float(cos[i, j]),
                     'max_pair': [int(i), int(j)]}
print(json.dumps(out, default=float))
"""


def rounds(cmds: dict[str, list[str]], env: dict[str, str], runs: int) -> dict[str, list[Run]]:
    """Each command once per round, round after round; the first round warms up and is dropped."""
    found: dict[str, list[Run]] = {k: [] for k in cmds}
    for r in range(runs + 1):
        for label, cmd in cmds.items():
            run = measure(cmd, env, 1, warmup=False)
            if r:
                found[label].append(run)
    return found


def row(label: str, runs: list[Run]) -> str:
    walls, rss = [r.wall for r in runs], [r.rss for r in runs]
    return (
        f"| {label} | {statistics.median(walls):.3f} | {min(walls):.3f}-{max(walls):.3f} "
        f"| {statistics.median(rss):.0f} | {min(rss):.0f}-{max(rss):.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-geometry", action="store_true", help="time input against neighbors only")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-chapter-"))
    env = {**os.environ, "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
    gpt2emb, py = str(BIN / "gpt2emb"), sys.executable
    tok = tokenizer_json()
    folders = {name: work / name for name in ("gpt2", "gpt2-xl")}
    for name, folder in folders.items():
        make_checkpoint(folder, name, tok)
        measure([gpt2emb, "neighbors", "cat", "-m", str(folder), "--json"], env, 1, warmup=False)  # the entry
    header = "| command | wall median (s) | wall range | peak RSS median (MiB) | RSS range |\n"
    header += "|---|---:|---|---:|---|"
    print(f"Warm, {args.runs} interleaved rounds after one warm-up round.\n\n{header}")
    text = "O Brasil é gigante"
    for name in ("gpt2", "gpt2-xl"):
        m = str(folders[name])
        cmds = {
            f'input "{text}" --json ({name})': [gpt2emb, "input", text, "-m", m, "--json"],
            f"neighbors cat --json ({name}; one token: no tokenizer)": [
                gpt2emb,
                "neighbors",
                "cat",
                "-m",
                m,
                "--json",
            ],
            f"neighbors gato --json ({name}; split: bpe.py, no tokenizer load)": [
                gpt2emb,
                "neighbors",
                "gato",
                "-m",
                m,
                "--json",
            ],
        }
        if name == "gpt2":
            cmds[f'input "{text}" ({name}, table)'] = [gpt2emb, "input", text, "-m", m]
            cmds[f"neighbors cat ({name}, table)"] = [gpt2emb, "neighbors", "cat", "-m", m]
        for label, runs in rounds(cmds, {**env, "COLUMNS": "100"}, args.runs).items():
            print(row(label, runs))
    if args.no_geometry:
        return
    xl = str(folders["gpt2-xl"])
    entry = next(
        e["path"]
        for e in json.loads(measure([gpt2emb, "cache", "list", "--json"], env, 1, warmup=False).out)[
            "entries"
        ]
        if "xl" in e["name"]
    )
    cmds = {
        "gpt2emb geometry --json (gpt2-xl)": [gpt2emb, "geometry", "-m", xl, "--json"],
        "plain numpy script, same figures (gpt2-xl)": [py, "-c", PLAIN_GEOMETRY, entry],
    }
    found = rounds(cmds, env, args.runs)
    for label, runs in found.items():
        print(row(label, runs))
    ours, plain = (json.loads(runs[-1].out) for runs in found.values())
    print("\nthe two agree:")
    for key in ("mean_abs_cosine", "max_abs_cosine"):
        print(f"  {key}: gpt2emb {ours['wte_vs_wpe'][key]:.10f}, plain {plain['wte_vs_wpe'][key]:.10f}")
    for table in ("wte", "wpe"):
        a, b = ours[table], plain[table]
        print(f"  {table} mean cosine: gpt2emb {a['mean_cosine']:.3e}, plain {b['mean_cosine']:.3e}")
        print(f"  {table} PC1 share: gpt2emb {a['pc_variance'][0]:.6f}, plain {b['pc_variance'][0]:.6f}")


if __name__ == "__main__":
    main()
