"""Benchmark gpt2emb against the lab way and gensim, on GPT-2-shaped checkpoints with random weights.

    pip install -e ".[bench]" && python bench/run.py          # about 10 minutes; writes docs/performance.md

It builds gpt2- and gpt2-xl-shaped checkpoints in a temporary folder (real shapes, GPT-2's real tokenizer from
tests/data/gpt2-vocab, random wte and wpe, zeros elsewhere), serves them from a loopback fake Hub, and times
each way as a whole process (wall time and peak RSS, median of several runs after one warm-up run):
the lab way (transformers AutoModel + AutoTokenizer + torch cosine), gensim's KeyedVectors loaded
memory-mapped, and gpt2emb with a warm cache. It also counts the bytes a first use downloads and times
building the cache from a checkpoint already on disk, and times the first use against the plain fetch of the
same bytes in paired rounds (bench/first_use.py: its ratio, bytes, peak memory and where the time goes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np

from gpt2emb.tokens import display

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fakehub import Content, DiskFile, FakeHub, Repo, VirtualFile  # noqa: E402  (the tests' fake Hub and shapes)
from tinymodel import gpt2_tensor_shapes, virtual_safetensors  # noqa: E402

VOCAB = ROOT / "tests" / "data" / "gpt2-vocab"  # GPT-2's real tokenizer files (MIT)
SHAPES = {"gpt2": (768, 12, 12), "gpt2-xl": (1600, 48, 25)}
BIN = Path(sys.executable).parent
# the sections of docs/performance.md written here; the others (bench/eval.py's, ...) are kept as they stand
MINE = (
    "Warm queries",
    "Light commands, and the warm queries as tables",
    "First use",
    "First use against a plain fetch",
)


@dataclass
class Run:
    wall: float  # seconds, median
    rss: float  # MiB, median of peak RSS
    out: str


def measure(
    cmd: list[str], env: dict[str, str], runs: int, warmup: bool = True, stdin: Path | None = None
) -> Run:
    """Median wall time and peak RSS of a whole process (stdin: a file it reads). GNU time reports the RSS:
    a child's own rusage would count the memory of this (large) process it was forked from."""
    walls, rss, out = [], [], ""
    for i in range(runs + (1 if warmup else 0)):
        with tempfile.NamedTemporaryFile("r") as peak, open(stdin or os.devnull, "rb") as given:
            t0 = time.perf_counter()
            proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name, *cmd], env=env, stdin=given,
                                  capture_output=True, text=True)  # fmt: skip
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
            kib = int(peak.read().split()[-1])
        out = proc.stdout
        if warmup and i == 0:
            continue
        walls.append(wall)
        rss.append(kib / 1024)
    return Run(statistics.median(walls), statistics.median(rss), out)


def interleaved(cmds: list[list[str]], env: dict[str, str], runs: int) -> list[Run]:
    """Each way once per round, round after round: a slow spell of a shared machine hits all ways alike."""
    rounds = [[measure(cmd, env, 1, warmup=r == 0) for cmd in cmds] for r in range(runs)]
    return [
        Run(
            statistics.median(r[i].wall for r in rounds),
            statistics.median(r[i].rss for r in rounds),
            rounds[-1][i].out,
        )
        for i in range(len(cmds))
    ]


def tokenizer_json() -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(VOCAB / "vocab.json"), str(VOCAB / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text: str = tok.to_str()
    return text


def make_checkpoint(folder: Path, name: str, tokenizer: str) -> np.ndarray:
    """A Hub-style GPT-2 folder: config, tokenizer, model.safetensors (random wte/wpe, zeros elsewhere)."""
    d, layers, heads = SHAPES[name]
    rng = np.random.default_rng(0)
    wte = (rng.standard_normal((50257, d), dtype=np.float32) * 0.1).astype(np.float32)
    wpe = (rng.standard_normal((1024, d), dtype=np.float32) * 0.01).astype(np.float32)
    file = virtual_safetensors(
        gpt2_tensor_shapes(50257, d, 1024, layers), {"wte.weight": wte, "wpe.weight": wpe}
    )
    write_virtual(folder / "model.safetensors", file)
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 50257, "n_embd": d,
              "n_positions": 1024, "n_ctx": 1024, "n_layer": layers, "n_head": heads, "bos_token_id": 50256,
              "eos_token_id": 50256}  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text(tokenizer)
    return wte


def write_virtual(path: Path, file: VirtualFile) -> None:
    """A virtual file on disk: its segments written, the rest left a hole that reads as zeros."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        for offset, data in file.segments:
            f.seek(offset)
            f.write(data)
        f.truncate(file.size)


def make_gensim(path: Path, wte: np.ndarray) -> None:
    from gensim.models import KeyedVectors

    pieces = json.loads((VOCAB / "vocab.json").read_text(encoding="utf-8"))
    keys = [display(p) for p, _ in sorted(pieces.items(), key=lambda kv: kv[1])]
    kv = KeyedVectors(vector_size=wte.shape[1])
    kv.add_vectors(keys, wte)
    kv.save(str(path))


def section(out: Path, title: str) -> str | None:
    """A section of the page as it stands (its "## title" line to the next section), None if absent."""
    page = out.read_text(encoding="utf-8") if out.exists() else ""
    heading = f"## {title}"
    if heading not in page:
        return None
    text = heading + page.split(heading, 1)[1]
    end = text.find("\n## ")
    return (text[:end] if end >= 0 else text).rstrip("\n")


def put_section(out: Path, title: str, lines: list[str]) -> None:
    """Write a section into the page: in place of the one of that title, or after the rest."""
    page, old, new = out.read_text(encoding="utf-8"), section(out, title), "\n".join(lines)
    out.write_text(
        page.replace(old, new) if old else page.rstrip("\n") + "\n\n" + new + "\n", encoding="utf-8"
    )


def kept_sections(out: Path) -> list[str]:
    """The sections this script does not write (other bench scripts measure them), as they stand."""
    page = out.read_text(encoding="utf-8") if out.exists() else ""
    titles = [line[3:] for line in page.splitlines() if line.startswith("## ")]
    found = (section(out, t) for t in titles if t not in MINE)
    return [s for s in found if s]


def spread(values: list[float], digits: int) -> str:
    """A measurement as the pages quote it: the median, then the range."""
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def rounds(doc: str | None) -> argparse.ArgumentParser:
    """The options of a benchmark run in rounds over the model shapes, writing one section of the page."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="rounds per model")
    parser.add_argument("--models", default="gpt2,gpt2-xl", help="which shapes (comma-separated)")
    parser.add_argument("--out", type=Path, default=None, help="the page whose section to replace")
    return parser


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())  # fmt: skip
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    libs = ", ".join(
        f"{p} {version(p)}" for p in ("numpy", "torch", "transformers", "gensim", "huggingface_hub")
    )
    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}; {libs}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7, help="timed runs per gpt2 measurement")
    parser.add_argument("--xl-runs", type=int, default=3, help="timed runs per gpt2-xl measurement")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--models", default="gpt2,gpt2-xl", help="which shapes to build (comma-separated)")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the checkpoints go (default: a temp dir)"
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gpt2emb-bench-", dir=args.workdir))
    try:
        report(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(work: Path, args: argparse.Namespace) -> None:
    tokenizer = tokenizer_json()
    hub = FakeHub().start()
    # PYTHONDONTWRITEBYTECODE would make every way recompile its modules on every run: nobody runs like that
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    base_env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(work / "hf"),
                "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip
    py, gpt2emb = sys.executable, str(BIN / "gpt2emb")
    rows: list[tuple[str, Run | None, Run | None, Run]] = []
    facts: dict[str, float] = {}
    firsts: dict[str, dict[str, object]] = {}
    for name in args.models.split(","):
        model = {"gpt2": "gpt2", "gpt2-xl": "xl"}[name]
        runs = args.runs if name == "gpt2" else args.xl_runs
        print(f"[{name}] building the checkpoint", flush=True)
        folder = work / name
        wte = make_checkpoint(folder, name, tokenizer)
        make_gensim(work / f"{name}.kv", wte)
        del wte
        files: dict[str, Content] = {f: (folder / f).read_bytes() for f in ("config.json", "tokenizer.json")}
        files["model.safetensors"] = DiskFile(folder / "model.safetensors")
        hub.repos[f"openai-community/{name}"] = Repo(f"{len(name):040d}", files)
        size = (folder / "model.safetensors").stat().st_size

        print(f"[{name}] first use through the fake Hub, against the plain fetch", flush=True)
        from first_use import paired  # beside this script; it imports this one

        first = paired(hub, work, name, folder, runs, base_env)
        firsts[name] = first
        facts[f"{name}_downloaded"] = first["ours_bytes"]  # type: ignore[assignment]
        facts[f"{name}_size"] = size
        facts[f"{name}_first_use"] = statistics.median(first["ours"])  # type: ignore[arg-type]

        print(f"[{name}] building the cache from the checkpoint on disk", flush=True)
        builds = []
        for i in range(runs):
            env = {**base_env, "GPT2EMB_CACHE_DIR": str(work / f"build-{name}-{i}")}
            builds.append(
                measure([gpt2emb, "neighbors", "cat", "-m", str(folder), "--json"], env, 1, warmup=False)
            )
        facts[f"{name}_build"] = statistics.median(b.wall for b in builds)

        tasks = [("neighbors", ["cat"])] + ([("analogy", ["king", "man", "woman"])] if name == "gpt2" else [])
        for task, words in tasks:
            print(f"[{name}] {task}: lab way, gensim, gpt2emb", flush=True)
            kv = str(work / f"{name}.kv")
            lab, peer, ours = interleaved(
                [
                    [py, str(ROOT / "bench" / "lab.py"), task, str(folder), *words],
                    [py, str(ROOT / "bench" / "gensim_peer.py"), task, kv, *words],
                    [gpt2emb, task, *words, "-m", model, "--json"],
                ],
                base_env,
                runs,
            )
            rows.append((f"{task} {' '.join(words)} ({name})", lab, peer, ours))
            facts[f"{name}_{task}_lab"] = lab.wall
    hub.stop()
    light = {cmd: measure([gpt2emb, *cmd.split()], base_env, args.runs) for cmd in ("--help", "sizes")}
    if "gpt2" in args.models.split(","):  # what a person at a shell sees: a rich table, not JSON
        for cmd in ("neighbors cat", "analogy king man woman"):
            light[cmd] = measure([gpt2emb, *cmd.split()], {**base_env, "COLUMNS": "100"}, args.runs)
    write(args.out, rows, facts, light)
    from first_use import TITLE, lines

    put_section(args.out, TITLE, lines(firsts, args.runs))


def write(out: Path, rows: list[tuple[str, Run | None, Run | None, Run]], facts: dict[str, float],
          light: dict[str, Run]) -> None:  # fmt: skip
    lines = [
        "# Performance",
        "",
        "What gpt2emb costs, measured against three peers: *the lab way* (the chapter's lab script:",
        "transformers loads the whole model and torch computes, on every run), gensim's memory-mapped",
        "`KeyedVectors`, and *the floor* (a plain numpy script doing only a warm query's own work:",
        "`bench/floor.py`). Each section is written by the bench script it names;",
        "[development](development.md#benchmarks) lists them.",
        "",
        f"Machine: {machine()}.",
        f"Run on {time.strftime('%Y-%m-%d')} with `python bench/run.py` (see its docstring).",
        "Checkpoints have GPT-2's real shapes and tokenizer, random `wte`/`wpe` and zeros elsewhere;",
        "each way runs as a whole process, the median of several runs after one warm-up run (so the page",
        "cache is warm for every way alike).",
        "",
        "## Warm queries",
        "",
        "| task | lab way (s) | gensim mmap (s) | gpt2emb (s) | lab ÷ gpt2emb | gensim ÷ gpt2emb "
        "| lab RSS (MiB) | gensim RSS | gpt2emb RSS | gpt2emb RSS ÷ lab |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for task, lab, peer, ours in rows:
        assert lab is not None and peer is not None
        lines.append(
            f"| {task} | {lab.wall:.2f} | {peer.wall:.2f} | {ours.wall:.3f} "
            f"| **{lab.wall / ours.wall:.0f}x** | **{peer.wall / ours.wall:.1f}x** "
            f"| {lab.rss:.0f} | {peer.rss:.0f} | {ours.rss:.0f} "
            f"| {ours.rss / lab.rss:.2f} |"
        )
    for kept in kept_sections(out):  # written by bench/eval.py, bench/stdin.py, ...: kept as they stand
        lines += ["", kept]
    lines += ["", "## Light commands, and the warm queries as tables", "",
              "A table (what a person at a shell sees) adds the import of rich to the JSON path above.",
              "", "| command | wall (s) | peak RSS (MiB) |", "| --- | ---: | ---: |"]  # fmt: skip
    lines += [f"| `gpt2emb {cmd}` | {r.wall:.3f} | {r.rss:.0f} |" for cmd, r in light.items()]
    lines += ["", "## First use", "", "| model | checkpoint | downloaded | share | first use (s) "
              "| cache built from a checkpoint on disk (s) | lab way's whole run (s) | build ÷ lab |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for name in (n for n in SHAPES if f"{n}_size" in facts):
        size, got = facts[f"{name}_size"], facts[f"{name}_downloaded"]
        lab = facts[f"{name}_neighbors_lab"]
        lines.append(
            f"| {name} | {size / 1e6:,.0f} MB | {got / 1e6:,.1f} MB | {100 * got / size:.1f}% "
            f"| {facts[f'{name}_first_use']:.2f} | {facts[f'{name}_build']:.2f} | {lab:.2f} "
            f"| {facts[f'{name}_build'] / lab:.2f} |"
        )
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
