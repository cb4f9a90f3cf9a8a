"""lab: the course's lab in one run, each part the core its own command calls, with that command's defaults
(vector, neighbors -k 10, analogy with and without --keep-inputs, sizes, tying)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from gpt2emb import registry
from gpt2emb.choices import Method, Pool
from gpt2emb.core import analogy as analogy_core
from gpt2emb.core import neighbors as neighbors_core
from gpt2emb.core import sizes as sizes_core
from gpt2emb.core import tying as tying_core
from gpt2emb.core import vector as vector_core
from gpt2emb.core.open import RankOptions, open_ref
from gpt2emb.errors import Gpt2embError
from gpt2emb.report import Reporter
from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.lab import LabPage, LabResult

WORD = "king"  # the chapter's word, unless told
ANALOGY = ("king", "man", "woman")  # part 3, whatever the word
K = 10  # part 2's neighbors, and both analogies' results: the commands' default -k

_T = TypeVar("_T")


def part(n: int, run: Callable[[], _T]) -> _T:
    """Part n's answer; its failure is the same error (the same class, so the same exit code) with a message
    that starts with "part n", so that it says which part of the lab stopped it."""
    try:
        return run()
    except Gpt2embError as e:
        raise type(e)(f"part {n}: {e.message}") from e


def lab(
    model: str | None = None,
    word: str = WORD,
    load: bool = False,
    revision: str | None = None,
    reporter: Reporter | None = None,
) -> LabResult:
    """The five parts of the lab on one model (gpt2 when None): word's row and its nearest tokens, king - man
    + woman with the inputs kept and left out, the sizes (the four GPT-2 sizes by their formula when no model
    is given, else the model's own from its headers), and the tying check (load: tying --load)."""
    name = model or registry.DEFAULT_MODEL
    ref = registry.resolve(name, revision)  # refused before part 1
    a, b, c = ANALOGY
    vector = part(1, lambda: vector_core.vector(ref, [word], False, Pool.mean, reporter))
    neighbors = part(2, lambda: neighbors_core.neighbors(ref, [word], RankOptions(k=K), reporter))

    def analogy(keep_inputs: bool) -> AnalogyResult:
        return analogy_core.analogy(
            ref, analogy_core.abc(a, b, c), RankOptions(k=K, keep_inputs=keep_inputs), Method.add, reporter
        )

    kept = part(3, lambda: analogy(True))
    left_out = part(3, lambda: analogy(False))
    if model is None:  # `sizes`: the four GPT-2 sizes, by their formula
        sizes = part(4, lambda: sizes_core.sizes("fp32", False))
    else:  # `sizes -m MODEL`: counted from its checkpoint headers
        sizes = part(4, lambda: sizes_core.of_models([name], "fp32", revision))
    tying = part(5, lambda: tying_core.tying(name, load, revision, None, reporter, False))
    return LabResult(vector, neighbors, kept, left_out, sizes, tying)


def page(
    result: LabResult, model: str | None = None, revision: str | None = None, reporter: Reporter | None = None
) -> LabPage:
    """lab --html's page of result (lab's answer for model at revision): each part's figure drawn from the
    rows that part was computed from, as its command's --figure draws it (part 3: the inputs left out)."""
    from gpt2emb import plot  # matplotlib: checked at the edge (plot.check_available)

    opened = open_ref(registry.resolve(model or registry.DEFAULT_MODEL, revision), reporter)
    ref, entry = opened.ref, opened.model
    figures = (
        plot.svg("vector", result.vector, prefix="p1-"),
        plot.svg("neighbors", result.neighbors, opened, prefix="p2-"),
        plot.svg("analogy", result.analogy, opened, Pool.mean, prefix="p3-"),
        plot.svg("sizes", result.sizes, prefix="p4-"),
        None,
    )
    folder = ref is not None and ref.folder is not None
    revision_asked = None if folder or ref is None else ref.revision
    return LabPage(result, model or registry.DEFAULT_MODEL, entry.repo, revision_asked, entry.commit, figures)
