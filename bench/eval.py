"""Benchmark `gpt2emb analogy --eval` against gensim's evaluate_word_analogies, same vectors, same candidates.

    pip install -e ".[bench]" && python bench/eval.py        # about 15 minutes on 2 cores

For each of the gpt2 and gpt2-xl shapes (bench/run.py's checkpoints: GPT-2's real vocabulary, random wte,
served by the tests' fake Hub), on gensim's questions-words.txt with 3CosAdd and case folded, round after
round: gensim's `evaluate_word_analogies` at its defaults (bench/gensim_eval.py, a KeyedVectors of exactly
gpt2emb's candidate words and rows, memory-mapped), `gpt2emb analogy --eval` as a whole process (warm cache),
and the matrix-product floor: the fast dot products of every candidate with the file's distinct words alone,
the same blocks gpt2emb computes, timed in this process. Medians, ranges and peak RSS; the counts of both
ways compared section by section. Prints the markdown rows and, with --out, puts them in docs/performance.md.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gensim.test.utils import datapath
from run import (
    BIN,
    ROOT,
    VOCAB,
    machine,
    make_checkpoint,
    measure,
    put_section,
    rounds,
    spread,
    tokenizer_json,
)

from gpt2emb.choices import Method, Rule
from gpt2emb.core import evaluate_files, evaluate_scoring
from gpt2emb.tokens import display

sys.path.insert(0, str(ROOT / "tests"))
from fakehub import Content, DiskFile, FakeHub, Repo

TITLE = "Benchmark evaluation"  # the section of docs/performance.md this script writes


@dataclass
class Row:
    model: str
    gensim: list[float]  # wall seconds, one per round
    ours: list[float]
    floor: list[float]
    gensim_rss: list[float]  # MiB
    ours_rss: list[float]
    sections: int  # sections compared, the total included
    agree: bool
    correct: int
    answered: int


def plant(folder: Path, wte: np.ndarray, questions: Path, most: int = 2000) -> int:
    """Make some questions answerable, in wte and in the checkpoint: d = b - a + c on the raw rows, a row
    set once and never one that a question planted before reads, so the counts compared are not all of
    wrong answers."""
    pieces = json.loads((VOCAB / "vocab.json").read_text(encoding="utf-8"))
    word_id = {display(p)[1:]: i for p, i in pieces.items() if display(p).startswith(" ")}
    fixed: set[int] = set()  # rows planted or read by a planting
    planted = 0
    for section in evaluate_files.read_analogies(questions):
        for words in section.questions:
            ids = [word_id.get(w) for w in words]
            if None in ids or len(set(ids)) < 4 or ids[3] in fixed or planted == most:
                continue
            a, b, c, d = (int(i) for i in ids if i is not None)
            wte[d] = wte[b] - wte[a] + wte[c]
            fixed.update((a, b, c, d))
            planted += 1
    with (folder / "model.safetensors").open("r+b") as f:
        size = int.from_bytes(f.read(8), "little")
        start = json.loads(f.read(size))["wte.weight"]["data_offsets"][0]
        f.seek(8 + size + start)
        f.write(np.ascontiguousarray(wte, "<f4").tobytes())
    return planted


def make_gensim_words(path: Path, wte: np.ndarray) -> None:
    """KeyedVectors of the words of gpt2emb's space rule (" king" is the word king): its candidates."""
    from gensim.models import KeyedVectors

    pieces = json.loads((VOCAB / "vocab.json").read_text(encoding="utf-8"))
    by_id = [p for p, _ in sorted(pieces.items(), key=lambda kv: kv[1])]
    words = evaluate_files.RuleWords.build(by_id, [display(p) for p in by_id], Rule.space, ignore_case=False)
    kv = KeyedVectors(vector_size=wte.shape[1])
    kv.add_vectors(words.words, wte[words.ids])
    kv.save(str(path))


def floor_seconds(wte: np.ndarray, questions: Path) -> float:
    """The dot products of every candidate with the file's words, block by block as gpt2emb computes them
    (unit rows, then one float32 matrix product per block), and nothing else."""
    pieces = json.loads((VOCAB / "vocab.json").read_text(encoding="utf-8"))
    by_id = [p for p, _ in sorted(pieces.items(), key=lambda kv: kv[1])]
    words = evaluate_files.RuleWords.build(by_id, [display(p) for p in by_id], Rule.space, ignore_case=True)
    found = [
        [words.find(w, True) for w in q]
        for s in evaluate_files.read_analogies(questions)
        for q in s.questions
    ]
    abc = np.array([f[:3] for f in found if None not in f], dtype=np.int64)
    q = evaluate_scoring._Questions.of(wte, words, abc, Method.cosadd, True)
    started = time.perf_counter()
    for _ in q.products(wte, words):
        pass
    return time.perf_counter() - started


def compare(name: str, wte: np.ndarray, work: Path, env: dict[str, str], questions: Path, runs: int) -> Row:
    kv = work / f"{name}-words.kv"
    make_gensim_words(kv, wte)
    for f in work.glob(f"{name}-words.kv*"):  # the page cache warm for gensim as for gpt2emb
        f.read_bytes()
    py = sys.executable
    ours_cmd = [str(BIN / "gpt2emb"), "analogy", "--eval", str(questions), "-m", name, "--method", "3cosadd",
                "--ignore-case", "--json"]  # fmt: skip
    gensim_cmd = [py, str(ROOT / "bench" / "gensim_eval.py"), str(kv), str(questions)]
    measure(ours_cmd, env, 1, warmup=False)  # builds the cache entry: every timed run is warm
    row = Row(name, [], [], [], [], [], 0, True, 0, 0)
    for r in range(runs):
        print(f"[{name}] round {r + 1} of {runs}", flush=True)
        theirs, ours = measure(gensim_cmd, env, 1, warmup=False), measure(ours_cmd, env, 1, warmup=False)
        row.floor.append(floor_seconds(wte, questions))
        row.gensim.append(theirs.wall)
        row.ours.append(ours.wall)
        row.gensim_rss.append(theirs.rss)
        row.ours_rss.append(ours.rss)
        g, o = json.loads(theirs.out), json.loads(ours.out)
        mine = [*o["sections"], o["total"]]
        same = [(s["section"], s["correct"], s["incorrect"]) for s in mine] == list(
            zip(g["sections"], g["correct"], g["incorrect"], strict=True)
        )
        row.agree &= same
        row.sections = len(mine)
        row.correct, row.answered = o["total"]["correct"], o["total"]["correct"] + o["total"]["incorrect"]
    return row


def markdown(rows: list[Row], runs: int) -> list[str]:
    lines = [
        f"## {TITLE}",
        "",
        f"Run on {time.strftime('%Y-%m-%d')} with `python bench/eval.py` (see its docstring).",
        f"Machine: {machine()}.",
        "`questions-words.txt` (gensim's copy, 19,544 questions), 3CosAdd, case-insensitive, words as",
        "` word` tokens; gensim at its defaults on a KeyedVectors of exactly gpt2emb's candidate words and",
        "rows. Random tables in which some questions are made answerable (d = b - a + c on the raw rows),",
        f"so the counts compared hold right answers too. Each way as a whole process, {runs} rounds taking",
        "turns: median (min-max). The floor is the fast dot products of every candidate with the file's",
        "distinct words alone, as gpt2emb computes them, in one process.",
        "",
        "| model | gensim (s) | gpt2emb (s) | gensim ÷ gpt2emb | floor (s) | gensim RSS (MiB) | gpt2emb RSS "
        "| counts, section by section |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        ratio = statistics.median(r.gensim) / statistics.median(r.ours)
        same = "equal" if r.agree else "DIFFERENT"
        lines.append(
            f"| {r.model} | {spread(r.gensim, 1)} | {spread(r.ours, 2)} | **{ratio:.0f}x** "
            f"| {spread(r.floor, 2)} | {statistics.median(r.gensim_rss):.0f} "
            f"| {statistics.median(r.ours_rss):.0f} "
            f"| {same} in all {r.sections} ({r.correct} of {r.answered} right) |"
        )
    return lines


def main() -> None:
    parser = rounds(__doc__)
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where checkpoints go (default: a temp dir)"
    )
    args = parser.parse_args()
    questions = Path(datapath("questions-words.txt"))
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-eval-", dir=args.workdir))
    hub = FakeHub().start()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(work / "hf"),
           "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip
    rows = []
    try:
        tokenizer = tokenizer_json()
        for name in args.models.split(","):
            print(f"[{name}] building the checkpoint", flush=True)
            folder = work / name
            wte = make_checkpoint(folder, name, tokenizer)
            print(f"[{name}] {plant(folder, wte, questions)} questions made answerable", flush=True)
            files: dict[str, Content] = {
                f: (folder / f).read_bytes() for f in ("config.json", "tokenizer.json")
            }
            files["model.safetensors"] = DiskFile(folder / "model.safetensors")
            hub.repos[f"openai-community/{name}"] = Repo(f"{len(name):040d}", files)
            rows.append(compare(name, wte, work, env, questions, args.runs))
            del wte
            shutil.rmtree(folder)
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)
    lines = markdown(rows, args.runs)
    print("\n".join(lines))
    if args.out:
        put_section(args.out, TITLE, lines)
    if not all(r.agree for r in rows):
        raise SystemExit("gpt2emb and gensim count differently")


if __name__ == "__main__":
    main()
