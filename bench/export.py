"""Time `gpt2emb export` on a gpt2-xl-shaped table, and its peak memory.

    python bench/export.py [--runs 3] [--out docs/performance.md]  # needs tests/data/gpt2-vocab; 5 minutes

It builds a gpt2-xl-shaped folder as bench/run.py does (GPT-2's real tokenizer, random wte and wpe: 50,257 x
1,600 and 1,024 x 1,600), opens it once so its cache entry exists, then runs each export as a whole process,
round after round (interleaved, no warm-up round: each run writes the whole table anyway), and reports the
median and range of wall time and of peak RSS (GNU time's %M), and the bytes written. The last run's files
are read back: the binary file through gensim, equal to the table to the bit; the first and last rows of
vectors.tsv likewise. With --out, the rows replace the page's export section (or follow the rest).
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import BIN, Run, machine, make_checkpoint, measure, tokenizer_json

SECTION = "## Export"
FORMATS = {"projector": "projector", "word2vec-binary": "gpt2-xl.bin", "word2vec": "gpt2-xl.txt"}


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size


def check(fmt: str, path: Path, wte: np.ndarray) -> None:
    """The files read back as the table, to the bit."""
    if fmt == "projector":
        with (path / "vectors.tsv").open() as f:
            first = f.readline()
            for line in f:
                last = line
        for row, line in ((0, first), (len(wte) - 1, last)):
            values = np.array(line.rstrip("\n").split("\t"), dtype=np.float64).astype(np.float32)
            assert np.array_equal(values.view(np.uint32), wte[row].view(np.uint32)), row
        return
    from gensim.models import KeyedVectors

    kv = KeyedVectors.load_word2vec_format(str(path), binary=fmt == "word2vec-binary")
    assert np.array_equal(kv.vectors.view(np.uint32), wte.view(np.uint32))


def section(found: dict[str, list[Run]], sizes: dict[str, int], runs: int) -> list[str]:
    lines = [
        SECTION,
        "",
        f"Run with `python bench/export.py` (see its docstring), {runs} rounds taking turns.",
        f"Machine: {machine()}.",
        "`gpt2emb export -m FOLDER --format F -o PATH --json` on a gpt2-xl-shaped table (50,257 x 1,600",
        "float32, 322 MB, warm cache); every run writes the whole table. Peak RSS includes the pages of the",
        "memory-mapped table that the run reads (all of them): the limit asked for is 1 GiB.",
        "",
        "| format | wall median (s) | wall range | peak RSS median (MiB) | RSS range | written |",
        "| --- | ---: | --- | ---: | --- | ---: |",
    ]
    for fmt, got in found.items():
        walls, rss = [r.wall for r in got], [r.rss for r in got]
        lines.append(
            f"| {fmt} | {statistics.median(walls):.1f} | {min(walls):.1f}-{max(walls):.1f} "
            f"| {statistics.median(rss):.0f} | {min(rss):.0f}-{max(rss):.0f} | {sizes[fmt] / 1e6:,.0f} MB |"
        )
    return lines


def write_section(out: Path, lines: list[str]) -> None:
    """The rows in place of the page's export section, or after the rest."""
    page, new = out.read_text(encoding="utf-8"), "\n".join(lines)
    if SECTION in page:
        before, rest = page.split(SECTION, 1)
        end = rest.find("\n## ")
        page = before + new + ("\n" + rest[end:] if end >= 0 else "\n")
    else:
        page = page.rstrip("\n") + "\n\n" + new + "\n"
    out.write_text(page, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--formats", default="projector,word2vec-binary", help=f"of {', '.join(FORMATS)}")
    parser.add_argument("--out", type=Path, default=None, help="the page whose section to replace")
    args = parser.parse_args()
    formats = args.formats.split(",")
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-export-"))
    try:
        env = {**os.environ, "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
        gpt2emb = str(BIN / "gpt2emb")
        folder = work / "gpt2-xl"
        wte = make_checkpoint(folder, "gpt2-xl", tokenizer_json())
        measure([gpt2emb, "neighbors", "cat", "-m", str(folder), "--json"], env, 1, warmup=False)  # the entry
        cmds = {
            fmt: [
                gpt2emb,
                "export",
                "-m",
                str(folder),
                "--format",
                fmt,
                "-o",
                str(work / FORMATS[fmt]),
                "--json",
            ]
            for fmt in formats
        }
        found: dict[str, list[Run]] = {fmt: [] for fmt in formats}
        for _ in range(args.runs):
            for fmt, cmd in cmds.items():
                run = measure(cmd, env, 1, warmup=False)
                assert json.loads(run.out)["rows"] == len(wte)
                found[fmt].append(run)
        sizes = {fmt: size(work / FORMATS[fmt]) for fmt in formats}
        for fmt in formats:
            check(fmt, work / FORMATS[fmt], wte)
        lines = section(found, sizes, args.runs)
        print("\n".join(lines))
        if args.out:
            write_section(args.out, lines)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
