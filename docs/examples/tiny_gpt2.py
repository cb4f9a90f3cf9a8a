"""Build ./tiny-gpt2, the model every example of the docs runs on, so that you can run them too:

    python docs/examples/tiny_gpt2.py [FOLDER]      # from the repository's root; FOLDER: ./tiny-gpt2
    python docs/examples/tiny_gpt2.py tiny-gpt2-noisy --noise 0.1    # the same, as if fine-tuned a little

It is the test suite's tiny GPT-2 (tests/tinymodel.py), saved as a folder as save_pretrained writes one: a
byte-level BPE of 343 tokens trained on a few words, d = 32, two blocks, 1024 positions, and planted
rows whose answers are known (queen is exactly king - man + woman; cats and kitten lie next to cat, dog
half-way; the position rows are sinusoids, so neighbouring positions are alike). Its numbers are not
GPT-2's: an example on it shows what a command prints, and the docs quote the chapter for what GPT-2
itself gives. The same bytes on every machine, so each output in the docs comes out here as printed (to
the last digit or so: BLAS kernels round differently).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from tinymodel import build, save_local


def main(folder: Path, noise: float = 0.0) -> None:
    tiny = build()
    if noise:  # the same noise on every machine: a normal of this spread added to every row of wte
        shift = np.random.default_rng(0).normal(0.0, noise, tiny.wte.shape).astype(np.float32)
        tiny = dataclasses.replace(tiny, wte=tiny.wte + shift)
    save_local(tiny, folder)
    print(f"wrote {folder}: a tiny GPT-2 (d = 32, 343 tokens); try gpt2emb neighbors cat -m ./{folder}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Build the tiny GPT-2 the docs' examples run on.")
    parser.add_argument("folder", nargs="?", default="tiny-gpt2", type=Path)
    parser.add_argument("--noise", type=float, default=0.0, help="add noise of this spread to wte")
    args = parser.parse_args()
    main(args.folder, args.noise)
