"""gpt2emb: look inside GPT-2's embeddings from the shell, or from Python:

    import gpt2emb
    m = gpt2emb.open("gpt2")
    m.neighbors("cat", k=5).to_dict()

`open` and `Embeddings` are reached lazily (api.py), so that `import gpt2emb` and the CLI's --help load no
numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpt2emb.api import Embeddings
    from gpt2emb.api import open_embeddings as open

__all__ = ["Embeddings", "open"]
_IN_API = {"Embeddings": "Embeddings", "open": "open_embeddings"}


def __getattr__(name: str) -> Any:
    if name in _IN_API:
        from gpt2emb import api

        return getattr(api, _IN_API[name])
    raise AttributeError(f"module 'gpt2emb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
