"""The commands as plain functions: names and words in, a result dataclass out (for cli.py and notebooks)."""

from __future__ import annotations

import itertools
import math
import numbers
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from gpt2emb import (
    batch,
    cache,
    candidates,
    checkpoint,
    contract,
    evaluate,
    families,
    forms,
    limits,
    ops,
    registry,
)
from gpt2emb.checkpoint import CheckpointInfo
from gpt2emb.choices import Format, Method, Pool, Rule, Table
from gpt2emb.errors import (
    BadModel,
    DamagedEntry,
    Gpt2embError,
    NotCached,
    UnknownModel,
    UsageError,
    WrongType,
    option,
    spelt,
)
from gpt2emb.export import check_target, write
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.report import QuietReporter, Reporter
from gpt2emb.results.cache import (
    CacheEntry,
    CachePath,
    CacheResult,
    KeptEntry,
    RefreshResult,
    VerifiedEntry,
    VerifyResult,
)
from gpt2emb.results.common import SentenceToken, Token
from gpt2emb.results.evaluate import AnalogyEvalResult, Failure, PairsEvalResult, SectionScore
from gpt2emb.results.export import ExportResult
from gpt2emb.results.geometry import (
    CrossGeometry,
    GeometryResult,
    MaxPair,
    NormStats,
    PositionNorm,
    TableGeometry,
    TokenNorm,
)
from gpt2emb.results.positions import HeatmapResult, PositionsResult
from gpt2emb.results.sizes import ModelRow, ModelsResult
from gpt2emb.results.text import (
    ContextLayer,
    ContextPair,
    ContextResult,
    ContextSentence,
    InputResult,
    InputToken,
)
from gpt2emb.results.tying import Check, Comparison, GradientResult, PathGradient, TyingResult
from gpt2emb.results.words import (
    AnalogyBatch,
    AnalogyInput,
    AnalogyResult,
    CompareResult,
    Form,
    Neighbor,
    NeighborsItem,
    NeighborsResult,
    Overlap,
    Ranked,
    SimilarityResult,
    VectorItem,
    VectorResult,
    Word,
)
from gpt2emb.tokens import Query, Vocab, check_word, quote


def load(
    model: str, reporter: Reporter | None = None, revision: str | None = None
) -> tuple[cache.Model, Vocab]:
    m = cache.open_model(registry.resolve(model, revision), reporter)
    return m, vocab_of(m)


def vocab_of(m: cache.Model) -> Vocab:
    """The tokenizer of a cache entry, with its family's special tokens (refused as words even where the
    entry's tokenizer does not list them)."""
    return Vocab(m.path, m.shape.vocab_size, m.words, m.family.specials)


def _tokens(vocab: Vocab, q: Query) -> tuple[Token, ...]:
    return tuple(Token(i, vocab.token(i)) for i in q.ids)


def _known(model: str) -> tuple[re.Pattern[str] | None, int | None]:
    """What the registry knows of a model before it is opened: its family's special tokens, its vocabulary
    size (None, None for a model it does not name)."""
    spec = registry.find(model)
    if spec is None:
        return None, None
    return families.by_name(spec.shape.family).specials, spec.shape.vocab_size


def check_candidates(
    model: str, among: str | None, restrict: int | None, whole_words: bool, exact: bool
) -> candidates.Restriction | None:
    """--among, --restrict and --whole-words read and checked before the model is opened."""
    return candidates.Restriction.read(among, restrict, whole_words, exact, *_known(model))


def _direction(wte: np.ndarray, q: Query) -> np.ndarray:
    """The query's vector, refused when it is all zeros (a cosine needs a direction) or not all numbers."""
    v = ops.query_vector(wte, q)
    if not np.isfinite(v).all():
        raise BadModel(
            f"the vector of {q.word!r} holds NaN or infinite values: this model's row for it is broken, "
            "so it has no cosine with anything; use another model"
        )
    if not v.any():
        raise UsageError(
            f"the vector of {q.word!r} is all zeros: it has no direction, so it has no cosine with anything"
        )
    return v


def _check_top(k: int, rows: int | None) -> int:
    """k as a Python int, once it is one a ranking can give."""
    k = contract.whole(k)
    if not isinstance(k, int) or isinstance(k, bool):
        raise UsageError(f"{option('k')} must be a whole number, not {k!r}")
    if k < 1:
        raise UsageError(f"{option('k')} must be 1 or more, not {k}")
    if rows is not None and k > rows:
        raise UsageError(f"{option('k')} must be at most {rows} (the number of tokens), not {k}")
    return k


def open_embeddings(
    model: str | os.PathLike[str] = registry.DEFAULT_MODEL,
    revision: str | None = None,
    reporter: Reporter | None = None,
) -> Embeddings:
    """A handle on one model's embeddings, for notebooks and scripts: `gpt2emb.open("gpt2")`. Its cache
    entry is opened and checked once, here (fetched on first use); every call then answers from it."""
    if isinstance(model, os.PathLike) and isinstance(os.fspath(model), str):
        model = os.fspath(model)  # a folder as a pathlib.Path
    if not isinstance(model, str):
        raise WrongType(
            f"model must be a str (gpt2, xl, a Hub repo id, a folder) or a folder's pathlib.Path, not "
            f"{contract.shown(model, 40)}"
        )
    # a name, or a folder's path: one too long for a folder is no model the registry knows (exit 3), as a name
    # no Hub repo can have is
    contract.reachable(option("model"), model, system=False)
    if revision is not None:
        contract.text("revision", revision)
    reporter = contract.reporter("reporter", reporter)
    return Embeddings(*load(model, reporter, revision), reporter)


def open_checked(
    model: str,
    words: list[str] | None,
    exact: bool,
    k: int | None,
    reporter: Reporter | None,
    revision: str | None,
) -> Embeddings:
    """open_embeddings for a command: what can be checked before the model is opened is checked first (its
    words, -k), so bad input never fetches or caches anything. words None: they come later, from stdin."""
    if words is not None and not words:
        raise UsageError("give at least one word")
    specials, rows = _known(model)
    for w in words or ():
        check_word(w, exact, specials)
    if k is not None:  # a registry model's vocabulary is known before anything is fetched
        _check_top(k, rows)
    return open_embeddings(model, revision, reporter)


Prepared = TypeVar("Prepared")
Answer = TypeVar("Answer")


@contract.enforced
class Embeddings:
    """One model's token and position rows, opened once. Each method answers as the command of its name does
    (position_map as `positions --heatmap`) and returns the same result object as that command's --json
    (`.to_dict()` gives the document).

    >>> m = gpt2emb.open("gpt2")
    >>> [n.token for n in m.neighbors("cat", k=5).items[0].neighbors]

    Words are given as on the command line: a str is one word, a list several; `id:N` is token N. The
    `each_*` methods answer a stream of numbered lines (`batch.Line`) a block at a time, a failed line as a
    `batch.Failed` in its place, as `neighbors -` does.

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

    def __init__(self, model: cache.Model, vocab: Vocab, reporter: Reporter | None = None) -> None:
        self.model, self.vocab = model, vocab
        self.reporter = reporter or QuietReporter()  # what export shows unless given its own

    @property
    def name(self) -> str:
        return self.model.name

    def __repr__(self) -> str:
        shape = self.model.shape
        return f"<gpt2emb {self.name}: {shape.vocab_size} tokens x {shape.d_model}>"

    # ------------------------------------------------------------------ one word or a few

    def vector(
        self, words: str | Sequence[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> VectorResult:
        """The raw row of wte for each word, with its norm, mean, std, min and max."""
        return VectorResult(
            self.name, tuple(self._vectors([self._query(w, exact, pool) for w in contract.words_of(words)]))
        )

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
        restriction = self._restriction(among, restrict, whole_words, exact)
        return self._neighbors_result(
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
        restriction = self._restriction(among, restrict, whole_words, exact)
        return self._analogy_result(
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
        words = contract.words_of(words)
        _check_matrix(len(words))
        return self._similarity([self._aimed(w, exact, pool) for w in words])

    def positions(self, positions: int | str | Sequence[int | str]) -> PositionsResult:
        """The rows of wpe at some positions (`0`, `[0, 1, 500]`, `"0-5"`): norms and pairwise cosines."""
        given: Any = [positions] if isinstance(positions, numbers.Integral | str) else positions
        if isinstance(given, np.ndarray) and given.ndim == 1:  # np.arange(5): numbers, as a list's are
            given = given.tolist()
        listed = [contract.whole(p) for p in given] if isinstance(given, Sequence) else None
        if listed is None or not all(isinstance(p, int | str) and not isinstance(p, bool) for p in listed):
            raise WrongType(
                f"positions are whole numbers or ranges such as '0-5', not {contract.shown(positions, 40)}"
            )
        spans = _spans([str(p) for p in listed])
        m = self.model
        _check_position_table(m)
        chosen = parse_positions(spans, m)
        matrix, norms = ops.cosine_matrix(m.wpe[chosen])
        m.check_rows(positions=chosen)
        rows = tuple(p + m.shape.position_offset for p in chosen)
        return PositionsResult(m.name, tuple(chosen), _floats(norms), tuple(_floats(r) for r in matrix), rows)

    def position_map(self, cells: int = 32, png: str | Path | None = None) -> HeatmapResult:
        """The cosine of every pair of position rows, as cells x cells means of blocks (a shaded table in a
        notebook); with png, also a figure written there: heatmap, norms, principal axes (matplotlib)."""
        cells, figure = _check_map(cells, png)
        m = self.model
        _check_position_table(m)
        m.check_rows(positions=range(m.shape.n_positions))  # every row is used, before a figure is written
        full, norms = ops.all_cosines(m.wpe)
        cells = min(cells, m.shape.n_positions)
        if figure is not None:
            from gpt2emb import plot

            plot.positions_figure(full, norms, ops.principal_components(m.wpe, 3), m.name, figure)
        small = ops.block_means(full, cells)
        return HeatmapResult(
            m.name, m.shape.n_positions, m.shape.n_positions / cells, tuple(_floats(r) for r in small), figure
        )

    def input(self, text: str, full: bool = False, truncate: bool = False) -> InputResult:
        """The text as the model receives it: its tokens (as typed: no leading space added) and
        h0 = wte[ids] + wpe[0..n-1], with each position's norms and the cosine of its two rows."""
        _check_text(text)
        m, vocab = self.model, self.vocab
        ids = vocab.tokenize(text)
        if not ids:  # a WordPiece tokenizer drops white space and control characters
            raise UsageError(f"the text {quote(text, 80)} is no tokens at all in {m.name}: type some words")
        limit = _length_limit(m)
        notes = []
        if limit is None:
            notes.append(f"{_no_position_table(m)}: h0 is the token rows alone, wte[ids]")
        elif len(ids) > limit:
            if not truncate:
                raise UsageError(
                    f"the text is {len(ids):,} tokens, but {_past_limit(m)}; shorten the text, or use "
                    f"{option('truncate', True)} to keep the first {limit}"
                )
            notes.append(f"the text is {len(ids):,} tokens: only the first {limit} go in ({_past_limit(m)})")
        notes += _wrapped(m, vocab, _as_typed(m))
        kept = ids[:limit]
        type_row = None if m.types is None else m.types[0]
        rows = ops.input_rows(m.wte, None if limit is None else m.wpe, kept, type_row, m.norm, m.norm_eps)
        offset = m.shape.position_offset
        absent = [None] * len(kept)  # no position table: no wpe figures
        tokens = tuple(
            InputToken(
                p,
                i,
                vocab.token(i),
                float(a),
                None if b is None else float(b),
                float(c),
                _finite(cos),
                None if limit is None else p + offset,
                float(s),
            )
            for p, (i, a, b, c, cos, s) in enumerate(
                zip(
                    kept,
                    rows.wte_norm,
                    absent if rows.wpe_norm is None else rows.wpe_norm,
                    rows.h0_norm,
                    absent if rows.cos_wte_wpe is None else rows.cos_wte_wpe,
                    rows.sum_norm,
                    strict=True,
                )
            )
        )
        m.check_rows(kept, range(len(kept)) if limit is not None else ())
        notes += _overflowed(rows)
        h0 = tuple(_floats(r) for r in rows.h0) if full else None
        return InputResult(
            m.name,
            text,
            len(kept),
            m.shape.d_model,
            tokens,
            h0,
            len(ids),
            m.shape.n_positions,
            tuple(notes),
            m.types is not None,
            m.norm is not None,
            offset,
        )

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
        fmt, table, limit = (
            contract.choice(Format, fmt, "format"),
            contract.choice(Table, table, "table"),
            contract.whole(limit),
        )
        path = _export_target(fmt, out, table, limit, whole_words)
        if table is Table.wpe:
            _check_position_table(self.model, "export")
        return write(self.model, self.vocab, fmt, table, path, limit, whole_words, reporter or self.reporter)

    # ------------------------------------------------------------------ streams of lines

    # A stream of words: each answered as it comes, in blocks of a matrix pass, a word that fails as a
    # batch.Failed in its place (the others still answered). A str each, read as a line of stdin is: the
    # spaces around it dropped, a blank one or a `# comment` skipped. A file opened in text mode is one.

    def each_vector(
        self, words: Iterable[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> batch.Answers[VectorItem]:
        """Each word's row, as `vector` gives it, one VectorItem (or batch.Failed) per word."""
        return self._each_vector(contract.blocks_of(words), exact, pool)

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
        """Each word's nearest tokens, as `neighbors` gives them: a NeighborsItem or a batch.Failed each."""
        restriction = self._restriction(among, restrict, whole_words, exact)
        return self._each_neighbors(
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
        AnalogyResult (or batch.Failed) per question."""
        restriction = self._restriction(among, restrict, whole_words, exact)
        pool, method = contract.choice(Pool, pool, "pool"), contract.choice(Method, method, "method")
        return self._each_analogy(
            contract.blocks_of(questions, "questions"), k, exact, pool, keep_inputs, method, restriction
        )

    def each_similarity(
        self, words: Iterable[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> tuple[SimilarityResult | None, list[batch.Failed]]:
        """One matrix of every word that has a row (None for fewer than two); the words that fail, apart."""
        return self._each_similarity(contract.blocks_of(words), exact, pool)

    def _each_vector(
        self, blocks: Iterable[list[batch.Line]], exact: bool, pool: Pool | str
    ) -> batch.Answers[VectorItem]:
        answers = _each(blocks, lambda text: self._query(text, exact, pool), self._vectors)
        return batch.Answers(
            answers,
            lambda items: VectorResult(self.name, items),
            lambda item, _: VectorResult(self.name, (item,)),
        )

    def _each_similarity(
        self, blocks: Iterable[list[batch.Line]], exact: bool, pool: Pool | str
    ) -> tuple[SimilarityResult | None, list[batch.Failed]]:
        aimed: list[Aimed] = []
        failed: list[batch.Failed] = []
        for answer in _each(blocks, lambda text: self._aimed(text, exact, pool), lambda aimed: aimed):
            if isinstance(answer, batch.Failed):
                failed.append(answer)
            else:
                aimed.append(answer)
            if len(aimed) > MAX_MATRIX or len(failed) > MAX_MATRIX:  # at once: stdin may have no end
                raise UsageError(
                    f"similarity compares at most {MAX_MATRIX:,} words (a {MAX_MATRIX:,}-square matrix), and "
                    f"stdin holds more{' that fail' if len(failed) > MAX_MATRIX else ''}; for each word's "
                    f"nearest tokens, use {spelt('neighbors -', 'each_neighbors')} instead"
                )
        return (self._similarity(aimed) if len(aimed) > 1 else None), failed

    # ------------------------------------------------------------------ the work, for both

    def _query(self, word: str, exact: bool, pool: Pool | str) -> Query:
        return self.vocab.query(word, exact, contract.choice(Pool, pool, "pool"))

    def _aimed(self, word: str, exact: bool, pool: Pool | str) -> Aimed:
        q = self._query(word, exact, pool)
        return q, _direction(self.model.wte, q)

    def _question(
        self, words: tuple[str, str, str], exact: bool, pool: Pool | str
    ) -> tuple[Aimed, Aimed, Aimed]:
        a, b, c = (self._aimed(w, exact, pool) for w in words)
        return a, b, c

    def _vectors(self, queries: list[Query]) -> list[VectorItem]:
        items = []
        for q in queries:
            v = ops.query_vector(self.model.wte, q)
            items.append(
                VectorItem(
                    q.word,
                    _tokens(self.vocab, q),
                    q.pool.value,
                    q.note,
                    tuple(float(x) for x in v),
                    **ops.vector_stats(v),
                )
            )
        self.model.check_rows(t.id for item in items for t in item.tokens)
        return items

    def _rankings(self, vectors: list[np.ndarray]) -> Iterator[ops.Ranking]:
        """Each vector's cosine ranking over wte, a block of vectors per matrix pass (memory stays bounded
        however many there are; a ranking does not depend on its block: see ops.cosine_rankings)."""
        for start in range(0, len(vectors), RANKED):
            yield from ops.cosine_rankings(
                self.model.wte, self.model.wte_norm, vectors[start : start + RANKED]
            )

    def _each_neighbors(
        self,
        blocks: Iterable[list[batch.Line]],
        k: int,
        exact: bool,
        pool: Pool,
        keep_query: bool,
        restriction: candidates.Restriction | None,
        fold: bool,
    ) -> batch.Answers[NeighborsItem]:
        k = _check_top(k, self.model.shape.vocab_size)
        allowed = self._allowed(restriction, exact, pool)
        answers = _each(
            blocks,
            lambda text: self._aimed(text, exact, pool),
            lambda qs: self._neighbors(qs, k, keep_query, allowed, fold),
        )

        def one(item: NeighborsItem, first: bool) -> NeighborsResult:
            said = allowed.notes if first else ()
            return NeighborsResult(
                self.name, k, (item,), allowed.info if first else None, fold, (*said, *fewer(item))
            )

        def fewer(item: NeighborsItem) -> tuple[str, ...]:
            return tuple(_fewer(k, [(item.word, len(item.neighbors))], fold))

        return batch.Answers(
            answers, lambda items: self._neighbors_whole(items, k, allowed, fold), one, allowed.notes, fewer
        )

    def _each_analogy(
        self,
        blocks: Iterable[list[batch.Line]],
        k: int,
        exact: bool,
        pool: Pool,
        keep_inputs: bool,
        method: Method,
        restriction: candidates.Restriction | None,
    ) -> batch.Answers[AnalogyResult]:
        k = _check_top(k, self.model.shape.vocab_size)
        allowed = self._allowed(restriction, exact, pool)

        def question(text: str) -> tuple[Aimed, Aimed, Aimed]:
            words = text.split()
            if len(words) != 3:
                raise UsageError(f"{quote(text, 80)} is not three words A B C, as in: king man woman")
            return self._question((words[0], words[1], words[2]), exact, pool)

        answers = _each(blocks, question, lambda qs: self._analogies(qs, k, keep_inputs, method, allowed))
        return batch.Answers(answers, lambda items: AnalogyBatch(self.name, items), lambda item, _: item)

    def _restriction(
        self, among: str | Path | None, restrict: int | None, whole_words: bool, exact: bool
    ) -> candidates.Restriction | None:
        restrict = contract.whole(restrict)
        if restrict is not None and (not isinstance(restrict, int) or isinstance(restrict, bool)):
            raise UsageError(f"restrict is a number of token ids, not {restrict!r:.40}")
        if among is not None and not isinstance(among, str | Path):
            raise UsageError(f"among is a file of words (a str or a Path), not {among!r:.40}")
        m = self.model
        listed = None if among is None else str(among)
        return candidates.Restriction.read(
            listed, restrict, whole_words, exact, m.family.specials, m.shape.vocab_size
        )

    def _allowed(
        self, restriction: candidates.Restriction | None, exact: bool, pool: Pool
    ) -> candidates.Allowed:
        return candidates.allowed_rows(self.vocab, restriction, exact, pool)

    def _neighbors_result(
        self,
        words: list[str],
        k: int,
        exact: bool,
        pool: Pool,
        keep_query: bool,
        restriction: candidates.Restriction | None,
        fold: bool,
    ) -> NeighborsResult:
        k = _check_top(k, self.model.shape.vocab_size)
        allowed = self._allowed(restriction, exact, pool)
        queries = [self._aimed(w, exact, pool) for w in words]
        return self._neighbors_whole(
            tuple(self._neighbors(queries, k, keep_query, allowed, fold)), k, allowed, fold
        )

    def _neighbors_whole(
        self, items: tuple[NeighborsItem, ...], k: int, allowed: candidates.Allowed, fold: bool
    ) -> NeighborsResult:
        notes = (*allowed.notes, *_fewer(k, [(item.word, len(item.neighbors)) for item in items], fold))
        return NeighborsResult(self.name, k, items, allowed.info, fold, notes)

    def _neighbors(
        self, queries: list[Aimed], k: int, keep_query: bool, allowed: candidates.Allowed, fold: bool
    ) -> list[NeighborsItem]:
        vocab, items, m = self.vocab, [], self.model
        if len(queries) * k >= 5000:
            vocab.texts()  # thousands of tokens to show: every token's text worked out at once costs less
        for start in range(0, len(queries), batch.BLOCK):  # a block of words per matrix pass
            block = queries[start : start + batch.BLOCK]
            excludes = [() if keep_query else q.ids for q, _ in block]
            vectors = [v for _, v in block]
            if fold:  # a word's rows are asked for until k different words show: a ranking each
                for (q, _), ranking, out in zip(block, self._rankings(vectors), excludes, strict=True):
                    items.append(_folded(vocab, q, ranking, k, out, allowed.mask, keep_query))
                continue
            tops = ops.cosine_tops(m.wte, m.wte_norm, vectors, k, excludes, allowed.mask)
            for (q, _), best in zip(block, tops, strict=True):
                found = tuple(Neighbor(r, i, vocab.token(i), s) for r, (i, s) in enumerate(best, 1))
                items.append(NeighborsItem(q.word, _tokens(vocab, q), q.pool.value, q.note, found))
        shown = [n.id for item in items for n in item.neighbors]
        forms = [f.id for item in items for n in item.neighbors for f in n.forms or ()] if fold else []
        m.check_rows([*(t.id for item in items for t in item.tokens), *shown, *forms])
        return items

    def _analogy_result(
        self,
        words: tuple[str, str, str],
        k: int,
        exact: bool,
        pool: Pool,
        keep_inputs: bool,
        method: Method,
        restriction: candidates.Restriction | None,
    ) -> AnalogyResult:
        k = _check_top(k, self.model.shape.vocab_size)
        allowed = self._allowed(restriction, exact, pool)
        (result,) = self._analogies([self._question(words, exact, pool)], k, keep_inputs, method, allowed)
        return result

    def _analogies(
        self,
        questions: list[tuple[Aimed, Aimed, Aimed]],
        k: int,
        keep_inputs: bool,
        method: Method,
        allowed: candidates.Allowed,
    ) -> list[AnalogyResult]:
        vectors = [ops.analogy_vectors(a[1], b[1], c[1], method) for a, b, c in questions]
        rankings = self._rankings([v for vs in vectors for v in vs])
        vocab, results, mask = self.vocab, [], allowed.mask
        for question, vs in zip(questions, vectors, strict=True):
            ranking = ops.analogy_of([next(rankings) for _ in vs], method)
            qa, qb, qc = (q for q, _ in question)
            input_ids = tuple(dict.fromkeys(i for q in (qa, qb, qc) for i in q.ids))
            best = ranking.top(k, () if keep_inputs else input_ids, mask)
            ranked = tuple(
                Ranked(r, i, vocab.token(i), s, i in input_ids) for r, (i, s) in enumerate(best, 1)
            )
            inputs = tuple(
                AnalogyInput(q.word, i, vocab.token(i), *ranking.rank(i, mask))
                for q in (qa, qb, qc)
                for i in q.ids
            )
            expression = f"{qa.word} - {qb.word} + {qc.word}"
            notes = (
                *(q.note for q in (qa, qb, qc) if q.note),
                *allowed.notes,
                *_fewer(k, [(expression, len(ranked))], False),
            )
            results.append(
                AnalogyResult(
                    self.name, expression, method.value, keep_inputs, ranked, inputs, notes, allowed.info
                )
            )
        self.model.check_rows(
            i for r in results for i in (*(x.id for x in r.inputs), *(x.id for x in r.results))
        )
        return results

    def _similarity(self, queries: list[Aimed]) -> SimilarityResult:
        _check_matrix(len(queries))
        matrix, norms = ops.cosine_matrix(np.stack([v for _, v in queries]))
        items = tuple(Word(q.word, _tokens(self.vocab, q), q.pool.value, q.note) for q, _ in queries)
        self.model.check_rows(t.id for item in items for t in item.tokens)
        return SimilarityResult(self.name, items, _floats(norms), tuple(_floats(r) for r in matrix))


MAX_MATRIX = 1000  # words of one similarity matrix: a million cosines, some 20 MB of JSON


def _check_matrix(n: int) -> None:
    if n < 2:
        raise UsageError(
            "give at least two words to compare, as in: "
            + spelt("similarity cat cats dog", "similarity(['cat', 'cats', 'dog'])")
        )
    if n > MAX_MATRIX:
        raise UsageError(
            f"similarity compares at most {MAX_MATRIX:,} words (a {MAX_MATRIX:,}-square matrix), not {n:,}; "
            f"for each word's nearest tokens, use {spelt('neighbors -', 'each_neighbors')} instead"
        )


def _check_text(text: str) -> None:
    if not text:
        raise UsageError(
            "the text is empty: type some, as in: "
            + spelt('input "O Brasil é gigante"', "input('O Brasil é gigante')")
        )


# vectors whose whole rankings (two bounds per row) are held at once: 128 x 50257 x 8 bytes, 51 MB (a block of
# words for neighbors needs less per word: batch.BLOCK)
RANKED = 128
Aimed = tuple[Query, np.ndarray]  # a word's query and its vector, checked to have a direction


def _each(
    blocks: Iterable[list[batch.Line]],
    prepare: Callable[[str], Prepared],
    answer: Callable[[list[Prepared]], list[Answer]],
) -> Iterator[Answer | batch.Failed]:
    """Each line's answer, in the order of the lines: a block's good lines answered together, a line that
    fails (its word, not the model) as a Failed in its place. A block's first failed line splits its pass:
    the lines before it are answered and it is yielded before any line after it is looked at, so a consumer
    that stops there (--strict) has had nothing computed in vain; the rest of the block is one more pass (at
    most two a block however many of its lines fail: a split at each would cost a pass over wte each)."""
    for block in blocks:
        lines = iter(block)
        yield from _answered(lines, prepare, answer, until_failure=True)
        yield from _answered(lines, prepare, answer, until_failure=False)


def _answered(
    lines: Iterator[batch.Line],
    prepare: Callable[[str], Prepared],
    answer: Callable[[list[Prepared]], list[Answer]],
    until_failure: bool,
) -> Iterator[Answer | batch.Failed]:
    """The answers of the lines taken from `lines` (up to and with the first failed one, until_failure),
    in order, their good lines in one pass."""
    taken: list[batch.Line] = []
    ready: dict[int, Prepared] = {}
    failed: dict[int, batch.Failed] = {}
    for line in lines:
        taken.append(line)
        try:
            if line.problem:
                raise UsageError(line.problem)
            ready[line.number] = prepare(line.text)
        except DamagedEntry:
            raise  # the cache entry, not the line: nothing else can be answered either
        except Gpt2embError as e:
            failed[line.number] = batch.Failed(line, e)
            if until_failure:
                break
    answers = dict(zip(ready, answer(list(ready.values())), strict=True)) if ready else {}
    for line in taken:
        yield failed[line.number] if line.number in failed else answers[line.number]


def _folded(
    vocab: Vocab,
    q: Query,
    ranking: ops.Ranking,
    k: int,
    exclude: tuple[int, ...],
    allowed: np.ndarray | None,
    keep_query: bool,
) -> NeighborsItem:
    """One word's neighbours folded by word form (--fold): see forms.fold."""

    def eligible(ids: list[int]) -> list[bool]:
        return [i not in exclude and (allowed is None or bool(allowed[i])) for i in ids]

    query = vocab.forms.of_text("".join(vocab.token(i) for i in q.ids))
    folded = forms.fold(
        lambda n: ranking.top(n, exclude, allowed),
        lambda ids: [float(x) for x in ranking.scores(np.array(ids, dtype=np.int64))],
        eligible,
        vocab.forms,
        query,
        k,
        keep_query,
    )
    rows = []
    for rank, row in enumerate(folded.rows, 1):
        (head, score), shown = row[0], tuple(Form(i, vocab.token(i), s) for i, s in row)
        rows.append(Neighbor(rank, head, vocab.token(head), score, shown))
    return NeighborsItem(q.word, _tokens(vocab, q), q.pool.value, q.note, tuple(rows), folded.form_share)


def _fewer(k: int, found: list[tuple[str, int]], fold: bool) -> list[str]:
    """A note for each answer shorter than k: the candidates ran out (never padded)."""
    what = ("different word", "different words") if fold else ("token", "tokens")
    return [
        f"{word}: only {n} {what[n != 1]} {'is' if n == 1 else 'are'} left to rank, fewer than the {k} asked "
        f"for ({spelt('-k', 'k')})"
        for word, n in found
        if n < k
    ]


# The commands with their words: open (after checking the words), then ask the handle.


def vector(
    model: str,
    words: list[str],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> VectorResult:
    return open_checked(model, words, exact, None, reporter, revision).vector(words, exact, pool)


def neighbors(
    model: str,
    words: list[str],
    k: int = 10,
    exact: bool = False,
    pool: Pool = Pool.mean,
    keep_query: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
    among: str | None = None,
    restrict: int | None = None,
    whole_words: bool = False,
    fold: bool = False,
) -> NeighborsResult:
    chosen = check_candidates(model, among, restrict, whole_words, exact)  # checked before opening
    handle = open_checked(model, words, exact, k, reporter, revision)
    return handle._neighbors_result(words, k, exact, pool, keep_query, chosen, fold)


def analogy(
    model: str,
    a: str,
    b: str,
    c: str,
    k: int = 10,
    exact: bool = False,
    pool: Pool = Pool.mean,
    keep_inputs: bool = False,
    method: Method = Method.add,
    reporter: Reporter | None = None,
    revision: str | None = None,
    among: str | None = None,
    restrict: int | None = None,
    whole_words: bool = False,
) -> AnalogyResult:
    chosen = check_candidates(model, among, restrict, whole_words, exact)  # checked before opening
    handle = open_checked(model, [a, b, c], exact, k, reporter, revision)
    return handle._analogy_result((a, b, c), k, exact, pool, keep_inputs, method, chosen)


def similarity(
    model: str,
    words: list[str],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> SimilarityResult:
    _check_matrix(len(words))
    return open_checked(model, words, exact, None, reporter, revision).similarity(words, exact, pool)


def positions(
    model: str, specs: list[str], reporter: Reporter | None = None, revision: str | None = None
) -> PositionsResult:
    _spans(specs)  # the syntax, before the model is opened
    return open_embeddings(model, revision, reporter).positions(specs)


def model_input(
    model: str,
    text: str,
    full: bool = False,
    truncate: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> InputResult:
    _check_text(text)
    return open_embeddings(model, revision, reporter).input(text, full, truncate)


def each_vector(
    model: str,
    blocks: Iterable[list[batch.Line]],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> batch.Answers[VectorItem]:
    """`vector -`: what can be checked before the model is opened is, then the handle answers the lines."""
    return open_checked(model, None, exact, None, reporter, revision)._each_vector(blocks, exact, pool)


def each_similarity(
    model: str,
    blocks: Iterable[list[batch.Line]],
    exact: bool = False,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> tuple[SimilarityResult | None, list[batch.Failed]]:
    """`similarity -`: one matrix of the lines' words, and the lines that failed."""
    return open_checked(model, None, exact, None, reporter, revision)._each_similarity(blocks, exact, pool)


def each_neighbors(
    model: str,
    blocks: Iterable[list[batch.Line]],
    k: int = 10,
    exact: bool = False,
    pool: Pool = Pool.mean,
    keep_query: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
    among: str | None = None,
    restrict: int | None = None,
    whole_words: bool = False,
    fold: bool = False,
) -> batch.Answers[NeighborsItem]:
    """`neighbors -`: -k and the candidates checked (an --among file read once) before the model is opened."""
    chosen = check_candidates(model, among, restrict, whole_words, exact)
    handle = open_checked(model, None, exact, k, reporter, revision)
    return handle._each_neighbors(blocks, k, exact, pool, keep_query, chosen, fold)


def each_analogy(
    model: str,
    blocks: Iterable[list[batch.Line]],
    k: int = 10,
    exact: bool = False,
    pool: Pool = Pool.mean,
    keep_inputs: bool = False,
    method: Method = Method.add,
    reporter: Reporter | None = None,
    revision: str | None = None,
    among: str | None = None,
    restrict: int | None = None,
    whole_words: bool = False,
) -> batch.Answers[AnalogyResult]:
    """`analogy -`: as each_neighbors."""
    chosen = check_candidates(model, among, restrict, whole_words, exact)
    handle = open_checked(model, None, exact, k, reporter, revision)
    return handle._each_analogy(blocks, k, exact, pool, keep_inputs, method, chosen)


_RANGE = re.compile(r"([0-9]{1,12})-([0-9]{1,12})", re.ASCII)


def _spans(specs: list[str]) -> list[tuple[int, int]]:
    """The syntax of `0 1 2 500` and `0-5`, checked before any model is opened."""
    if not specs:
        raise UsageError(
            "give at least one position, as in: " + spelt("positions 0 1 2 500", "positions([0, 1, 2, 500])")
        )
    spans = []
    for spec in specs:
        s = spec.strip()
        if m := _RANGE.fullmatch(s):
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise UsageError(f"range {s} runs backwards: write it low-high, as {hi}-{lo}")
            spans.append((lo, hi))
        elif re.fullmatch(r"-?[0-9]{1,12}", s, re.ASCII):
            spans.append((int(s), int(s)))
        else:
            raise UsageError(f"{spec!r} is not a position: write a whole number or a range such as 0-5")
    return spans


def _positions_learned(m: cache.Model) -> str:
    """What a model learned, as the refusals of a position past it say."""
    n, offset = m.shape.n_positions, m.shape.position_offset
    said = f"{m.name} learned {n} positions, 0 to {n - 1}"
    if offset:
        said += (
            f" (rows {offset} to {offset + n - 1} of its position table: the rows before position 0's "
            "are never used for a token, one of them is the padding row)"
        )
    return said


def _no_position_table(m: cache.Model) -> str:
    """Why a model has no position rows, as messages say it."""
    return f"{m.name} has no position table: in a {m.family.title} model, {m.family.no_position_table}"


def _check_position_table(m: cache.Model, doing: str = "compare") -> None:
    """Refuse a command about position rows for a model that learned none (exit 2)."""
    if not m.shape.position_table:
        raise UsageError(
            f"{_no_position_table(m)}, so there are no position rows to {doing}; use a model with learned "
            "positions, such as gpt2 or roberta-base"
        )


def _length_limit(m: cache.Model) -> int | None:
    """The most tokens a text may have: one per learned position, less the special tokens the model's
    tokenizer adds around a text in use (<s> and </s>: a text as typed must fit as it is used), None without
    a position table."""
    return m.shape.n_positions - len(m.wraps[0]) - len(m.wraps[1]) if m.shape.position_table else None


def _past_limit(m: cache.Model) -> str:
    """Why no more tokens than _length_limit fit, as the refusals of a longer text say it."""
    limit, added = _length_limit(m), len(m.wraps[0]) + len(m.wraps[1])
    if not added:
        return f"position {limit} does not exist: {_positions_learned(m)}"
    added_in_use = f"its tokenizer adds {added} special tokens to a text in use"
    return f"{limit} fit: {_positions_learned(m)}, and {added_in_use}"


def parse_positions(spans: list[tuple[int, int]], m: cache.Model) -> list[int]:
    """Positions and ranges; every one must be a row the model learned."""
    n_positions = m.shape.n_positions
    for lo, hi in spans:
        for p in (lo, hi):
            if not 0 <= p < n_positions:
                raise UsageError(f"position {p} does not exist: {_positions_learned(m)}")
    if sum(hi - lo + 1 for lo, hi in spans) > n_positions:
        raise UsageError(f"more positions asked for than the {n_positions} there are")
    return [p for lo, hi in spans for p in range(lo, hi + 1)]


def position_map(
    model: str,
    cells: int = 32,
    png: str | None = None,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> HeatmapResult:
    _check_map(cells, png)  # before the model is opened
    return open_embeddings(model, revision, reporter).position_map(cells, png)


def _check_map(cells: int, png: str | Path | None) -> tuple[int, str | None]:
    """position_map's cells and png, checked (matplotlib there for a figure) before any row is read."""
    cells = contract.whole(cells)
    if not isinstance(cells, int) or isinstance(cells, bool) or not 2 <= cells <= 256:
        raise UsageError(f"{option('cells')} must be from 2 to 256, not {cells!r:.40}")
    if png is None:
        return cells, None
    if not isinstance(png, str | Path) or not str(png).strip():
        raise UsageError(f"{option('png')} needs a file name, such as {option('png', 'wpe.png')}")
    from gpt2emb import plot

    plot.check_available()
    png = limits.user_path(png)
    plot.figure_target(png).real()  # a device, FIFO, socket or folder there is refused before any fetch
    return cells, str(png)


def _overflowed(rows: ops.InputRows) -> list[str]:
    """A note for the positions whose rows are finite but add up past float32 (two rows near 3e38): the
    null there is the model's own input, not a broken row."""
    finite = np.isfinite(rows.wte_norm) & (True if rows.wpe_norm is None else np.isfinite(rows.wpe_norm))
    past = np.flatnonzero(finite & ~np.isfinite(rows.sum_norm))
    if not len(past):
        return []
    where = ", ".join(str(int(p)) for p in past[:5]) + (", ..." if len(past) > 5 else "")
    return [
        f"at position{'s' if len(past) > 1 else ''} {where} the rows are finite, but their sum is past "
        "float32's largest number (3.4e38): the model adds them in float32, so its input there is not a "
        "finite number"
    ]


def _floats(values: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in values)


def tying(
    model: str,
    load_model: bool = False,
    revision: str | None = None,
    grad: str | None = None,
    reporter: Reporter | None = None,
    compare: bool = False,
) -> TyingResult:
    """Whether lm_head reuses wte: config, a model on the meta device, the header; load_model adds data_ptr()
    on the loaded model, grad the gradient of the language-model loss on a text by each of wte's two uses,
    compare how far an untied output layer's rows are from wte's."""
    from gpt2emb import heavy

    if grad is not None and not grad:
        raise UsageError("--grad needs a text of at least two tokens, as in: tying --grad 'the cat sat'")
    reporter = reporter or QuietReporter()
    ref = registry.resolve(model, revision)
    info = cache.checkpoint_info(ref)
    family = families.of_config(info.config, ref.name)
    shape = family.shape(info.config, ref.name)
    tie = family.tied(info.config)
    saved = shape.vocab_size * shape.d_model
    checks = [Check("config", tie, f"config.json: tie_word_embeddings = {str(tie).lower()}")]
    # read_info counts the blocks a safetensors header names; a pickle's names are read here, before the
    # meta model is built (which builds any number of blocks, however slowly); the meta model's tensors
    # are then checked against the checkpoint's shapes (a hub pickle's are known only once it is loaded)
    label, file = checkpoint.config_label(ref), info.weights_file
    shapes = {k: t.shape for k, t in info.tensors.items()} if file != checkpoint.PICKLE else None
    if ref.folder is not None and file == checkpoint.PICKLE:
        shapes = heavy.check_blocks(ref.folder, shape.n_layer, label)
    weights = str(ref.folder / file) if ref.folder is not None else f"{ref.repo}'s {file}"
    same, n_params = heavy.meta_model_ties(info.config, family.classes, label, shapes, weights)
    output, table = family.lm_names
    checks.append(
        Check(
            "meta_model",
            same,
            f"{family.classes[2]} built on the meta device ({n_params:,} parameters, no weights): "
            f"{output} {'is' if same else 'is not'} {table}",
        )
    )
    own, stored = checkpoint.output_key(info, family), family.output_names[0]
    if info.tensors:
        head = stored.split(".")[0] + "."  # a masked language model's head: cls., lm_head., vocab_projector.
        if own:
            found = f"a separate {own}"
        elif not family.causal and not any(k.startswith(head) for k in info.tensors):
            found = (
                f"no {head}* tensor: a {family.classes[1]} without the language-model head, which "
                f"{family.classes[2]} ties to wte and whose other layers it starts at random"
            )
        else:
            found = f"no {stored}: the output layer is read from wte"
        checks.append(
            Check(
                "checkpoint",
                own is None,
                f"{info.weights_file} stores {len(info.tensors)} tensors and {found}",
            )
        )
    if grad is not None and not family.causal:
        raise UsageError(
            f"{ref.name} is a masked language model ({family.title}), not a next-token one: --grad takes the "
            "gradient of the next-token loss, which it was not trained on; use a next-token model (gpt2, "
            "GPT-Neo, a tied rotary model)"
        )
    if grad is not None and not (tie and same):
        raise UsageError(
            f"{ref.name} is not tied (see: gpt2emb tying -m {model}): its output layer has a matrix of its "
            "own, so no gradient of it reaches wte; --grad needs a tied model"
        )
    if compare and not info.tensors:
        raise UsageError(
            f"{ref.name} stores its weights in {info.weights_file}: --compare reads the output layer by byte "
            "ranges of a safetensors checkpoint; use a model saved as safetensors"
        )
    if compare and own is None:
        raise UsageError(
            f"{ref.name} stores no {stored} of its own: its output layer is wte itself, so there is nothing "
            "to compare; --compare is for an untied model"
        )
    gradient = None
    if grad is not None:
        gradient = _gradient(ref, info, grad, reporter)
    comparison = _compare(ref, info, own, reporter) if compare and own is not None else None
    if load_model:
        equal, pa, pb = heavy.loaded_model_ties(
            _weights_folder(ref, info, reporter), family.classes, checkpoint.config_label(ref)
        )
        checks.append(
            Check(
                "loaded_model",
                equal,
                f"from_pretrained: {output}.data_ptr() = {pa:#x}, {table}.data_ptr() = {pb:#x}",
            )
        )
    tied = all(c.passed for c in checks)
    return TyingResult(ref.name, tied, saved if tied else 0, tuple(checks), gradient, comparison)


COMPARE_ALL_BYTES = 1_000_000_000  # an output layer up to 1 GB is compared whole; a larger one is sampled
COMPARE_SAMPLE, COMPARE_RUN, COMPARE_SEED = 4096, 64, 0  # rows of the sample, in runs of 64, seeded


def _compare(ref: ModelRef, info: CheckpointInfo, key: str, reporter: Reporter) -> Comparison:
    """An untied output layer's rows, fetched by byte ranges (all, or a seeded sample of a large one), each
    against its own row of wte and against a seeded random other row of wte."""
    m = cache.open_model(ref, reporter, info.commit)
    t = info.tensors[key]
    if t.shape != m.wte.shape:
        raise BadModel(
            f"{ref.name}'s {key} is {list(t.shape)} and its token table {list(m.wte.shape)}: their rows do "
            "not pair up, so they cannot be compared"
        )
    n = t.shape[0]
    sampled = t.end - t.start > COMPARE_ALL_BYTES and n > COMPARE_SAMPLE
    runs = ops.sample_runs(n, COMPARE_SAMPLE, COMPARE_RUN, COMPARE_SEED) if sampled else [range(n)]
    ids = np.concatenate([np.arange(r.start, r.stop) for r in runs])
    others = ops.other_rows(ids, n, COMPARE_SEED)
    matching, random = np.empty(len(ids)), np.empty(len(ids))
    at = 0
    for rows, block in checkpoint.read_rows(ref, info, key, runs, reporter):
        mine = slice(at, at + len(rows))
        matching[mine] = ops.paired_cosines(block, m.wte[rows.start : rows.stop])
        random[mine] = ops.paired_cosines(block, m.wte[others[mine]])
        at += len(rows)
    m.check_rows(np.union1d(ids, others))
    return Comparison(
        len(ids),
        sampled,
        ops.mean_defined(matching),
        ops.mean_defined(random),
        n,
        key,
        (t.end - t.start) // n * len(ids),
    )


def _weights_folder(ref: ModelRef, info: CheckpointInfo, reporter: Reporter) -> Path:
    """The folder to load the whole model from. What is not on this machine yet is fetched into the HF cache,
    its size said first; offline, that is refused."""
    missing = checkpoint.missing_weights(ref, info)
    if missing:
        reporter.note(
            f"this runs the whole of {ref.name}: fetching all its weights once into the Hugging Face cache, "
            f"{sum(missing.values()) / 1e6:,.1f} MB ({', '.join(missing)})"
        )
    return checkpoint.weights_folder(ref, info)


def _open_for_whole(ref: ModelRef, info: CheckpointInfo, reporter: Reporter) -> tuple[cache.Model, Vocab]:
    """The cache entry of a model about to run whole. When it is not built yet, the weights are fetched first
    and it is built from them, so nothing is fetched twice; otherwise they are fetched only once the input has
    been checked against its tokenizer."""
    if not cache.has_entry(ref, info.commit):
        _weights_folder(ref, info, reporter)
    m = cache.open_model(ref, reporter, info.commit)
    return m, vocab_of(m)


def _encode(vocab: Vocab, text: str, m: cache.Model, what: str) -> tuple[SentenceToken, ...]:
    """A text's tokens as the model receives them: exactly the tokenizer's ids (as typed: no space added; a
    special token keeps the spaces around it as their own tokens, as in use), refused when longer than the
    positions the model learned (a model without a position table has no such limit)."""
    ids = vocab.tokenize(text)
    limit = _length_limit(m)
    if limit is not None and len(ids) > limit:
        raise UsageError(f"{what} has {len(ids)} tokens, but {_past_limit(m)}; shorten it")
    return tuple(SentenceToken(p, i, vocab.token(i)) for p, i in enumerate(ids))


def _gradient(ref: ModelRef, info: CheckpointInfo, text: str, reporter: Reporter) -> GradientResult:
    from gpt2emb import heavy

    m, vocab = _open_for_whole(ref, info, reporter)
    tokens = _encode(vocab, text, m, f"--grad {quote(text, 40)}")
    if len(tokens) < 2:
        raise UsageError(
            f"--grad {quote(text)} is {len(tokens)} token: the loss predicts each next token from the ones "
            "before, so the text needs at least two; give a longer text"
        )
    ids = tuple(t.id for t in tokens)
    loss, by_input, by_output, tied = heavy.lm_gradients(
        _weights_folder(ref, info, reporter), m.family.classes, ids, checkpoint.config_label(ref)
    )

    def touched(g: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.any(g != 0, axis=1))

    rows_in, rows_out = touched(by_input), touched(by_output)
    shared = np.intersect1d(rows_in, rows_out)
    tied_norm = ops.norm(tied.ravel())
    difference = ops.norm((by_input.astype(np.float64) + by_output - tied).ravel())
    relative = difference / tied_norm if tied_norm > 0 else (0.0 if difference == 0 else None)
    notes = []
    if tied_norm == 0:
        notes.append(
            "the gradient is all zeros: the loss does not change with wte at all here (weights of zeros, as "
            "in a synthetic checkpoint, give every token the same score whatever its row)"
        )
    elif len(rows_in) < len(set(ids)):
        notes.append(
            f"the input path touches {len(rows_in)} of the text's {len(set(ids))} distinct tokens: the last "
            "position predicts nothing inside the text, so its token's row gets nothing by that path unless "
            "it occurs earlier"
        )
    return GradientResult(
        text,
        loss,
        PathGradient(ops.norm(by_input.ravel()), len(rows_in)),
        PathGradient(ops.norm(by_output.ravel()), len(rows_out)),
        ops.cosine(by_input[shared].ravel(), by_output[shared].ravel()) if len(shared) else None,
        difference <= 1e-5 * tied_norm,
        tokens,
        len(shared),
        tied_norm,
        relative,
        tuple(notes),
        len(m.wte),
    )


def _wrapped(m: cache.Model, vocab: Vocab, how: str) -> list[str]:
    """A note where the model's tokenizer, called as usual, adds special tokens around a text, saying `how`
    the command takes them."""
    before, after = m.wraps
    if not before and not after:
        return []
    shown = " and ".join(
        f"{' '.join(vocab.token(i) for i in ids)} {where}"
        for ids, where in ((before, "before"), (after, "after"))
        if ids
    )
    return [f"{m.name}'s tokenizer, called as usual, adds {shown} the text; {how}"]


def _as_typed(m: cache.Model) -> str:
    """How `input` takes the special tokens a tokenizer adds (see _wrapped): it shows a text as typed."""
    before = len(m.wraps[0])
    later = f": in use each token sits {before} position{'s' if before > 1 else ''} later" if before else ""
    return f"shown here as typed, without them{later}"


def _h0_formula(m: cache.Model) -> str:
    total = "wte[token]" + (" + wpe[position]" if m.shape.position_table else "")
    total += " + type[0]" if m.types is not None else ""
    return f"LayerNorm({total})" if m.norm is not None else total


def context(
    word: str,
    sentences: list[str],
    model: str = registry.DEFAULT_MODEL,
    pool: Pool = Pool.mean,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> ContextResult:
    """Static against contextual: the word's vector in each sentence, at every layer of the model, compared
    between sentences and with the word's row of wte."""
    from gpt2emb import heavy

    if len(sentences) < 2:
        raise UsageError(
            "give a word and at least two sentences that hold it, as in: "
            'context bank "I sat on the river bank" "I paid at the bank"'
        )
    check_word(word, exact=False)
    for n, sentence in enumerate(sentences, 1):
        if not sentence.strip():
            raise UsageError(f"sentence {n} is empty; give a sentence that holds {word!r}")
    reporter = reporter or QuietReporter()
    ref = registry.resolve(model, revision)
    info = cache.checkpoint_info(ref)
    m, vocab = _open_for_whole(ref, info, reporter)
    q = vocab.query(word, False, pool)
    found = [_find(vocab, q, s, n, m) for n, s in enumerate(sentences, 1)]
    before, after = m.wraps  # the special tokens its tokenizer adds around a text: run as in use
    states = heavy.hidden_states(
        _weights_folder(ref, info, reporter),
        m.family.classes,
        [(*before, *(t.id for t in f.tokens), *after) for f in found],
        checkpoint.config_label(ref),
    )
    static = ops.query_vector(m.wte, q)
    layers = []
    for layer in range(len(states[0])):
        vectors = [
            ops.pooled(h[layer, [len(before) + at for at in f.at]], q.pool)
            for h, f in zip(states, found, strict=True)
        ]
        pairs = tuple(
            ContextPair(a, b, ops.cosine(vectors[a], vectors[b]))
            for a, b in itertools.combinations(range(len(vectors)), 2)
        )
        layers.append(ContextLayer(layer, pairs, tuple(ops.cosine(v, static) for v in vectors)))
    shown = _pieces(vocab, q.ids)
    notes = [
        q.note,
        *(
            f"{shown} occurs {f.occurrences} times in sentence {n}; using the first, at position {f.at[0]}"
            for n, f in enumerate(found, 1)
            if f.occurrences > 1
        ),
        f"layer 0 is h0 = {_h0_formula(m)}: there the word's vectors differ only by their position "
        "rows (at the same position they are equal)"
        if m.shape.position_table
        else f"layer 0 is h0 = {_h0_formula(m)} ({_no_position_table(m)}): there the word's vectors are "
        "the same in every sentence",
        *_wrapped(
            m,
            vocab,
            "the model is run on each sentence with them, as in use (positions here count the sentence's "
            "own tokens)",
        ),
    ]
    return ContextResult(
        m.name,
        word,
        tuple(found),
        tuple(layers),
        _tokens(vocab, q),
        q.pool.value,
        tuple(n for n in notes if n),
    )


def _pieces(vocab: Vocab, ids: tuple[int, ...]) -> str:
    return " + ".join(quote(vocab.token(i)) for i in ids)


def _find(vocab: Vocab, q: Query, sentence: str, n: int, m: cache.Model) -> ContextSentence:
    """Where the word's tokens stand in a sentence: whole tokens, not the start of a longer word."""
    tokens = _encode(vocab, sentence, m, f"sentence {n}")
    ids, k = [t.id for t in tokens], len(q.ids)
    starts = [
        p
        for p in range(len(ids) - k + 1)
        if tuple(ids[p : p + k]) == q.ids
        and (p + k == len(ids) or not tokens[p + k].token[:1].isalnum())  # " bank" + "ing" is not " bank"
    ]
    if not starts:
        shown = " ".join(quote(t.token) for t in tokens[:16]) + (" ..." if len(tokens) > 16 else "")
        raise UsageError(
            f"{_pieces(vocab, q.ids)} is not in sentence {n} ({quote(sentence, 80)}), whose tokens are "
            f"{shown}: the word counts as in running text (as its tokens above), in the same case, and not "
            "as part of a longer word"
        )
    return ContextSentence(sentence, tokens, tuple(range(starts[0], starts[0] + k)), len(starts))


def _cache_result(
    action: str, found: list[cache.Entry], kept: Iterable[cache.Kept] = (), outdated: bool = False
) -> CacheResult:
    rows = tuple(CacheEntry(e.name, e.repo, e.commit, str(e.path), e.size, e.outdated) for e in found)
    held = tuple(
        KeptEntry(k.entry.name, k.entry.repo, k.entry.commit, str(k.entry.path), k.reason) for k in kept
    )
    return CacheResult(action, str(cache.cache_root()), rows, sum(e.size for e in found), held, outdated)


def _cached(model: str) -> ModelRef:
    """A model as the cache commands name it: a local folder that is gone still names its entries."""
    try:
        return registry.resolve(model)
    except UnknownModel:
        path = limits.user_path(model)
        gone = ModelRef(model, folder=path.resolve())
        if cache.has_entries(gone):
            return gone
        raise


def cache_list() -> CacheResult:
    return _cache_result("list", cache.entries())


def cache_clear(model: str | None, outdated: bool = False) -> CacheResult:
    """Remove what can be removed; what cannot (in use) is in `kept`, whole. outdated: only the entries of
    local folders whose files have changed since, or are gone."""
    return _cache_result("clear", *cache.clear(_cached(model) if model else None, outdated), outdated)


def cache_refresh(model: str | None, reporter: Reporter | None = None) -> RefreshResult:
    done, failed = cache.refresh(registry.resolve(model) if model else None, reporter)
    return RefreshResult(str(cache.cache_root()), tuple(done), tuple(failed))


def cache_verify(model: str | None, repair: bool = False, reporter: Reporter | None = None) -> VerifyResult:
    """Every byte of every cached entry (or one model's) against its checksums; with repair, rebuild."""
    ref = _cached(model) if model else None
    found = cache.verify(ref, repair, reporter)
    if ref is not None and not found:  # "nothing cached" would read as if the whole cache were empty
        raise NotCached(f"{ref.name} is not cached, so there is nothing of it to verify (gpt2emb cache list)")
    rows = tuple(
        VerifiedEntry(
            v.entry.name,
            v.entry.repo,
            v.entry.commit,
            str(v.entry.path),
            v.ok,
            v.damaged,
            v.problem,
            v.repaired,
        )
        for v in found
    )
    return VerifyResult(str(cache.cache_root()), repair, rows, sum(v.entry.size for v in found))


def cache_path() -> CachePath:
    return CachePath(str(cache.cache_root()))


def models() -> ModelsResult:
    """The registry, and which of its models are cached."""
    cached = {e.repo for e in cache.entries()}
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
    params = families.by_name(shape.family).params
    return None if params is None else params(shape)["total_params"]


def _words(
    m: cache.Model, vocab: Vocab, rule: Rule, ignore_case: bool, restrict: int | None = None
) -> evaluate.Words:
    """The words of a rule, from the first `restrict` token ids only when given (gensim's restrict_vocab)."""
    pieces, texts = vocab.texts()
    rows = m.shape.vocab_size if restrict is None else restrict
    return evaluate.Words.build(pieces[:rows], texts[:rows], rule, ignore_case)


def analogy_eval(
    model: str,
    file: str,
    method: Method = Method.add,
    rule: Rule = Rule.space,
    ignore_case: bool = False,
    errors: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
    restrict: int | None = None,
) -> AnalogyEvalResult:
    """Accuracy on an analogy file, per section, counted as gensim's evaluate_word_analogies counts; with
    restrict, as its restrict_vocab: a question with a word past the first `restrict` token ids is skipped,
    and only those words are candidate answers."""
    started = time.perf_counter()
    if restrict is not None:
        candidates.check_restrict(restrict, _known(model)[1])
    sections = evaluate.read_analogies(limits.user_path(file))
    m, vocab = load(model, reporter, revision)
    if restrict is not None:
        candidates.check_restrict(restrict, m.shape.vocab_size)
    words = _words(m, vocab, rule, ignore_case, restrict)
    found = [[[words.find(w, ignore_case) for w in q] for q in section.questions] for section in sections]
    known = [[i for i, f in enumerate(fs) if None not in f] for fs in found]
    abcd = np.array([fs[i] for fs, ks in zip(found, known, strict=True) for i in ks], dtype=np.int64).reshape(
        -1, 4
    )
    # every section in one pass: one matrix product with the file's words for all of them
    m.check_rows(words.ids)  # every word's row is a candidate answer
    predicted = evaluate.analogy_answers(m.wte, words, abcd[:, :3], method, ignore_case)
    same = words.group if ignore_case else np.arange(len(words.words))
    right = (predicted >= 0) & (same[np.maximum(predicted, 0)] == same[abcd[:, 3]])
    scores, failures, start = [], [], 0
    for section, ks in zip(sections, known, strict=True):
        mine = slice(start, start + len(ks))
        start += len(ks)
        correct, answered = int(right[mine].sum()), len(ks)
        scores.append(_score(section.name, correct, answered, len(section.questions) - answered))
        if errors:
            for i, ok, p in zip(ks, right[mine], predicted[mine], strict=True):
                if not ok:
                    a, b, c, d = section.questions[i]
                    failures.append(Failure(section.name, (a, b, c), d, words.words[p] if p >= 0 else None))
    correct = sum(s.correct for s in scores)
    answered = correct + sum(s.incorrect for s in scores)
    skipped = sum(s.skipped for s in scores)
    total = _score("Total accuracy", correct, answered, skipped)
    return AnalogyEvalResult(
        m.name,
        file,
        method.value,
        rule.value,
        ignore_case,
        tuple(scores),
        total,
        answered / (answered + skipped),
        time.perf_counter() - started,
        tuple(failures),
        restrict,
    )


def _score(name: str, correct: int, answered: int, skipped: int) -> SectionScore:
    return SectionScore(name, correct, answered - correct, skipped, correct / answered if answered else None)


def similarity_eval(
    model: str,
    file: str,
    rule: Rule = Rule.space,
    ignore_case: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> PairsEvalResult:
    """Pearson and Spearman correlation of cosine with human scores, as gensim's evaluate_word_pairs; a line
    that holds no pair (a score that is not a finite number among them) is skipped and counted."""
    read = evaluate.read_pairs(limits.user_path(file))
    m, vocab = load(model, reporter, revision)
    words = _words(m, vocab, rule, ignore_case)
    gold, ours, used, named = [], [], [], []
    for a, b, score in read.pairs:
        ia, ib = words.find(a, ignore_case), words.find(b, ignore_case)
        if ia is not None and ib is not None:
            used += [words.ids[ia], words.ids[ib]]
            gold.append(score)
            ours.append(float(ops.cosines(m.wte[words.ids[ia]], m.wte[words.ids[ib]])[0]))
            named.append((a, b))
    if len(gold) < 2:
        raise UsageError(f"fewer than two pairs of {file} are single tokens under the {rule.value} rule")
    m.check_rows(used)
    g, o = np.array(gold), np.array(ours)
    skipped = len(read.pairs) - len(gold)
    notes = [read.note(Path(file))] if read.unreadable else []
    broken = np.flatnonzero(np.isnan(o))  # a row holding NaN or inf has no cosine
    if len(broken):
        a, b = named[broken[0]]
        more = (
            f" and {len(broken) - 1:,} other pair{'s' if len(broken) > 2 else ''}" if len(broken) > 1 else ""
        )
        notes.append(
            f"pearson and spearman are undefined: the cosine of {a!r} and {b!r}{more} is not a number (the "
            "model's rows hold NaN or infinite values there)"
        )
    notes += [
        f"pearson and spearman are undefined: every {what} is the same"
        for what, values in (("human score", g), ("cosine", o))
        if evaluate.constant(values)
    ]
    return PairsEvalResult(
        m.name,
        file,
        rule.value,
        ignore_case,
        len(read.pairs),
        len(gold),
        skipped,
        100 * skipped / len(read.pairs),
        evaluate.pearson(g, o),
        evaluate.spearman(g, o),
        tuple(notes),
        read.unreadable,
    )


def distinct_models(
    names: list[str], revision: str | None = None, reporter: Reporter | None = None
) -> list[str]:
    """The models asked for with -m, each once (gpt2, small and openai-community/gpt2 are one model), all
    checked before the first is fetched: a name that is no model, a folder given --revision."""
    seen: dict[tuple[str | None, Path | None], str] = {}
    for name in names:
        ref = registry.resolve(name, revision)
        if (ref.repo, ref.folder) in seen:
            if reporter is not None:
                reporter.note(f"{name} is {seen[ref.repo, ref.folder]} again: each model is answered once")
            continue
        seen[ref.repo, ref.folder] = name
    return list(seen.values())


def compare(results: list[NeighborsResult] | list[AnalogyResult]) -> CompareResult:
    """Several models' answers to one question, and the overlap of each pair's top-k lists (by token)."""
    lists: list[list[tuple[str, list[str]]]] = []  # per model: (query, tokens) for each query
    for r in results:
        if isinstance(r, NeighborsResult):
            lists.append([(item.word, [n.token for n in item.neighbors]) for item in r.items])
        else:
            lists.append([(r.expression, [x.token for x in r.results])])
    overlap = []
    for i, j in itertools.combinations(range(len(results)), 2):
        for (query, mine), (_, theirs) in zip(lists[i], lists[j], strict=True):
            other = set(theirs)
            shared = tuple(t for t in mine if t in other)
            overlap.append(
                Overlap(query, (results[i].model, results[j].model), len(shared), len(mine), shared)
            )
    return CompareResult(tuple(r.model for r in results), tuple(results), tuple(overlap))  # type: ignore[arg-type]


def _finite(x: float | None) -> float | None:
    """A figure for the JSON: None where it is undefined (a zero row has no direction)."""
    return None if x is None or not math.isfinite(x) else float(x)


EXTREMES = 5  # rows shown at each end of a table's norm distribution
RANDOM_FORMULA = "Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)), about sqrt(2/(pi d))"


def _table_geometry(shape: ops.TableShape, row: Callable[[int, float], Any]) -> TableGeometry:
    norms = shape.norms
    index = np.arange(len(norms))
    smallest = np.lexsort((index, norms))[:EXTREMES]
    largest = np.lexsort((index, -norms))[:EXTREMES]
    # the spread of an infinite norm is inf - inf: NaN (shown as null, with the note to_dict adds), and
    # numpy would print a warning computing it
    std = math.nan if shape.broken_rows else float(norms.std())
    return TableGeometry(
        len(norms),
        shape.zero_rows,
        NormStats(float(norms.mean()), std, float(norms.min()), float(norms.max())),
        tuple(row(int(i), float(norms[i])) for i in smallest),
        tuple(row(int(i), float(norms[i])) for i in largest),
        _finite(shape.mean_cosine),
        tuple(_finite(float(x)) for x in shape.pc_variance),
    )


def _reading(name: str, d: int, cross: CrossGeometry, tables: dict[str, TableGeometry]) -> str:
    """One sentence that reads the content-against-position figures."""
    mean, top, chance = cross.mean_abs_cosine, cross.max_abs_cosine, cross.random_mean_abs_cosine
    if mean is None or top is None:
        empty = [k for k, t in tables.items() if t.zero_rows == t.rows]
        why = (
            f"every row of {' and '.join(empty)} is zeros"
            if empty
            else "a row holds numbers that are not finite"
        )
        return f"{why}, so content and position have no angle to read."
    ratio = mean / chance
    figures = (
        f"a wte row and a wpe row of {name} meet at a mean |cosine| of {mean:.3f}, {ratio:.1f} times what "
        f"two random directions in {d} dimensions give ({chance:.3f}), and at most {top:.3f}"
    )
    if ratio <= 1.5:
        return (
            f"Content and position are as near orthogonal as random directions: {figures}; so adding a "
            "position row moves a token's vector along directions its content hardly uses."
        )
    return (
        f"Content and position share some directions: {figures}; so adding a position row also moves a "
        "token's vector along its content's own directions."
    )


def geometry(model: str, reporter: Reporter | None = None, revision: str | None = None) -> GeometryResult:
    """The shape of wte and of wpe (norms, mean cosine, principal components), and the cosine of every
    wte row with every wpe row next to what random directions would give; a note for each figure that is
    undefined (null)."""
    m, vocab = load(model, reporter, revision)
    m.check_rows(range(len(m.wte)), range(len(m.wpe)))  # every row is used
    d = m.shape.d_model
    notes: list[str] = []

    def measured(name: str, shape: ops.TableShape, row: Callable[[int, float], Any]) -> TableGeometry:
        table = _table_geometry(shape, row)
        if shape.broken_rows:
            rows = "1 row holds" if shape.broken_rows == 1 else f"{shape.broken_rows:,} rows hold"
            notes.append(
                f"{name}: {rows} NaN or infinite values, so its mean_cosine and pc_variance are null (such "
                "a row has no direction, and no variance that is a number)"
            )
            return table
        if table.mean_cosine is None:
            live = table.rows - table.zero_rows
            notes.append(
                f"{name}: mean_cosine is null: a mean over pairs of rows needs two rows that are not zeros, "
                f"and {name} has {live}"
            )
        if all(x is None for x in table.pc_variance):
            notes.append(
                f"{name}: pc_variance is null: its rows do not vary (every row is the same), so no direction "
                "holds any of their variance"
            )
        return table

    wte_shape = ops.table_shape(m.wte)
    wte = measured("wte", wte_shape, lambda i, n: TokenNorm(i, vocab.token(i), n))
    if not m.shape.position_table:
        reading = f"{_no_position_table(m)}: there is no wpe to measure, nor content against position."
        return GeometryResult(m.name, d, wte, None, None, reading, tuple(notes))
    wpe_shape = ops.table_shape(m.wpe)
    wpe = measured("wpe", wpe_shape, PositionNorm)
    c = ops.cross_cosines(m.wte, m.wpe, wte_shape.norms)
    pair = None
    if c.argmax is not None and c.max_cosine is not None:
        i, p = c.argmax
        pair = MaxPair(i, vocab.token(i), p, c.max_cosine)
    cross = CrossGeometry(
        _finite(c.mean_abs),
        _finite(c.max_abs),
        pair,
        ops.random_mean_abs_cosine(d),
        RANDOM_FORMULA,
        c.pairs,
    )
    reading = _reading(m.name, d, cross, {"wte": wte, "wpe": wpe})
    if cross.mean_abs_cosine is None or cross.max_abs_cosine is None or pair is None:
        broken = [name for name, s in (("wte", wte_shape), ("wpe", wpe_shape)) if s.broken_rows]
        empty = [name for name, t in (("wte", wte), ("wpe", wpe)) if t.zero_rows == t.rows]
        why = (
            f"a row of {' and '.join(broken)} holds NaN or infinite values"
            if broken
            else f"every row of {' and '.join(empty)} is zeros, so no pair of rows has an angle"
        )
        notes.append(f"wte_vs_wpe: mean_abs_cosine, max_abs_cosine and max_pair are null: {why}")
    return GeometryResult(m.name, d, wte, wpe, cross, reading, tuple(notes))


def export(
    model: str,
    fmt: Format,
    out: str,
    table: Table = Table.wte,
    limit: int | None = None,
    whole_words: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
) -> ExportResult:
    """One table's rows to word2vec files or the Embedding Projector's, in token-id (or position) order:
    whole words only with whole_words, then the first `limit`."""
    _export_target(
        fmt, out, table, limit, whole_words
    )  # before the model is opened: a bad -o fetches nothing
    return open_embeddings(model, revision, reporter).export(fmt, out, table, limit, whole_words, reporter)


def _export_target(fmt: Format, out: str | Path, table: Table, limit: int | None, whole_words: bool) -> Path:
    """What an export can check before it reads a row; the path to write."""
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise UsageError(f"{option('limit')} must be a whole number, 1 or more, not {limit!r:.40}")
    if whole_words and table is Table.wpe:
        raise UsageError(
            f"{option('whole_words', True)} picks tokens that start a word: it is for "
            f"{option('table', 'wte')}, not wpe"
        )
    if not os.fspath(out).strip():
        raise UsageError(f"{option('out')} needs a path, such as vectors.txt (or a folder, for projector)")
    if str(out) == "-":  # elsewhere - is stdin: here it would be a file named "-"
        raise UsageError(
            f"{option('out', '-')} is not stdout here: export writes files; give a path, such as vectors.txt"
        )
    path = limits.user_path(out)
    check_target(path, fmt)
    return path
