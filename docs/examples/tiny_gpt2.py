"""Build ./tiny-gpt2, the model every example of the docs runs on, so that you can run them too:

    python docs/examples/tiny_gpt2.py [FOLDER]      # from the repository's root; FOLDER: ./tiny-gpt2

It is the test suite's tiny GPT-2 (tests/tinymodel.py), saved as a folder as save_pretrained writes one: a
byte-level BPE of 343 tokens trained on a few words, d = 32, two blocks, 1024 positions, and planted rows whose
answers are known (queen is exactly king - man + woman; cats and kitten lie next to cat, dog half-way; the
position rows are sinusoids, so neighbouring positions are alike). Its numbers are not GPT-2's: an example on it
shows what a command prints, and the docs quote the chapter for what GPT-2 itself gives. The same bytes on
every machine, so each output in the docs comes out here as printed (to the last digit or so: BLAS kernels
round differently).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from tinymodel import build, save_local  # noqa: E402


def main(folder: Path) -> None:
    save_local(build(), folder)
    print(f"wrote {folder}: a tiny GPT-2 (d = 32, 343 tokens); try gpt2emb neighbors cat -m {folder}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "tiny-gpt2"))
