"""A warm query on roberta-base against gpt2, and the bytes a first use of roberta-base and of a rotary
model (SmolLM-135M-shaped) fetches from a Hub.

    python bench/families.py [--runs 5]      # prints markdown tables

(a) Warm `neighbors cat --json` on a roberta-base-shaped folder and a gpt2-shaped one, as bench/chapter.py
times its rows: each folder opened once so its cache entry exists, then each command as a whole process,
round after round (interleaved, after one warm-up round), the median and range of wall time and peak RSS.

(b) The first use of a roberta-base-shaped repo served by the tests' fake Hub (tests/fakehub.py) as
FacebookAI/roberta-base, and of a SmolLM-135M-shaped one (a Llama: no position table) as
HuggingFaceTB/SmolLM-135M, each with a fresh HF cache and gpt2emb cache: every request of its log summed per
file (HEAD requests carry no body), and the total checked against the bytes the fake Hub counted.

The roberta-base checkpoint has RoBERTa's real layout and shapes: every parameter of transformers'
RobertaForMaskedLM at roberta-base's config (built on the meta device: no memory), 50,265 x 768 token rows,
514 position rows, a token-type row and the embedding layer norm; random token and position rows, zeros
elsewhere. Its tokenizer is GPT-2's vocabulary (tests/data/gpt2-vocab) with RoBERTa's five special tokens
added after it: GPT-2's vocabulary under RoBERTa's layout (the real RoBERTa holds the same byte-level BPE
pieces under other ids). The gpt2 folder is bench/run.py's; both draw their token rows from one seed, so
they hold the same rows under the same ids and must answer alike (checked).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chapter import rounds, row
from run import BIN, ROOT, make_checkpoint, measure, tokenizer_json, write_virtual

sys.path.insert(0, str(ROOT / "tests"))
from fakehub import Content, DiskFile, FakeHub, Repo
from tinymodel import virtual_safetensors

REPO = "FacebookAI/roberta-base"
ROBERTA_CONFIG: dict[str, Any] = {
    "model_type": "roberta",
    "architectures": ["RobertaForMaskedLM"],
    "vocab_size": 50265,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 514,
    "type_vocab_size": 1,
    "pad_token_id": 1,
    "bos_token_id": 0,
    "eos_token_id": 2,
    "layer_norm_eps": 1e-05,
}


ROTARY_REPO = "HuggingFaceTB/SmolLM-135M"
# SmolLM-135M's published shape (a Llama: rotary positions, tied), with GPT-2's vocabulary of 50,257 tokens in
# place of its own 49,152
ROTARY_CONFIG: dict[str, Any] = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "vocab_size": 50257,
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "max_position_embeddings": 2048,
    "rms_norm_eps": 1e-05,
    "tie_word_embeddings": True,
    "bos_token_id": 50256,
    "eos_token_id": 50256,
}


def shapes(config_class: str, model_class: str, config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every parameter of a transformers model at a config, by its name in a checkpoint (built on the meta
    device: no memory)."""
    import torch
    import transformers

    with torch.device("meta"):
        model = getattr(transformers, model_class)(getattr(transformers, config_class)(**config))
    return {name: tuple(p.shape) for name, p in model.named_parameters()}


def roberta_shapes() -> dict[str, tuple[int, ...]]:
    return shapes("RobertaConfig", "RobertaForMaskedLM", ROBERTA_CONFIG)


def make_rotary(folder: Path, gpt2_tokenizer: str) -> None:
    """A Hub-style SmolLM-135M-shaped folder: random token rows, zeros elsewhere, GPT-2's tokenizer."""
    rows, d = ROTARY_CONFIG["vocab_size"], ROTARY_CONFIG["hidden_size"]
    table = np.random.default_rng(0).standard_normal((rows, d), dtype=np.float32) * 0.1
    all_shapes = shapes("LlamaConfig", "LlamaForCausalLM", ROTARY_CONFIG)
    all_shapes.pop("lm_head.weight", None)  # tied: a checkpoint saved by transformers does not store it
    write_virtual(
        folder / "model.safetensors", virtual_safetensors(all_shapes, {"model.embed_tokens.weight": table})
    )
    (folder / "config.json").write_text(json.dumps(ROTARY_CONFIG))
    (folder / "tokenizer.json").write_text(gpt2_tokenizer)


def make_roberta(folder: Path, gpt2_tokenizer: str) -> None:
    """A Hub-style roberta-base folder: config, tokenizer, model.safetensors (random token and position
    rows, a token-type row, the embedding layer norm; zeros elsewhere)."""
    from tokenizers import Tokenizer

    d, rows = ROBERTA_CONFIG["hidden_size"], ROBERTA_CONFIG["vocab_size"]
    rng = np.random.default_rng(0)
    e = "roberta.embeddings."
    tables = {
        e + "word_embeddings.weight": rng.standard_normal((rows, d), dtype=np.float32) * 0.1,
        e + "position_embeddings.weight": rng.standard_normal((514, d), dtype=np.float32) * 0.01,
        e + "token_type_embeddings.weight": rng.standard_normal((1, d), dtype=np.float32) * 0.01,
        e + "LayerNorm.weight": np.ones(d, dtype=np.float32),
        e + "LayerNorm.bias": np.zeros(d, dtype=np.float32),
    }
    file = virtual_safetensors(roberta_shapes(), tables)
    write_virtual(folder / "model.safetensors", file)
    (folder / "config.json").write_text(json.dumps(ROBERTA_CONFIG))
    tok = Tokenizer.from_str(gpt2_tokenizer)
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    (folder / "tokenizer.json").write_text(tok.to_str())


def length(content: Content) -> int:
    return len(content) if isinstance(content, bytes) else content.size


def fetched_per_file(hub: FakeHub, files: dict[str, Content]) -> dict[str, tuple[int, int]]:
    """(requests, body bytes) per file, from the fake Hub's request log: a GET's Range, or the whole file."""
    found: dict[str, tuple[int, int]] = {}
    for method, path, asked in hub.requests:
        name = path.split("?")[0].rsplit("/", 1)[1]
        size = length(files[name])
        got = 0
        if method == "GET":
            a, _, b = asked.removeprefix("bytes=").partition("-")
            got = min(size, int(b) + 1) - int(a) if asked else size
        n, total = found.get(name, (0, 0))
        found[name] = (n + 1, total + got)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gpt2emb-families-"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # every run would recompile its modules
    env = {**os.environ, "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
    gpt2emb = str(BIN / "gpt2emb")
    tok = tokenizer_json()
    folders = {"gpt2": work / "gpt2", "roberta-base": work / "roberta-base"}
    make_checkpoint(folders["gpt2"], "gpt2", tok)
    make_roberta(folders["roberta-base"], tok)
    cmds = {
        f"neighbors cat --json ({name}-shaped folder)": [gpt2emb, "neighbors", "cat", "-m", str(f), "--json"]
        for name, f in folders.items()
    }
    answers = {}
    for label, cmd in cmds.items():  # the entries
        answers[label] = json.loads(measure(cmd, env, 1, warmup=False).out)["items"][0]["neighbors"][0]
    header = "| command | wall median (s) | wall range | peak RSS median (MiB) | RSS range |\n"
    header += "|---|---:|---|---:|---|"
    print(f"Warm, {args.runs} interleaved rounds after one warm-up round.\n\n{header}")
    for label, runs in rounds(cmds, env, args.runs).items():
        print(row(label, runs))
    gpt2, roberta = answers.values()  # one seed: the same random rows under the same ids in both folders
    assert gpt2 == roberta, "the two folders answer differently"
    print(f"\nBoth give the same nearest token to cat ({gpt2['token']!r}, cosine {gpt2['score']:.4f}).")

    for repo, name, folder in (
        (REPO, "roberta-base", folders["roberta-base"]),
        (ROTARY_REPO, ROTARY_REPO, work / "rotary"),
    ):
        if repo == ROTARY_REPO:
            make_rotary(folder, tok)
        first_use(repo, name, folder, work / repo.replace("/", "--"), gpt2emb)


def first_use(repo: str, name: str, folder: Path, work: Path, gpt2emb: str) -> None:
    """Serve a folder as a Hub repo and print what a first `neighbors cat` fetches from it, per file."""
    hub = FakeHub().start()
    files: dict[str, Content] = {f: (folder / f).read_bytes() for f in ("config.json", "tokenizer.json")}
    files["model.safetensors"] = DiskFile(folder / "model.safetensors")
    hub.repos[repo] = Repo("1" * 40, files)
    fresh = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(work / "hf"),
             "GPT2EMB_CACHE_DIR": str(work / "cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}  # fmt: skip
    first = measure([gpt2emb, "neighbors", "cat", "-m", name, "--json"], fresh, 1, warmup=False)
    hub.stop()
    found = fetched_per_file(hub, files)
    assert sum(b for _, b in found.values()) == hub.bytes_served, "the log and the Hub's count disagree"
    size = length(files["model.safetensors"])
    print(f"\nFirst use of {repo} ({size / 1e6:,.1f} MB of model.safetensors) through the fake Hub:")
    print(f"`neighbors cat --json`, {first.wall:.2f} s.\n")
    print("| file | requests | bytes fetched | file size |\n|---|---:|---:|---:|")
    for file, (n, got) in found.items():
        print(f"| {file} | {n} | {got:,} | {length(files[file]):,} |")
    share = hub.bytes_served / sum(length(c) for c in files.values())
    print(f"| total | {sum(n for n, _ in found.values())} | {hub.bytes_served:,} | {share:.2%} of the repo |")


if __name__ == "__main__":
    main()
