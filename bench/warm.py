"""Warm queries against their floor (issue 30), run by hand to catch a regression: exits 1 past a limit.

    python bench/warm.py                      # about 5 minutes with the default 7 rounds
    python bench/warm.py --runs 9 --workdir /tmp/gpt2emb-warm --out docs/performance.md

It builds (or, in --workdir, reuses) a gpt2-shaped checkpoint (bench/run.py's: GPT-2's real shapes and
tokenizer, random wte/wpe, zeros elsewhere), fetches it once through the tests' loopback fake Hub into a
gpt2emb cache entry and the HF cache, and then runs every way offline as a whole process, in interleaved
rounds after one warm-up round (each way once per round, so a slow spell of a shared machine hits all ways
alike): wall time, and peak RSS from GNU time. Figures are the median of the rounds with their min-max range;
a ratio is the median of each round's own ratio.

The ways: the floor (bench/floor.py: wte and its norms memory-mapped from the same entry, one matrix-vector
product, argpartition, 11 rows printed); gpt2emb's warm neighbors, analogy and vector, each with --json
written to a file and as the table a person sees (run in a pseudo-terminal by script(1), so rich sees a
terminal, with COLUMNS=100; the floor runs both ways too, and each is held against the floor run alike);
gensim's KeyedVectors.load(mmap="r") + most_similar (bench/gensim_peer.py); the lab way (bench/lab.py). Then
every other command's warm cost, and context against a plain transformers script (bench/context_plain.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from run import BIN, machine, make_checkpoint, make_gensim, put_section, tokenizer_json  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from gpt2emb import commands  # noqa: E402

from fakehub import Content, DiskFile, FakeHub, Repo  # noqa: E402

REPO, COMMIT = "openai-community/gpt2", "4" * 40
# (limit name, the most it may be): each is checked against the median of the rounds' ratios
LIMITS = {"json ÷ floor": 1.5, "table ÷ floor": 1.8, "RSS ÷ floor's": 1.1, "÷ gensim": 0.20, "÷ lab": 0.04}
CONTEXT_LIMITS = {"wall": 1.0, "RSS": 1.2}
# the rows, as each command's stem declares them (gpt2emb/commands/STEM.py): those held against the floor
# (the words of each), then every other command's
DECLARED = [c for c in commands.commands() if c.warm]
WORDS = {c.name: list(c.warm[1:]) for c in DECLARED if c.floor}
OTHERS = [list(c.warm) for c in DECLARED if not c.floor]
CONTEXT = next(row[1:] for row in OTHERS if row[0] == "context")  # also run by the plain script
SECTION_WARM = "Warm queries against the floor"
SECTION_OTHERS = "Every other command, warm"


@dataclass
class Way:
    name: str
    cmd: list[str]
    pty: bool = False  # run in a pseudo-terminal (the table a person sees); else stdout to a file
    walls: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)  # MiB
    out: str = ""


def run_once(way: Way, env: dict[str, str], work: Path, keep: bool) -> None:
    """One run of a way as a whole process: its wall time, and its peak RSS by GNU time (a child's own rusage
    would count the memory of this process it was forked from)."""
    cmd = [part.replace("{out}", str(work / "export.txt")) for part in way.cmd]
    if way.pty:  # script(1) gives the command a pseudo-terminal; -e: its exit code
        cmd = ["script", "-qec", shlex.join(cmd), "/dev/null"]
    with tempfile.NamedTemporaryFile("r") as peak, open(work / "stdout", "w+b") as out:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name, *cmd], env=env,
                              stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE)  # fmt: skip
        wall = time.perf_counter() - t0
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{text}{proc.stderr.decode()}")
        kib = int(peak.read().split()[-1])
    way.out = text
    if keep:
        way.walls.append(wall)
        way.rss.append(kib / 1024)


def prepare(work: Path) -> tuple[dict[str, str], Path, Path]:
    """The environment every way runs in (offline), the gpt2-shaped checkpoint folder and the cache entry's
    folder: built on the first run in work, reused after."""
    env = {**os.environ, "HF_HUB_CACHE": str(work / "hf"), "GPT2EMB_CACHE_DIR": str(work / "cache"),
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1", "SHELL": "/bin/sh",
           "COLUMNS": "100"}  # fmt: skip
    # PYTHONDONTWRITEBYTECODE would make every way recompile its modules on every run: nobody runs like that
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    folder = work / "gpt2"
    if not (work / "ready").exists():
        print(f"building a gpt2-shaped checkpoint in {work}", flush=True)
        wte = make_checkpoint(folder, "gpt2", tokenizer_json())
        make_gensim(work / "gpt2.kv", wte)
        del wte
        files: dict[str, Content] = {f: (folder / f).read_bytes() for f in ("config.json", "tokenizer.json")}
        files["model.safetensors"] = DiskFile(folder / "model.safetensors")
        hub = FakeHub().start()
        hub.repos[REPO] = Repo(COMMIT, files)
        online = {**env, "HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0"}
        try:  # first use: the entry, then the whole checkpoint in the HF cache for context
            for first in (["neighbors", "cat", "--json"], ["context", *CONTEXT, "--json"]):
                proc = subprocess.run([str(BIN / "gpt2emb"), *first], env=online, capture_output=True)
                if proc.returncode != 0:
                    raise SystemExit(f"gpt2emb {' '.join(first)} failed:\n{proc.stderr.decode()}")
        finally:
            hub.stop()
        (work / "ready").touch()
    # the entry's folder as gpt2emb lays it out (store/entries.py): hub/<repo with -->/<commit>/
    entry = work / "cache" / "hub" / REPO.replace("/", "--") / COMMIT
    return env, folder, entry


def ways(folder: Path, entry: Path, work: Path) -> tuple[list[Way], list[Way]]:
    """The ways held against the limits, then every other command's (and context's plain script)."""
    py, ours = sys.executable, str(BIN / "gpt2emb")
    pieces = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    floor = [py, str(ROOT / "bench" / "floor.py"), str(entry), str(pieces["Ġcat"])]
    limited = [Way("floor", floor), Way("floor (table)", floor, pty=True)]
    for command, words in WORDS.items():
        limited += [
            Way(f"{command} --json", [ours, command, *words, "--json"]),
            Way(f"{command} (table)", [ours, command, *words], pty=True),
        ]
    kv = str(work / "gpt2.kv")
    for task in ("neighbors", "analogy"):
        limited += [
            Way(f"gensim {task}", [py, str(ROOT / "bench" / "gensim_peer.py"), task, kv, *WORDS[task]]),
            Way(f"lab {task}", [py, str(ROOT / "bench" / "lab.py"), task, str(folder), *WORDS[task]]),
        ]
    snapshot = next((work / "hf").glob("models--*/snapshots/*"))  # the files gpt2emb context runs
    others = [Way(" ".join(cmd), [ours, *cmd, "--json"]) for cmd in OTHERS]
    others.append(
        Way("plain context", [py, str(ROOT / "bench" / "context_plain.py"), str(snapshot), *CONTEXT])
    )
    return limited, others


def check_answers(named: dict[str, Way]) -> None:
    """The ways answer alike: gpt2emb's 10 neighbors of cat are the floor's (the query itself aside)."""
    floor_ids = [int(line.split()[0]) for line in named["floor"].out.splitlines()]
    doc = json.loads(named["neighbors --json"].out)
    ours = [n["id"] for n in doc["items"][0]["neighbors"]]
    if ours != floor_ids[1:]:
        raise SystemExit(f"gpt2emb's neighbors {ours} are not the floor's {floor_ids[1:]}")


def spread(values: list[float], digits: int) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def ratios(a: Way, b: Way, rss: bool = False) -> list[float]:
    """Each round's ratio of a to b."""
    pairs = zip(a.rss, b.rss, strict=True) if rss else zip(a.walls, b.walls, strict=True)
    return [x / y for x, y in pairs]


def judged(values: list[float], limit: float) -> tuple[str, bool]:
    m = statistics.median(values)
    ok = m <= limit
    return f"{m:.2f} ({min(values):.2f}-{max(values):.2f}) {'≤' if ok else '>'} {limit:g}", ok


def limits_table(named: dict[str, Way]) -> tuple[list[str], bool]:
    lines = [
        "| command | wall (s) | peak RSS (MiB) | ÷ floor, wall | ÷ floor, RSS | ÷ gensim | ÷ lab |",
        "| --- | ---: | ---: | --- | --- | --- | --- |",
    ]
    ok = True
    for name in ("floor", "floor (table)"):
        w = named[name]
        lines.append(f"| {name} | {spread(w.walls, 3)} | {spread(w.rss, 0)} | | | | |")
    for command in WORDS:
        peer = "neighbors" if command == "vector" else command  # vector: against the peers' neighbors
        shown_as = (("--json", "floor", "json ÷ floor"), ("(table)", "floor (table)", "table ÷ floor"))
        for shown, floor, limit in shown_as:
            w = named[f"{command} {shown}"]
            cells = [judged(ratios(w, named[floor]), LIMITS[limit]),
                     judged(ratios(w, named[floor], rss=True), LIMITS["RSS ÷ floor's"])]  # fmt: skip
            if shown == "--json":
                cells += [judged(ratios(w, named[f"gensim {peer}"]), LIMITS["÷ gensim"]),
                          judged(ratios(w, named[f"lab {peer}"]), LIMITS["÷ lab"])]  # fmt: skip
            ok = ok and all(good for _, good in cells)
            shown_cells = [text if good else f"**{text}**" for text, good in cells] + [""] * (4 - len(cells))
            lines.append(f"| `{command} {shown}` | {spread(w.walls, 3)} | {spread(w.rss, 0)} | "
                         + " | ".join(shown_cells) + " |")  # fmt: skip
    for task in ("neighbors", "analogy"):
        for who in ("gensim", "lab"):
            w = named[f"{who} {task}"]
            lines.append(f"| {who} {task} | {spread(w.walls, 2)} | {spread(w.rss, 0)} | | | | |")
    return lines, ok


def dominant(way: Way, env: dict[str, str], work: Path) -> str:
    """What a command's time goes to, from one run of each: its imports (-X importtime: the total, and the
    three packages whose modules take longest, by their own time), then the function of gpt2emb's, outside
    cli/, with the longest cumulative time (cProfile)."""
    cmd = [part.replace("{out}", str(work / "export.txt")) for part in way.cmd[1:]]
    launch = "import sys; sys.argv = ['gpt2emb', *sys.argv[1:]]; from gpt2emb.cli import main; main()"
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", launch, *cmd], env=env,
                          capture_output=True, text=True)  # fmt: skip
    own: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \| *(\S+)", line)
        if found:
            package = found.group(2).split(".")[0]
            own[package] = own.get(package, 0) + int(found.group(1))
    top = sorted(own.items(), key=lambda kv: -kv[1])[:3]
    imports = (
        f"imports {sum(own.values()) / 1000:.0f} ms ("
        + ", ".join(f"{p} {t / 1000:.0f}" for p, t in top)
        + ")"
    )
    profile = work / "profile.out"
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "gpt2emb", *cmd], env=env,
                   capture_output=True, check=True)  # fmt: skip
    import pstats

    stats = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    ours = sorted(
        ((v[3], k[2], Path(k[0]).name) for k, v in stats.items()
         if "/gpt2emb/" in k[0] and "/cli/" not in k[0] and not k[2].startswith("<")),
        reverse=True,
    )  # fmt: skip
    return imports + (f"; {ours[0][1]} ({ours[0][2]}) {ours[0][0] * 1000:.0f} ms" if ours else "")


def others_table(named: dict[str, Way], env: dict[str, str], work: Path) -> tuple[list[str], bool]:
    lines = [
        "| command (`--json`) | wall (s) | peak RSS (MiB) | what dominates (ms, one run) |",
        "| --- | ---: | ---: | --- |",
    ]
    for cmd in OTHERS:
        w = named[" ".join(cmd)]
        shown = " ".join(cmd).replace("{out}", "FILE")
        lines.append(f"| `{shown}` | {spread(w.walls, 3)} | {spread(w.rss, 0)} | {dominant(w, env, work)} |")
    plain = named["plain context"]
    lines.append(f"| plain transformers script (bench/context_plain.py) | {spread(plain.walls, 3)} "
                 f"| {spread(plain.rss, 0)} | |")  # fmt: skip
    ours = named[" ".join(["context", *CONTEXT])]
    wall, ok_wall = judged(ratios(ours, plain), CONTEXT_LIMITS["wall"])
    rss, ok_rss = judged(ratios(ours, plain, rss=True), CONTEXT_LIMITS["RSS"])
    lines += ["", f"context ÷ the plain script: wall {wall}, RSS {rss}."]
    return lines, ok_wall and ok_rss


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=7, help="timed rounds (at least 3), after a warm-up round"
    )
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "gpt2emb-bench-warm",
                        help="where the checkpoint, gensim's file and the caches go (reused)")  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=None, help="a docs/performance.md whose sections to replace"
    )
    parser.add_argument("--skip-others", action="store_true", help="only the ways the limits hold")
    args = parser.parse_args()
    if args.runs < 3:
        raise SystemExit("--runs must be 3 or more")
    args.workdir.mkdir(parents=True, exist_ok=True)
    env, folder, entry = prepare(args.workdir)
    limited, others = ways(folder, entry, args.workdir)
    every = limited + ([] if args.skip_others else others)
    load = os.getloadavg()
    for r in range(args.runs + 1):
        print(f"round {r}/{args.runs}{' (warm-up)' if r == 0 else ''}", flush=True)
        for way in every:
            run_once(way, env, args.workdir, keep=r > 0)
    load_after = os.getloadavg()
    named = {w.name: w for w in every}
    check_answers(named)
    head = [
        f"Machine: {machine()}.",
        f"Run on {time.strftime('%Y-%m-%d')} with `python bench/warm.py` (see its docstring): a gpt2-shaped "
        f"entry, {args.runs} interleaved rounds after a warm-up round, median (min-max); a ratio is the "
        "median of each round's own ratio, **bold** when past its limit. Load average (1, 5, 15 min) before: "
        f"{', '.join(f'{x:.2f}' for x in load)}; after: {', '.join(f'{x:.2f}' for x in load_after)}.",
        "",
    ]
    table, ok = limits_table(named)
    warm = [f"## {SECTION_WARM}", "", *head,
            "A table runs in a pseudo-terminal (script(1), COLUMNS=100) and is held against the floor run so"
            " too; --json writes to a file. vector is held against gensim's and the lab's neighbors.",
            "", *table]  # fmt: skip
    print("\n".join(warm))
    if not args.skip_others:
        rest, ok_context = others_table(named, env, args.workdir)
        other = [f"## {SECTION_OTHERS}", "", *head, *rest]
        print("\n" + "\n".join(other))
        ok = ok and ok_context
    if args.out is not None:
        put_section(args.out, SECTION_WARM, warm)
        if not args.skip_others:
            put_section(args.out, SECTION_OTHERS, other)
    print("every limit holds" if ok else "a limit is past (bold above)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
