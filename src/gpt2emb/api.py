"""TEMPORARY, while cli.py is split into cli/: api.py's old names at their new places (core/, handle.py)."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    **dict.fromkeys(("Embeddings", "open_embeddings"), "gpt2emb.handle"),
    **dict.fromkeys(
        ("vector", "neighbors", "analogy", "similarity", "distinct_models", "compare"), "gpt2emb.core.words"
    ),
    **dict.fromkeys(
        ("each_vector", "each_neighbors", "each_analogy", "each_similarity"), "gpt2emb.core.words_stream"
    ),
    **dict.fromkeys(("positions", "position_map"), "gpt2emb.core.positions"),
    **dict.fromkeys(("model_input", "context"), "gpt2emb.core.text"),
    "tying": "gpt2emb.core.tying",
    **dict.fromkeys(
        ("cache_list", "cache_clear", "cache_refresh", "cache_verify", "cache_path"), "gpt2emb.core.cache"
    ),
    "models": "gpt2emb.core.sizes",
    **dict.fromkeys(("analogy_eval", "similarity_eval"), "gpt2emb.core.evaluate"),
    "geometry": "gpt2emb.core.geometry",
    "export": "gpt2emb.core.export",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(name)
