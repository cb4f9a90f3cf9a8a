"""Results of sizes and models.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document


@dataclass(frozen=True)
class ModelSizes(Document):
    name: str
    repo: str
    vocab_size: int
    d_model: int
    n_positions: int
    n_layer: int
    n_head: int
    wte_params: int
    wpe_params: int
    block_params: int | None  # by GPT-2's formula; None when counted from a checkpoint (sizes -m)
    final_ln_params: int | None
    total_params: int
    wte_share: float  # wte_params / total_params
    embeddings_mb: float  # wte + wpe in megabytes (10^6 bytes) at `dtype`
    verified: bool | None  # None: not checked (no --verify)
    family: str
    position_rows: int  # rows of the position table (RoBERTa: 2 more than n_positions); 0 when none
    output_params: int  # a separate output layer's; 0 when it is the token table (tied)
    total_mb: float  # every parameter in megabytes at `dtype`
    commit: str | None  # the Hub commit whose headers were counted; None by the formula or for a folder


@dataclass(frozen=True)
class SizesResult(Document):
    dtype: str
    models: tuple[ModelSizes, ...]
    source: str  # "formula" (the four GPT-2 sizes) or "checkpoint" (sizes -m: counted from the headers)
    figure: str | None = None  # the figure written with --figure (a key only in a document that drew one)


@dataclass(frozen=True)
class ModelRow(Document):
    name: str
    repo: str
    aliases: tuple[str, ...]
    vocab_size: int
    d_model: int
    n_layer: int
    n_head: int
    total_params: int | None  # by its family's formula; None without one (sizes -m counts any model)
    cached: bool
    family: str = "gpt2"


@dataclass(frozen=True)
class ModelsResult(Document):
    models: tuple[ModelRow, ...]
