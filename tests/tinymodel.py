"""A tiny GPT-2 whose answers are known: a byte-level BPE trained here, and planted embedding rows.

- analogy: king = 2(R+M), queen = 2(R+F), man = 2M, woman = 2F, so king - man + woman = queen exactly;
- neighbours: cats and kitten are cat plus small and larger noise, dog shares half of cat's direction;
- positions: wpe rows are sines and cosines of the position, so neighbouring positions are similar.
Everything else is small random noise. Nothing here touches the network.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from gpt2emb import registry

from fakehub import Content, FakeHub, Repo, VirtualFile

D = 32
N_POSITIONS = 1024
N_LAYER = 2
WORDS = [
    "king",
    "queen",
    "man",
    "woman",
    "cat",
    "cats",
    "kitten",
    "dog",
    "prince",
    "Paris",
    "France",
    "hello",
]


FILLER = "the a of and to in is it that was for on are with as his they be at one have this from"
CORPUS = [" ".join(WORDS * 3) for _ in range(60)] + [FILLER] * 20


def train_byte_level(tok: Tokenizer, specials: tuple[str, ...], vocab_size: int) -> Tokenizer:
    """tok (a BPE with its pre-tokenizer set) trained on CORPUS from all 256 bytes, as a byte-level BPE."""
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=list(specials),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def train_tokenizer(specials: tuple[str, ...] = ("<|endoftext|>",), vocab_size: int = 420) -> Tokenizer:
    """A byte-level BPE trained on WORDS, as GPT-2's (other byte-level families pass their specials)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return train_byte_level(tok, specials, vocab_size)


@dataclass(repr=False)
class Saved:
    """A tiny model of another family, saved by transformers' save_pretrained with its tokenizer."""

    folder: Path
    tokenizer: Tokenizer
    model_class: ClassVar[str]  # the transformers class that loads it back

    def id(self, word: str) -> int:
        """The id of ' word' (the leading-space rule, byte-level: "Ġword")."""
        vocab: dict[str, int] = self.tokenizer.get_vocab()
        return vocab["Ġ" + word]

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.folder.iterdir() if p.is_file()}

    def model(self) -> Any:
        """The saved model, loaded back by transformers: the oracle of `input` and `context`."""
        import transformers

        return getattr(transformers, self.model_class).from_pretrained(self.folder).eval()


def save_model(model: Any, tokenizer: Tokenizer, folder: Path) -> dict[str, Any]:
    """A transformers model saved in folder by its save_pretrained, with tokenizer.json beside it, as the Hub
    holds them; returns the config.json written, for the builder to check."""
    model.save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    config: dict[str, Any] = json.loads((folder / "config.json").read_text())
    return config


def planted_rows(vocab: dict[str, int], prefix: str, rng: np.random.Generator, d: int = D) -> np.ndarray:
    """A token table of small random rows, with cats and kitten planted near cat and dog sharing half of cat's
    direction (prefix: how the vocabulary marks a word-initial token, "Ġ" or "▁"; "" for WordPiece)."""
    wte = rng.normal(0.0, 0.1, (len(vocab), d)).astype(np.float32)
    basis = np.linalg.qr(rng.normal(size=(d, d)))[0].T
    c = basis[0]
    for word, row in {
        "cat": 2 * c,
        "cats": 2 * c + 0.3 * basis[6],
        "kitten": 2 * c + 0.8 * basis[7],
        "dog": c + 1.5 * basis[1],
    }.items():
        wte[vocab[prefix + word]] = row
    return wte


def sinusoids(n: int, d: int = D, scale: float = 0.5) -> np.ndarray:
    """n position rows, row p the Transformer paper's sinusoids of p: neighbouring positions are similar."""
    pos = np.arange(n)[:, None]
    freqs = 1.0 / (100.0 ** (2 * np.arange(d // 2) / d))[None, :]
    rows = np.zeros((n, d), dtype=np.float32)
    rows[:, 0::2], rows[:, 1::2] = scale * np.cos(pos * freqs), scale * np.sin(pos * freqs)
    return rows


@dataclass(repr=False)
class Tiny:
    tokenizer: Tokenizer
    config: dict[str, object]
    wte: np.ndarray
    wpe: np.ndarray
    blocks: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def vocab(self) -> dict[str, int]:
        vocab: dict[str, int] = self.tokenizer.get_vocab()
        return vocab

    def id(self, word: str) -> int:
        """The id of ' word' (the leading-space rule)."""
        return self.vocab["Ġ" + word]

    def state(self, prefix: str = "", buffers: bool = False) -> dict[str, np.ndarray]:
        state = {"wte.weight": self.wte, "wpe.weight": self.wpe, **self.blocks}
        if buffers:  # the Hub's original GPT-2 files carry the causal mask of each layer
            mask = np.tril(np.ones((N_POSITIONS, N_POSITIONS), dtype=np.float32))[None, None]
            state.update({f"h.{i}.attn.bias": mask for i in range(N_LAYER)})
        return {prefix + k: np.ascontiguousarray(v) for k, v in state.items()}


def build() -> Tiny:
    tok = train_tokenizer()
    vocab = tok.get_vocab()
    for w in WORDS:
        assert "Ġ" + w in vocab, f"the tiny tokenizer did not learn ' {w}' as one token"
    n = tok.get_vocab_size()
    rng = np.random.default_rng(1234)
    wte = rng.normal(0.0, 0.1, (n, D)).astype(np.float32)
    basis = np.linalg.qr(rng.normal(size=(D, D)))[0].T  # orthonormal rows
    r, m, f, c, g = basis[:5]

    def put(word: str, v: np.ndarray) -> None:
        wte[vocab["Ġ" + word]] = v

    put("king", 2 * (r + m))
    put("queen", 2 * (r + f))
    put("man", 2 * m)
    put("woman", 2 * f)
    put("cat", 2 * c)
    put("cats", 2 * c + 0.3 * basis[6])
    put("kitten", 2 * c + 0.8 * basis[7])
    put("dog", c + 1.5 * g)
    wpe = sinusoids(N_POSITIONS)
    blocks: dict[str, np.ndarray] = {}
    for i in range(N_LAYER):
        p = f"h.{i}."
        for name, shape in (
            ("ln_1.weight", (D,)),
            ("ln_1.bias", (D,)),
            ("attn.c_attn.weight", (D, 3 * D)),
            ("attn.c_attn.bias", (3 * D,)),
            ("attn.c_proj.weight", (D, D)),
            ("attn.c_proj.bias", (D,)),
            ("ln_2.weight", (D,)),
            ("ln_2.bias", (D,)),
            ("mlp.c_fc.weight", (D, 4 * D)),
            ("mlp.c_fc.bias", (4 * D,)),
            ("mlp.c_proj.weight", (4 * D, D)),
            ("mlp.c_proj.bias", (D,)),
        ):
            blocks[p + name] = rng.normal(0.0, 0.02, shape).astype(np.float32)
    blocks["ln_f.weight"] = np.ones(D, dtype=np.float32)
    blocks["ln_f.bias"] = np.zeros(D, dtype=np.float32)
    config = {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "vocab_size": n,
        "n_embd": D,
        "n_positions": N_POSITIONS,
        "n_ctx": N_POSITIONS,
        "n_layer": N_LAYER,
        "n_head": 2,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "tie_word_embeddings": True,
        "bos_token_id": vocab["<|endoftext|>"],
        "eos_token_id": vocab["<|endoftext|>"],
    }
    return Tiny(tok, config, wte, wpe, blocks)


def safetensors_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    from safetensors.numpy import save

    data: bytes = save(tensors, metadata={"format": "pt"})
    return data


def hub_files(tiny: Tiny, *, tokenizer_json: bool = True, weights: str = "safetensors") -> dict[str, bytes]:
    """The files of a Hub repo shaped like openai-community/gpt2 (keys without the transformer. prefix)."""
    files = {"config.json": json.dumps(tiny.config).encode()}
    if tokenizer_json:
        files["tokenizer.json"] = tiny.tokenizer.to_str().encode()
    vocab_json, merges = vocab_and_merges(tiny)
    files["vocab.json"], files["merges.txt"] = vocab_json, merges
    if weights == "safetensors":
        files["model.safetensors"] = safetensors_bytes(tiny.state(buffers=True))
    elif weights == "bin":
        files["pytorch_model.bin"] = torch_bin(tiny.state())
    return files


def vocab_and_merges(tiny: Tiny) -> tuple[bytes, bytes]:
    model = json.loads(tiny.tokenizer.to_str())["model"]
    merges = ["#version: 0.2"] + [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return json.dumps(model["vocab"], ensure_ascii=False).encode(), ("\n".join(merges) + "\n").encode()


def torch_bin(tensors: dict[str, np.ndarray]) -> bytes:
    import io

    import torch

    buf = io.BytesIO()
    torch.save({k: torch.from_numpy(v.copy()) for k, v in tensors.items()}, buf)
    return buf.getvalue()


def save_local(tiny: Tiny, folder: Path, weights: str = "safetensors") -> Path:
    """A folder as save_pretrained writes it: keys with the transformer. prefix."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(tiny.config))
    (folder / "tokenizer.json").write_text(tiny.tokenizer.to_str())
    state = tiny.state(prefix="transformer.")
    if weights == "safetensors":
        (folder / "model.safetensors").write_bytes(safetensors_bytes(state))
    elif weights == "bin":
        (folder / "pytorch_model.bin").write_bytes(torch_bin(state))
    return folder


def gpt2_tensor_shapes(vocab: int, d: int, positions: int, layers: int) -> dict[str, tuple[int, ...]]:
    """Every tensor of a Hub GPT-2 checkpoint (no transformer. prefix, causal-mask buffers included)."""
    shapes: dict[str, tuple[int, ...]] = {"wte.weight": (vocab, d), "wpe.weight": (positions, d)}
    for i in range(layers):
        p = f"h.{i}."
        shapes.update(
            {
                p + "ln_1.weight": (d,),
                p + "ln_1.bias": (d,),
                p + "attn.bias": (1, 1, positions, positions),
                p + "attn.c_attn.weight": (d, 3 * d),
                p + "attn.c_attn.bias": (3 * d,),
                p + "attn.c_proj.weight": (d, d),
                p + "attn.c_proj.bias": (d,),
                p + "ln_2.weight": (d,),
                p + "ln_2.bias": (d,),
                p + "mlp.c_fc.weight": (d, 4 * d),
                p + "mlp.c_fc.bias": (4 * d,),
                p + "mlp.c_proj.weight": (4 * d, d),
                p + "mlp.c_proj.bias": (d,),
            }
        )
    shapes.update({"ln_f.weight": (d,), "ln_f.bias": (d,)})
    return shapes


def virtual_safetensors(
    shapes: dict[str, tuple[int, ...]], data: dict[str, np.ndarray] | None = None
) -> VirtualFile:
    """A safetensors file of any size: a real header, the given tensors' bytes, zeros elsewhere."""

    tensors: dict[str, dict[str, Any]] = {}
    offset = 0
    for name, shape in shapes.items():
        n = 4 * int(np.prod(shape))
        tensors[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    header = {"__metadata__": {"format": "pt"}, **tensors}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    base = 8 + len(raw)
    segments = [(0, len(raw).to_bytes(8, "little") + raw)]
    for name, array in (data or {}).items():
        start = base + tensors[name]["data_offsets"][0]
        segments.append((start, np.ascontiguousarray(array, "<f4").tobytes()))
    return VirtualFile(base + offset, segments)


def real_vocab_folder(folder: Path, vocab: Path, seed: int) -> None:
    """A GPT-2-shaped model folder with GPT-2's real tokenizer (vocab.json, merges.txt in vocab) and random
    8-wide rows: a vocabulary of real size, whose small files are larger than a sampled checksum covers."""
    tok = Tokenizer(models.BPE.from_file(str(vocab / "vocab.json"), str(vocab / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    rng = np.random.default_rng(seed)
    rows = {"wte.weight": rng.normal(size=(50257, 8)), "wpe.weight": rng.normal(size=(1024, 8))}
    checkpoint = virtual_safetensors(gpt2_tensor_shapes(50257, 8, 1024, 1), rows)
    with (folder / "model.safetensors").open("wb") as f:
        for offset, data in checkpoint.segments:
            f.seek(offset)
            f.write(data)
        f.truncate(checkpoint.size)
    config = {"model_type": "gpt2", "vocab_size": 50257, "n_embd": 8, "n_positions": 1024, "n_ctx": 1024,
              "n_layer": 1, "n_head": 2, "bos_token_id": 50256, "eos_token_id": 50256}  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")


def xl_sample() -> tuple[np.ndarray, np.ndarray]:
    """Known values for a gpt2-xl-shaped repo: wte's first 10 rows and the whole of wpe."""
    rows = np.arange(10 * 1600, dtype=np.float32).reshape(10, 1600) / 1000
    return rows, np.random.default_rng(0).normal(size=(1024, 1600)).astype(np.float32)


def xl_files(tiny: Tiny, wte_rows: np.ndarray, wpe: np.ndarray) -> dict[str, Content]:
    """A gpt2-xl-shaped repo, its 6.4 GB checkpoint served virtually: wte's first rows given, zeros after."""
    checkpoint = virtual_safetensors(
        gpt2_tensor_shapes(50257, 1600, 1024, 48), {"wte.weight": wte_rows, "wpe.weight": wpe}
    )
    config = {**tiny.config, "vocab_size": 50257, "n_embd": 1600, "n_layer": 48, "n_head": 25}
    files: dict[str, Content] = {"config.json": json.dumps(config).encode(), "model.safetensors": checkpoint}
    files["tokenizer.json"] = tiny.tokenizer.to_str().encode()
    return files


def serve_real_shapes(hub: FakeHub, tamper: str | None = None) -> None:
    """The four GPT-2 sizes served with their real shapes (virtual files: headers and sizes, no rows); tamper
    names one whose checkpoint and config agree on a wider d, not with the registry."""
    for spec in registry.MODELS:
        s = spec.shape
        # checkpoint and config agree (and d still splits into its heads), not with us
        d = s.d_model + (s.n_head if spec.name == tamper else 0)
        config = {
            "model_type": "gpt2",
            "vocab_size": s.vocab_size,
            "n_embd": d,
            "n_positions": 1024,
            "n_layer": s.n_layer,
            "n_head": s.n_head,
        }
        files: dict[str, Content] = {
            "config.json": json.dumps(config).encode(),
            "model.safetensors": virtual_safetensors(gpt2_tensor_shapes(s.vocab_size, d, 1024, s.n_layer)),
        }
        hub.repos[spec.repo] = Repo(f"{abs(hash(spec.name)):040d}"[:40], files)
