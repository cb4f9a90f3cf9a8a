"""Parameter counts of the four GPT-2 sizes, computed from the registry alone (no numpy, no network)."""

from __future__ import annotations

import math

from gpt2emb import registry
from gpt2emb.registry import Shape
from gpt2emb.results import ModelSizes, SizesResult

BYTES_PER_PARAM = {"fp32": 4, "fp16": 2}
BUFFER_SUFFIXES = (".attn.bias", ".attn.masked_bias")  # causal-mask buffers that some checkpoints carry


def block_params(d: int) -> int:
    """One block: two LayerNorms (2d each), attention (d*3d + 3d, d*d + d), MLP (d*4d + 4d, 4d*d + d)."""
    return 12 * d * d + 13 * d


def param_counts(shape: Shape) -> dict[str, int]:
    d = shape.d_model
    counts = {
        "wte_params": shape.vocab_size * d,
        "wpe_params": shape.n_positions * d,
        "block_params": shape.n_layer * block_params(d),
        "final_ln_params": 2 * d,
    }
    counts["total_params"] = sum(counts.values())
    return counts


def _verify(spec: registry.ModelSpec, total: int) -> bool:
    """Check the registry's figures against the config and checkpoint header on the Hub (no weights read)."""
    from gpt2emb import cache, checkpoint

    info = cache.checkpoint_info(registry.resolve(spec.name))
    stored = sum(
        math.prod(t.shape)
        for key, t in info.tensors.items()
        if not key.endswith(BUFFER_SUFFIXES) and not key.endswith("lm_head.weight")
    )
    return checkpoint.shape_of(info.config, spec.name) == spec.shape and stored == total


def sizes(dtype: str = "fp32", verify: bool = False) -> SizesResult:
    out = []
    for spec in registry.GPT2_SIZES:
        s = spec.shape
        counts = param_counts(s)
        out.append(
            ModelSizes(
                spec.name,
                spec.repo,
                s.vocab_size,
                s.d_model,
                s.n_positions,
                s.n_layer,
                s.n_head,
                **counts,
                wte_share=counts["wte_params"] / counts["total_params"],
                embeddings_mb=(counts["wte_params"] + counts["wpe_params"]) * BYTES_PER_PARAM[dtype] / 1e6,
                verified=_verify(spec, counts["total_params"]) if verify else None,
            )
        )
    return SizesResult(dtype, tuple(out))
