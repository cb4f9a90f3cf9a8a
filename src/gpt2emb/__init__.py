"""gpt2emb: look inside GPT-2's embeddings from the shell, or from Python:

    import gpt2emb
    m = gpt2emb.open("gpt2")
    m.neighbors("cat", k=5).to_dict()

`open` imports handle.py when called and `Embeddings` is reached lazily, so that `import gpt2emb` and the
CLI's --help load no numpy. Every failure the user can act on is a Gpt2embError (its `code` is the CLI's exit
code).
"""

from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING, Any

from gpt2emb.errors import Gpt2embError as Gpt2embError  # the package's own (its __all__)
from gpt2emb.registry import DEFAULT_MODEL as _DEFAULT_MODEL

if TYPE_CHECKING:
    from os import PathLike

    from gpt2emb.handle import Embeddings as Embeddings  # the package's own (its __all__)
    from gpt2emb.report import Reporter

_OWN = ["Embeddings", "Gpt2embError", "open"]


def _functions() -> list[str]:
    """What needs no model opened, as module-level functions (in handle.py, imported when first used): as the
    stems declare them (gpt2emb/commands/), read only when one is asked for."""
    from gpt2emb import commands

    return [m.name for m in commands.methods() if m.module_level]


def _submodule(name: str) -> bool:
    """Whether name is one of the package's modules: `from gpt2emb import output` asks before it imports."""
    here = _os.path.dirname(__file__)
    return _os.path.isdir(_os.path.join(here, name)) or _os.path.isfile(_os.path.join(here, f"{name}.py"))


def open(
    model: str | PathLike[str] = _DEFAULT_MODEL, revision: str | None = None, reporter: Reporter | None = None
) -> Embeddings:
    """A handle on one model's embeddings: `handle.open_embeddings`, with its notes and the fetch under way
    shown on stderr unless another reporter is given. In IPython and Jupyter, its results display as the
    commands' tables.

    The contract, here and in every public method of the handle (see Embeddings): a bad value (an unknown
    model, a path no file can have, a word the vocabulary cannot make) raises a Gpt2embError, whose `code`
    is the command's exit code; a value of the wrong type (model=5, revision=5, a reporter without note()
    and progress()) raises a TypeError that names the parameter. That TypeError is gpt2emb.errors.WrongType,
    a UsageError too, so `except gpt2emb.Gpt2embError` catches every refusal. Nothing else comes out for
    what the caller gave."""
    from gpt2emb import handle, output

    opened = handle.open_embeddings(
        model, revision, output.python_reporter() if reporter is None else reporter
    )
    output.show_in_notebooks()
    return opened


def __getattr__(name: str) -> Any:
    if name == "__all__":  # `from gpt2emb import *`
        return [*_OWN, *_functions()]
    if name == "Embeddings" or (not name.startswith("_") and not _submodule(name) and name in _functions()):
        from gpt2emb import handle, output

        output.show_in_notebooks()  # their results too display as the commands' tables
        return getattr(handle, name)
    raise AttributeError(f"module 'gpt2emb' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What the package offers (and the module's own dunders), not the names its code imports."""
    return sorted({*_OWN, *_functions(), *(name for name in globals() if name.startswith("__"))})
