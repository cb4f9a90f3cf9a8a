"""gpt2emb.open(...): the Python handle on one model, each public method answering as its command does, by
delegating to the cores (core/) with the opened model it is."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from gpt2emb import batch, contract, registry
from gpt2emb.choices import Format, Method, Pool, Table
from gpt2emb.core.export import export_in
from gpt2emb.core.open import Opened, open_entry
from gpt2emb.core.positions import position_map_in, positions_in
from gpt2emb.core.text import input_in
from gpt2emb.core.words import analogy_in, neighbors_in, restriction_of, similarity_in, vector_in
from gpt2emb.core.words_stream import each_analogy_in, each_neighbors_in, each_similarity_in, each_vector_in
from gpt2emb.report import Reporter
from gpt2emb.results.export import ExportResult
from gpt2emb.results.positions import HeatmapResult, PositionsResult
from gpt2emb.results.text import (
    InputResult,
)
from gpt2emb.results.words import (
    AnalogyResult,
    NeighborsItem,
    NeighborsResult,
    SimilarityResult,
    VectorItem,
    VectorResult,
)


@contract.enforced
class Embeddings(Opened):
    """One model's token and position rows, opened once. Each method answers as the command of its name does
    (position_map as `positions --heatmap`) and returns the same result object as that command's --json
    (`.to_dict()` gives the document).

    >>> m = gpt2emb.open("gpt2")
    >>> [n.token for n in m.neighbors("cat", k=5).items[0].neighbors]

    Words are given as on the command line: a str is one word, a list several; `id:N` is token N. The
    `each_*` methods answer a stream of numbered lines (`batch.Line`) a block at a time, a failed line as a
    `batch.FailedLine` in its place, as `neighbors -` does.

    The contract of every public method: a bad value raises a gpt2emb.Gpt2embError (`code`: the command's
    exit code); a value of the wrong type raises a TypeError naming the parameter ("exact must be a bool
    (True or False), not array([1, 2])"), which is a WrongType and so a UsageError (a Gpt2embError) too.
    A flag is a bool (numpy's bool too); a count (k, restrict, limit, cells) an int of any integer type
    (numpy's int64 too), never a float or a str; a choice (pool, method, fmt, table) its name or its
    member; a word or a text a str of real characters (a lone surrogate, Python's stand-in for a byte that
    is not UTF-8, is refused); a path (among, out, png) a str or a pathlib.Path that the system can use. In
    the each_* streams, a word that is not Unicode text fails as its line, as a line of stdin that is not
    UTF-8 does, and an item that is no str raises the TypeError when the stream reaches it.
    """

    def __repr__(self) -> str:
        shape = self.model.shape
        return f"<gpt2emb {self.name}: {shape.vocab_size} tokens x {shape.d_model}>"

    def vector(
        self, words: str | Sequence[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> VectorResult:
        """The raw row of wte for each word, with its norm, mean, std, min and max."""
        return vector_in(self, words, exact, pool)

    def neighbors(
        self,
        words: str | Sequence[str],
        k: int = 10,
        exact: bool = False,
        pool: Pool | str = Pool.mean,
        keep_query: bool = False,
        among: str | Path | None = None,
        restrict: int | None = None,
        whole_words: bool = False,
        fold: bool = False,
    ) -> NeighborsResult:
        """The k nearest tokens to each word by cosine over all of wte (or over the candidates: among, a file
        of words; restrict, the first N ids; whole_words; fold: one row per word, its forms together)."""
        restriction = restriction_of(self, among, restrict, whole_words, exact)
        return neighbors_in(
            self,
            contract.words_of(words),
            k,
            exact,
            contract.choice(Pool, pool, "pool"),
            keep_query,
            restriction,
            fold,
        )

    def analogy(
        self,
        a: str,
        b: str,
        c: str,
        k: int = 10,
        exact: bool = False,
        pool: Pool | str = Pool.mean,
        keep_inputs: bool = False,
        method: Method | str = Method.add,
        among: str | Path | None = None,
        restrict: int | None = None,
        whole_words: bool = False,
    ) -> AnalogyResult:
        """A is to B as C is to what: the k best tokens (of the candidates, as for neighbors), and where each
        input itself ranks."""
        a, b, c = contract.words_of([a, b, c])
        restriction = restriction_of(self, among, restrict, whole_words, exact)
        return analogy_in(
            self,
            (a, b, c),
            k,
            exact,
            contract.choice(Pool, pool, "pool"),
            keep_inputs,
            contract.choice(Method, method, "method"),
            restriction,
        )

    def similarity(
        self, words: Sequence[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> SimilarityResult:
        """The cosine of every pair of words, and each word's norm."""
        return similarity_in(self, words, exact, pool)

    def positions(self, positions: int | str | Sequence[int | str]) -> PositionsResult:
        """The rows of wpe at some positions (`0`, `[0, 1, 500]`, `"0-5"`): norms and pairwise cosines."""
        return positions_in(self, positions)

    def position_map(self, cells: int = 32, png: str | Path | None = None) -> HeatmapResult:
        """The cosine of every pair of position rows, as cells x cells means of blocks (a shaded table in a
        notebook); with png, also a figure written there: heatmap, norms, principal axes (matplotlib)."""
        return position_map_in(self, cells, png)

    def input(self, text: str, full: bool = False, truncate: bool = False) -> InputResult:
        """The text as the model receives it: its tokens (as typed: no leading space added) and
        h0 = wte[ids] + wpe[0..n-1], with each position's norms and the cosine of its two rows."""
        return input_in(self, text, full, truncate)

    def export(
        self,
        fmt: Format | str,
        out: str | Path,
        table: Table | str = Table.wte,
        limit: int | None = None,
        whole_words: bool = False,
        reporter: Reporter | None = None,
    ) -> ExportResult:
        """One table's rows to word2vec files (fmt "word2vec", "word2vec-binary") or to a folder of the
        Embedding Projector's files ("projector"), in token-id (or position) order: whole words only with
        whole_words, then the first `limit`."""
        return export_in(self, fmt, out, table, limit, whole_words, reporter)

    # ------------------------------------------------------------------ streams of lines

    # A stream of words: each answered as it comes, in blocks of a matrix pass, a word that fails as a
    # batch.FailedLine in its place (the others still answered). A str each, read as a line of stdin is: the
    # spaces around it dropped, a blank one or a `# comment` skipped. A file opened in text mode is one.

    def each_vector(
        self, words: Iterable[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> batch.Answers[VectorItem]:
        """Each word's row, as `vector` gives it, one VectorItem (or batch.FailedLine) per word."""
        return each_vector_in(self, contract.blocks_of(words), exact, pool)

    def each_neighbors(
        self,
        words: Iterable[str],
        k: int = 10,
        exact: bool = False,
        pool: Pool | str = Pool.mean,
        keep_query: bool = False,
        among: str | Path | None = None,
        restrict: int | None = None,
        whole_words: bool = False,
        fold: bool = False,
    ) -> batch.Answers[NeighborsItem]:
        """Each word's nearest tokens, as `neighbors` gives them: a NeighborsItem or batch.FailedLine each."""
        restriction = restriction_of(self, among, restrict, whole_words, exact)
        return each_neighbors_in(
            self,
            contract.blocks_of(words),
            k,
            exact,
            contract.choice(Pool, pool, "pool"),
            keep_query,
            restriction,
            fold,
        )

    def each_analogy(
        self,
        questions: Iterable[str],
        k: int = 10,
        exact: bool = False,
        pool: Pool | str = Pool.mean,
        keep_inputs: bool = False,
        method: Method | str = Method.add,
        among: str | Path | None = None,
        restrict: int | None = None,
        whole_words: bool = False,
    ) -> batch.Answers[AnalogyResult]:
        """Each question `A B C` (white space between the words), answered as `analogy A B C` is: one
        AnalogyResult (or batch.FailedLine) per question."""
        restriction = restriction_of(self, among, restrict, whole_words, exact)
        pool, method = contract.choice(Pool, pool, "pool"), contract.choice(Method, method, "method")
        return each_analogy_in(
            self, contract.blocks_of(questions, "questions"), k, exact, pool, keep_inputs, method, restriction
        )

    def each_similarity(
        self, words: Iterable[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> tuple[SimilarityResult | None, list[batch.FailedLine]]:
        """One matrix of every word that has a row (None for fewer than two); the words that fail, apart."""
        return each_similarity_in(self, contract.blocks_of(words), exact, pool)


def open_embeddings(
    model: str | os.PathLike[str] = registry.DEFAULT_MODEL,
    revision: str | None = None,
    reporter: Reporter | None = None,
) -> Embeddings:
    """A handle on one model's embeddings, for notebooks and scripts: `gpt2emb.open("gpt2")`. Its cache
    entry is opened and checked once, here (fetched on first use); every call then answers from it."""
    o = open_entry(model, revision, reporter)
    return Embeddings(o.model, o.vocab, o.reporter)
