"""A first use against the plain fetch of the same bytes: the download floor, on a loopback Hub.

    python bench/first_use.py [--runs 6] [--models gpt2,gpt2-xl] [--out docs/performance.md]

bench/run.py calls it for its "First use" section; alone, it prints that section (and writes it with --out).
It builds gpt2- and gpt2-xl-shaped checkpoints as bench/run.py does (real shapes, GPT-2's real tokenizer,
random wte and wpe) and serves them from the tests' fake Hub (tests/fakehub.py). Each round runs, one after
the other on a fresh cache each:

- the plain fetch: a shell script that fetches with curl what a first use needs (config.json, tokenizer.json,
  the checkpoint's 8-byte length, its header, wte's and wpe's byte ranges, each a request of its own) and
  hashes them once with sha256sum;
- gpt2emb: `gpt2emb neighbors king -m MODEL --json` with an empty HF cache and an empty gpt2emb cache.

The rounds are interleaved (a slow spell of the shared machine hits both alike) and paired: each round's
ratio is gpt2emb's time over that round's plain fetch. Which of the two runs first alternates from round to
round: on a virtual machine that hands memory freed for a while back to its host (as this one does, a couple
of seconds after), memory touched anew costs 2-3 ms per MB, and whichever ran right after the previous round's
cleanup found the memory it freed still at hand (an even number of rounds gives each order as often). It
reports the ratio's median and range, each way's median time and peak RSS (GNU time), the bytes each fetched
(counted by the fake Hub), and from one profiled run of gpt2emb (cProfile) where the time goes. The
profile's parts overlap where one holds another (an import made while building the tokenizer counts in
both); the profiler itself slows the run.
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import BIN, ROOT, make_checkpoint, put_section, spread, tokenizer_json

sys.path.insert(0, str(ROOT / "tests"))
from fakehub import Content, DiskFile, FakeHub, Repo

TITLE = "First use against a plain fetch"
MODEL = {"gpt2": "gpt2", "gpt2-xl": "xl"}
REPO = {"gpt2": "openai-community/gpt2", "gpt2-xl": "openai-community/gpt2-xl"}

PLAIN = """set -e
cd "$1"
u="$2"
curl -sf "$u/config.json" -o config.json
curl -sf "$u/tokenizer.json" -o tokenizer.json
curl -sf -r 0-7 "$u/model.safetensors" -o length
n=$(od -An -tu8 -N8 length | tr -d ' ')
curl -sf -r "8-$((7 + n))" "$u/model.safetensors" -o header.json
curl -sf -r "$3" "$u/model.safetensors" -o wte
curl -sf -r "$4" "$u/model.safetensors" -o wpe
sha256sum config.json tokenizer.json header.json wte wpe > sums
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall time (s), peak RSS (MiB, GNU time's: the largest of the process and its children) and CPU time
    (s, user + system, children included: less swayed than wall time by a busy machine)."""
    with tempfile.NamedTemporaryFile("r") as peak:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", peak.name, *cmd], env=env,
                              capture_output=True, text=True)  # fmt: skip
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
        rss, user, system = peak.read().split()[-3:]
        return wall, int(rss) / 1024, float(user) + float(system)


def ranges(folder: Path) -> tuple[str, str]:
    """wte's and wpe's byte ranges in the checkpoint, as curl's -r takes them (read from its header)."""
    from gpt2emb.store.formats import local_reader, parse_header

    path = folder / "model.safetensors"
    tensors = parse_header(local_reader(path), path.stat().st_size, path.name, str(path))
    return tuple(f"{t.start}-{t.end - 1}" for t in (tensors["wte.weight"], tensors["wpe.weight"]))  # type: ignore[return-value]


# where the time goes: the profile's cumulative time of the functions each part names (file, function)
PARTS: dict[str, list[tuple[str, str]]] = {
    "imports": [("<frozen importlib._bootstrap>", "_find_and_load")],
    "fetching": [
        ("store/hub.py", "fill"),
        ("file_download.py", "hf_hub_download"),
        ("file_download.py", "get_hf_file_metadata"),
    ],
    "tokenizer": [
        ("tokenizer_files.py", "tokenizer"),
        ("encoder_files.py", "written"),
        ("encoder_files.py", "wraps"),
    ],
    "converting": [
        ("formats.py", "_widened"),
        ("~", "numpy.ascontiguousarray"),
        ("entries.py", "_row_norms"),
    ],
    "hashing": [("~", "_hashlib.HASH"), ("writing.py", "row_crcs"), ("entries.py", "_fingerprint")],
    "writing": [("~", "_io.BufferedWriter"), ("~", "posix.replace"), ("~", "_io.FileIO")],
}


def profile_split(env: dict[str, str], name: str, work: Path) -> dict[str, float]:
    """One profiled first use: seconds per part (overlapping), and the whole run's."""
    out = work / f"{name}.prof"
    cmd = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "gpt2emb", "neighbors", "king", "-m",
           MODEL[name], "--json"]  # fmt: skip
    wall = timed(cmd, env)[0]
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    split: dict[str, float] = {}
    for part, names in PARTS.items():
        split[part] = sum(
            ct
            for (file, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.items()
            if any((f == "~" == file and g in func) or (file.endswith(f) and func == g) for f, g in names)
        )
    split["whole run (profiled)"] = wall
    return split


def paired(hub: FakeHub, work: Path, name: str, folder: Path, runs: int, base_env: dict[str, str],
           say: Callable[[str], None] = print) -> dict[str, object]:  # fmt: skip
    """Interleaved paired rounds of the plain fetch and gpt2emb's first use, each on a fresh cache."""
    url = f"{hub.url}/{REPO[name]}/resolve/main"
    wte, wpe = ranges(folder)
    script = work / "plain.sh"
    script.write_text(PLAIN)
    gpt2emb = str(BIN / "gpt2emb")
    plain_t, plain_rss, ours_t, ours_rss, ratios, plain_cpu, ours_cpu = [], [], [], [], [], [], []
    plain_bytes = ours_bytes = 0
    for r in range(runs + 1):  # round 0 warms the page cache and the disk's checkpoint for both: not counted
        fresh = Path(tempfile.mkdtemp(dir=work, prefix="round-"))
        (fresh / "plain").mkdir()
        env = {**base_env, "HF_HUB_CACHE": str(fresh / "hf"), "GPT2EMB_CACHE_DIR": str(fresh / "cache")}
        cmds = {
            "plain": ["sh", str(script), str(fresh / "plain"), url, wte, wpe],
            "ours": [gpt2emb, "neighbors", "king", "-m", MODEL[name], "--json"],
        }
        done, served = {}, {}
        for way in ("plain", "ours") if r % 2 else ("ours", "plain"):  # each goes first every other round
            hub.bytes_served = 0
            done[way] = timed(cmds[way], env)
            served[way] = hub.bytes_served
        p, o = done["plain"], done["ours"]
        plain_bytes, ours_bytes = served["plain"], served["ours"]
        shutil.rmtree(fresh, ignore_errors=True)
        if r == 0:
            continue
        plain_t.append(p[0])
        plain_rss.append(p[1])
        ours_t.append(o[0])
        ours_rss.append(o[1])
        ratios.append(o[0] / p[0])
        plain_cpu.append(p[2])
        ours_cpu.append(o[2])
        say(
            f"[{name}] round {r}: plain {p[0]:.2f} s, gpt2emb {o[0]:.2f} s, ratio {o[0] / p[0]:.2f}; "
            f"CPU plain {p[2]:.2f} s, gpt2emb {o[2]:.2f} s"
        )
    fresh = Path(tempfile.mkdtemp(dir=work, prefix="profiled-"))
    env = {**base_env, "HF_HUB_CACHE": str(fresh / "hf"), "GPT2EMB_CACHE_DIR": str(fresh / "cache")}
    split = profile_split(env, name, work)
    shutil.rmtree(fresh, ignore_errors=True)
    return {"plain": plain_t, "plain_rss": plain_rss, "ours": ours_t, "ours_rss": ours_rss, "ratio": ratios,
            "plain_cpu": plain_cpu, "ours_cpu": ours_cpu, "plain_bytes": plain_bytes,
            "ours_bytes": ours_bytes, "split": split}  # fmt: skip


def lines(results: dict[str, dict[str, object]], runs: int) -> list[str]:
    """The page's section: the ratio and each way's numbers, then where gpt2emb's time goes."""
    out = [
        f"## {TITLE}",
        "",
        "`gpt2emb neighbors king -m MODEL --json` on an empty cache against a plain fetch of the same",
        "bytes (curl for config.json, tokenizer.json, the checkpoint's header and wte's and wpe's byte",
        "ranges, then sha256sum once), from the loopback fake Hub; `python bench/first_use.py` (see its",
        f"docstring). {runs} interleaved paired rounds after a warm-up round, each on a fresh cache, which",
        "of the two runs first alternating from round to round: the median (range).",
        "",
        "| model | gpt2emb ÷ plain | plain fetch (s) | first use (s) | plain fetched | gpt2emb fetched "
        "| plain peak RSS (MiB) | first use peak RSS (MiB) | plain CPU (s) | first use CPU (s) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in results.items():

        def f(k: str, d: int = 2, r: dict[str, object] = r) -> str:
            return spread(r[k], d)  # type: ignore[arg-type]

        out.append(f"| {name} | **{f('ratio')}** | {f('plain')} | {f('ours')} "
                   f"| {r['plain_bytes'] / 1e6:,.1f} MB | {r['ours_bytes'] / 1e6:,.1f} MB "  # type: ignore[operator]
                   f"| {f('plain_rss', 0)} | {f('ours_rss', 0)} "
                   f"| {f('plain_cpu')} | {f('ours_cpu')} |")  # fmt: skip
    parts = list(next(iter(results.values()))["split"])  # type: ignore[call-overload]
    out += [
        "",
        "Where a first use's time goes (s), from one run under cProfile (parts overlap where one",
        "holds another):",
        "",
        "| model | " + " | ".join(parts) + " |",
        "| --- |" + " ---: |" * len(parts),
    ]
    for name, r in results.items():
        split: dict[str, float] = r["split"]  # type: ignore[assignment]
        out.append(f"| {name} | " + " | ".join(f"{split[p]:.2f}" for p in parts) + " |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=6, help="paired rounds (even: each order as often)")
    parser.add_argument("--models", default="gpt2,gpt2-xl", help="which shapes (comma-separated)")
    parser.add_argument("--out", type=Path, default=None, help="the page whose section to write")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-first-use-"))
    hub = FakeHub().start()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    base_env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_TELEMETRY": "1"}
    try:
        tokenizer = tokenizer_json()
        results = {}
        for name in args.models.split(","):
            folder = work / name
            make_checkpoint(folder, name, tokenizer)
            files: dict[str, Content] = {
                f: (folder / f).read_bytes() for f in ("config.json", "tokenizer.json")
            }
            files["model.safetensors"] = DiskFile(folder / "model.safetensors")
            hub.repos[REPO[name]] = Repo(f"{len(name):040d}", files)
            results[name] = paired(hub, work, name, folder, args.runs, base_env)
        section = lines(results, args.runs)
        print("\n".join(section))
        if args.out:
            put_section(args.out, TITLE, section)
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
