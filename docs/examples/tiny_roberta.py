"""Build ./tiny-roberta, the masked language model of the logits page's examples, so you can run them too:

    python docs/examples/tiny_roberta.py [FOLDER]      # from the repository's root; FOLDER: ./tiny-roberta

It is the test suite's tiny RoBERTa (tests/tiny_roberta.py), saved by transformers' RobertaForMaskedLM and
save_pretrained: a byte-level BPE of 347 tokens with <s> </s> <mask>, d = 32, two blocks, 64 positions, the
tiny GPT-2's planted rows (cats and kitten next to cat), and a masked-language head as transformers starts
one (seeded: the same bytes on every machine). Its answers are not RoBERTa's: an example on it shows what a
command prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from tiny_roberta import build


def main(folder: Path) -> None:
    build(folder)
    print(f"saved the tiny RoBERTa in {folder}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=Path("tiny-roberta"))
    main(parser.parse_args().folder)
