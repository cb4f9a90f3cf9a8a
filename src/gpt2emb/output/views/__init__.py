"""A result's view: views/STEM.py registers the views of results/STEM.py, imported when one is first shown."""

from __future__ import annotations

import importlib
import importlib.util
from functools import singledispatch
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import RenderableType

DIMS = 12  # how many numbers of a vector its table shows, unless told (vector --dims)
_RESULTS = "gpt2emb.results."


@singledispatch
def view(result: Any, dims: int | None) -> RenderableType:
    if _imported(type(result)):
        return view(result, dims)
    raise TypeError(f"no view for {type(result).__name__}")


def _imported(kind: type) -> bool:
    """Whether importing the views of kind's stem gave it a view: found from the module of its class
    (gpt2emb.results.neighbors -> gpt2emb.output.views.neighbors), so a command imports its own stem's views
    only, and no list of them is kept."""
    module = kind.__module__
    if not module.startswith(_RESULTS):
        return False
    name = f"{__name__}.{module.removeprefix(_RESULTS)}"
    if importlib.util.find_spec(name) is None:  # results.common, results.candidates: no view of their own
        return False
    importlib.import_module(name)
    return view.dispatch(kind) is not view.registry[object]
