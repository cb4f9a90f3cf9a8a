"""Parameter counts: of the four GPT-2 sizes by the formula, from the registry alone (no numpy, no network),
and of any model (sizes -m) exactly, from its config and checkpoint headers (no weights read); and `models`,
the registry with what of it is cached."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpt2emb import registry
from gpt2emb.registry import Shape
from gpt2emb.results.sizes import ModelRow, ModelSizes, ModelsResult, SizesResult

if TYPE_CHECKING:
    from gpt2emb.store.checkpoint import CheckpointInfo
    from gpt2emb.store.formats import TensorInfo

BYTES_PER_PARAM = {"fp32": 4, "fp16": 2}
# Tensors that some checkpoints carry and that are no parameters: the causal masks of GPT-2
# (h.N.attn.bias, masked_bias), GPT-Neo and GPT-NeoX (attention.bias, masked_bias), the position ids of
# BERT-like models, the rotary frequencies of rotary models. Integer and boolean tensors are never parameters.
BUFFER_SUFFIXES = (
    *(".attn.bias", ".attn.masked_bias", ".attention.bias", ".attention.masked_bias"),
    *("position_ids", "rotary_emb.inv_freq"),
)
_FLOAT = ("F", "BF")


def _is_parameter(key: str, t: TensorInfo) -> bool:
    return t.dtype.startswith(_FLOAT) and not key.endswith(BUFFER_SUFFIXES)


def header_counts(info: CheckpointInfo) -> dict[str, int]:
    """The checkpoint's parameters, counted from its headers (every shard): the token table, the position
    table (0 when the family has none), a separate output layer (0 when tied: an output matrix stored beside
    a tied token table is the same parameter, counted once), the total, and the position table's rows."""
    from gpt2emb import families
    from gpt2emb.errors import BadModel

    if not info.tensors:
        raise BadModel(
            f"{info.name} stores its weights as {info.weights_file}, a pickle with no header to count from; "
            "sizes -m reads safetensors headers: use a model saved as safetensors"
        )
    family = families.of_config(info.config, info.name)
    params = {k: math.prod(t.shape) for k, t in info.tensors.items() if _is_parameter(k, t)}

    def first(keys: tuple[str, ...]) -> str | None:
        return next((k for k in keys if k in params), None)

    wte, wpe = first(family.token_table), first(family.position_table)

    from gpt2emb.store import checkpoint

    output = checkpoint.output_key(info, family)  # GPT-NeoX's embed_out as well as lm_head
    output = output if output in params and output != wte else None
    tied = family.tied(info.config)  # the family's default where the config is silent (Llama: untied)
    if output is not None and tied:
        del params[output]  # a stored copy of a tied output layer is wte again
    return {
        "wte_params": params[wte] if wte else 0,
        "wpe_params": params[wpe] if wpe else 0,
        "output_params": params[output] if output and not tied else 0,
        "total_params": sum(params.values()),
        "position_rows": info.tensors[wpe].shape[0] if wpe else 0,
    }


def _verify(spec: registry.ModelSpec, total: int) -> bool:
    """Check the registry's figures against the config and checkpoint header on the Hub (no weights read)."""
    from gpt2emb.store import checkpoint, revisions

    info = revisions.checkpoint_info(registry.resolve(spec.name))
    stored = header_counts(info)["total_params"]
    return checkpoint.shape_of(info.config, spec.name) == spec.shape and stored == total


def sizes(dtype: str = "fp32", verify: bool = False, figure: str | None = None) -> SizesResult:
    out = []
    for spec in registry.GPT2_SIZES:
        s = spec.shape
        counts = _formula(s)
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
                family=s.family,
                position_rows=s.position_offset + s.n_positions,
                output_params=0,
                total_mb=counts["total_params"] * BYTES_PER_PARAM[dtype] / 1e6,
                commit=None,
            )
        )
    return _drawn(SizesResult(dtype, tuple(out), "formula"), figure)


def _drawn(result: SizesResult, figure: str | None) -> SizesResult:
    if figure is None:
        return result
    from gpt2emb import plot  # checked at the edge (plot.check_figure)

    return plot.draw("sizes", result, figure)


def of_models(
    names: list[str], dtype: str = "fp32", revision: str | None = None, figure: str | None = None
) -> SizesResult:
    """Any models' exact parameter counts, from their config and checkpoint headers."""
    from gpt2emb import families
    from gpt2emb.core.open import refuse_static
    from gpt2emb.store import checkpoint, revisions

    out = []
    for name in names:
        ref = registry.resolve(name, revision)
        refuse_static(ref, "it has no layers, so it has no sizes but its table's (gpt2emb vector shows them)")
        info = revisions.checkpoint_info(ref)
        s = families.shape_of(info.config, ref.name)
        layers = checkpoint.layers_in(info.tensors) or s.n_layer  # what the weights hold, when they say
        counts = header_counts(info)
        total = counts["total_params"]
        out.append(
            ModelSizes(
                ref.name,
                ref.repo or str(ref.folder),
                s.vocab_size,
                s.d_model,
                s.n_positions,
                layers,
                s.n_head,
                wte_params=counts["wte_params"],
                wpe_params=counts["wpe_params"],
                block_params=None,
                final_ln_params=None,
                total_params=total,
                wte_share=counts["wte_params"] / total,
                embeddings_mb=(counts["wte_params"] + counts["wpe_params"]) * BYTES_PER_PARAM[dtype] / 1e6,
                verified=None,
                family=s.family,
                position_rows=counts["position_rows"],
                output_params=counts["output_params"],
                total_mb=total * BYTES_PER_PARAM[dtype] / 1e6,
                commit=None if ref.folder is not None else info.commit,
            )
        )
    return _drawn(SizesResult(dtype, tuple(out), "checkpoint"), figure)


def models() -> ModelsResult:
    """The registry, and which of its models are cached."""
    from gpt2emb.store import manage  # here: `sizes` reads no cache

    cached = {e.repo for e in manage.entries()}
    rows = tuple(
        ModelRow(
            m.name,
            m.repo,
            m.aliases,
            m.shape.vocab_size,
            m.shape.d_model,
            m.shape.n_layer,
            m.shape.n_head,
            _formula_total(m.shape),
            m.repo in cached,
            m.shape.family,
        )
        for m in registry.MODELS
    )
    return ModelsResult(rows)


def _formula_total(shape: Shape) -> int | None:
    counts = _formula_counts(shape)
    return None if counts is None else counts["total_params"]


def _formula(shape: Shape) -> dict[str, int]:
    counts = _formula_counts(shape)
    assert counts is not None, shape  # the registry's four GPT-2 sizes: the gpt2 family has a formula
    return counts


def _formula_counts(shape: Shape) -> dict[str, int] | None:
    """A shape's parameter counts by its family's formula (the record's `params`), None without one."""
    from gpt2emb import families

    params = families.by_name(shape.family).params
    return None if params is None else params(shape)
