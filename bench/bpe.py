"""Time bpe.py's merge loop against the `tokenizers` library on long one-word texts (issue 24, item 1).

    python bench/bpe.py [--runs 5] [--lengths 2500,10000,20000] [--command]

On GPT-2's real vocabulary, for each kind of text (a run of `a`, of `ab`, of digits, of CJK letters) at each
length in characters, the whole text is one pre-token. Timed: `Bpe.word` on its byte-level spelling (the merge
loop alone: a fresh encoder each run, so no pair is known beforehand, its merge table sorted before the clock
starts) and the library's BPE model on the same pre-token (`Tokenizer.model.tokenize`; it caches no word this
long), each the median and range of --runs runs; the ids are checked equal. With --command, also the whole
`gpt2emb input "aaa…" --truncate [--json] -m FOLDER` as a process (median of --command-runs, after one
warm-up run that builds the cache entry; GNU time's peak RSS) on a folder with GPT-2's tokenizer and small
random rows, against a short text. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import BIN, ROOT, measure, spread, tokenizer_json, write_virtual

from gpt2emb import bpe

sys.path.insert(0, str(ROOT / "tests"))
from tinymodel import gpt2_tensor_shapes, virtual_safetensors

KINDS = {"aaa": "a", "abab": "ab", "digits": "1234567890", "CJK": "東京大学の日本語"}


def text_of(kind: str, letters: int) -> str:
    unit = KINDS[kind]
    return (unit * (letters // len(unit) + 1))[:letters]


def timed(call: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    """Seconds of each of `runs` calls, and the last call's answer."""
    seconds, answer = [], None
    for _ in range(runs):
        started = time.perf_counter()
        answer = call()
        seconds.append(time.perf_counter() - started)
    return seconds, answer


def fresh(rows: np.ndarray) -> bpe.Bpe:
    """An encoder as a new process opens it, its merge table sorted (once per process, a few ms): the one
    pair it then knows, ("Ġ", "t"), is in none of the texts timed."""
    encoder = bpe.Bpe(rows, ["<|endoftext|>"])
    encoder.word(bpe.to_byte_level(" t"))
    return encoder


def bpe_table(runs: int, lengths: list[int]) -> list[str]:
    from tokenizers import Tokenizer

    raw = tokenizer_json()
    rows = bpe.table(json.loads(raw))
    assert rows is not None, "GPT-2's tokenizer is a plain byte-level BPE"
    library = Tokenizer.from_str(raw)
    lines = [
        "| text | letters | bytes | tokens | bpe.py, s | tokenizers, s | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in KINDS:
        for letters in lengths:
            piece = bpe.to_byte_level(text_of(kind, letters))
            ours, ids = [], []
            for _ in range(runs):  # a fresh encoder each run: its pair cache would flatter the later runs
                encoder = fresh(rows)
                started = time.perf_counter()
                ids = encoder.word(piece)
                ours.append(time.perf_counter() - started)
            theirs, tokens = timed(functools.partial(library.model.tokenize, piece), runs)
            if ids != [t.id for t in tokens]:
                raise SystemExit(f"bpe.py and tokenizers disagree on {kind} x {letters}")
            ratio = statistics.median(ours) / statistics.median(theirs)
            lines.append(
                f"| {kind} | {letters:,} | {len(piece):,} | {len(ids):,} | {spread(ours, 4)} "
                f"| {spread(theirs, 4)} | {ratio:.1f} |"
            )
    return lines


def small_gpt2(folder: Path) -> None:
    """A GPT-2 folder with GPT-2's real tokenizer, 50,257 random rows of 32 numbers and two zero layers."""
    d, rng = 32, np.random.default_rng(0)
    data = {
        "wte.weight": rng.standard_normal((50257, d), dtype=np.float32) * 0.1,
        "wpe.weight": rng.standard_normal((1024, d), dtype=np.float32) * 0.01,
    }
    write_virtual(
        folder / "model.safetensors", virtual_safetensors(gpt2_tensor_shapes(50257, d, 1024, 2), data)
    )
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 50257, "n_embd": d,
              "n_positions": 1024, "n_ctx": 1024, "n_layer": 2, "n_head": 2, "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "bos_token_id": 50256, "eos_token_id": 50256}  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text(tokenizer_json())


def command_table(runs: int, lengths: list[int]) -> list[str]:
    """The whole command on a short text and on runs of "a", as a table and as JSON: a long text keeps
    1,024 tokens, and printing their table costs time of its own, apart from the BPE's."""
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-bpe-"))
    folder = work / "gpt2-small"
    small_gpt2(folder)
    env = {**os.environ, "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
    lines = ["| command | wall, s | peak RSS, MiB |", "|---|---:|---:|"]
    for letters in [0, *lengths]:  # 0: a short text, the time to match
        text = text_of("aaa", letters) if letters else "the king"
        shown = f'"a"x{letters:,}' if letters else '"the king"'
        for view in ([], ["--json"]):
            command = [str(BIN / "gpt2emb"), "input", text, "--truncate", *view, "-m", str(folder)]
            run = measure(command, env, runs)
            label = " ".join(["gpt2emb input", shown, "--truncate", *view])
            lines.append(f"| `{label}` | {run.wall:.3f} | {run.rss:.0f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement")
    parser.add_argument("--lengths", default="2500,10000,20000", help="letters per text (comma-separated)")
    parser.add_argument("--command", action="store_true", help="also time the whole `gpt2emb input`")
    parser.add_argument("--command-runs", type=int, default=1, help="timed runs per command")
    args = parser.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    print("\n".join(bpe_table(args.runs, lengths)))
    if args.command:
        print()
        print("\n".join(command_table(args.command_runs, lengths)))


if __name__ == "__main__":
    main()
