"""gpt2emb.open(...): the Python handle on one model, each public method answering as its command does, by
delegating to the cores (core/) with the opened model it is."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from gpt2emb import batch, contract, registry
from gpt2emb.candidates import Restriction
from gpt2emb.choices import Format, Method, Pool, Rule, Table, Through
from gpt2emb.core.analogy import analogy_in, each_analogy_in, handed
from gpt2emb.core.export import export_in
from gpt2emb.core.neighbors import each_neighbors_in, neighbors_in
from gpt2emb.core.open import Opened, RankOptions, check_top, open_ref
from gpt2emb.core.positions import position_map_in, positions_in
from gpt2emb.core.similarity import each_similarity_in, similarity_in
from gpt2emb.core.text import input_in
from gpt2emb.core.vector import each_vector_in, vector_in
from gpt2emb.core.words import restriction_of
from gpt2emb.errors import UsageError, WrongType, option
from gpt2emb.report import Reporter
from gpt2emb.results.analogy import AnalogyResult
from gpt2emb.results.cache import CacheResult, RefreshResult, VerifyResult
from gpt2emb.results.compare import SideBySideResult
from gpt2emb.results.evaluate import AnalogyEvalResult, PairsEvalResult
from gpt2emb.results.export import ExportResult
from gpt2emb.results.geometry import GeometryResult
from gpt2emb.results.logits import LogitsResult
from gpt2emb.results.neighbors import NeighborsItem, NeighborsResult
from gpt2emb.results.positions import HeatmapResult, PositionsResult
from gpt2emb.results.similarity import SimilarityResult
from gpt2emb.results.sizes import ModelsResult, SizesResult
from gpt2emb.results.text import (
    ContextResult,
    InputResult,
)
from gpt2emb.results.tying import TyingResult
from gpt2emb.results.vector import VectorItem, VectorResult


@contract.enforced
class Embeddings(Opened):
    """One model's token and position rows, opened once. Each method answers as the command of its name does
    and returns the same result object as that command's --json (`.to_dict()` gives the document):

        vector, neighbors, analogy, similarity     the words commands
        each_vector, each_neighbors, each_analogy, each_similarity     the same over a stream (`-`)
        positions, position_map                    `positions`, `positions --heatmap`
        input, context                             a text as the model receives it; a word through its layers
        logits                                     the next token's scores by the output layer; the lens
        geometry, tying, export                    `geometry`; `tying` (load, grad, compare); `export`
        analogy_eval, similarity_eval              `analogy --eval FILE`, `similarity --eval FILE`

    What needs no model opened is a function of the package: gpt2emb.sizes, models, cache_list,
    cache_verify, cache_clear, cache_refresh, and side_by_side (several handles' answers side by side).

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
        shape, rows = self.model.shape, "keys" if self.model.static else "tokens"
        return f"<gpt2emb {self.name}: {shape.vocab_size:,} {rows} x {shape.d_model:,}>"

    def vector(
        self, words: str | Sequence[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> VectorResult:
        """The raw row of wte for each word, with its norm, mean, std, min and max."""
        return vector_in(self, contract.words_of(words), exact, Pool(pool))

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
        options, restriction = self._ranked(
            k, exact, pool, among, restrict, whole_words, keep_query, fold=fold
        )
        return neighbors_in(self, contract.words_of(words), options, restriction)

    def analogy(
        self,
        a: str | None = None,
        b: str | None = None,
        c: str | None = None,
        k: int = 10,
        exact: bool = False,
        pool: Pool | str = Pool.mean,
        keep_inputs: bool = False,
        method: Method | str = Method.add,
        among: str | Path | None = None,
        restrict: int | None = None,
        whole_words: bool = False,
        *,
        positive: Sequence[str] | None = None,
        negative: Sequence[str] | None = None,
    ) -> AnalogyResult:
        """A is to B as C is to what (a - b + c), or the sum of the positive words less the negative ones
        (gensim's most_similar(positive=[...], negative=[...]): the methods score as gensim's do): the k best
        tokens (of the candidates, as for neighbors), and where each input itself ranks."""
        signed = contract.signed_words(a, b, c, positive, negative)
        options, restriction = self._ranked(
            k, exact, pool, among, restrict, whole_words, keep_inputs=keep_inputs
        )
        return analogy_in(self, handed(signed), options, Method(method), restriction)

    def similarity(
        self, words: Sequence[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> SimilarityResult:
        """The cosine of every pair of words, and each word's norm."""
        return similarity_in(self, contract.words_of(words), exact, Pool(pool))

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
        return export_in(self, Format(fmt), out, Table(table), limit, whole_words, reporter)

    # ------------------------------------------------------------------ the tables whole, the model run whole

    def geometry(self) -> GeometryResult:
        """The shape of wte and of wpe (norms, mean cosine, principal components) and of content against
        position, as `geometry` gives it."""
        from gpt2emb.core.geometry import geometry_in

        return geometry_in(self)

    def context(self, word: str, sentences: Sequence[str], pool: Pool | str = Pool.mean) -> ContextResult:
        """The word's vector in each of two or more sentences, at every layer of the model run whole (torch),
        against each other and against its row of wte, as `context WORD SENTENCE SENTENCE...` gives it."""
        from gpt2emb.core.text import check_context, context_of

        listed = contract.texts_of(sentences, "sentences")
        check_context(word, listed)
        return context_of(self._ref(), word, listed, Pool(pool), self.reporter)

    def logits(
        self,
        text: str,
        k: int = 10,
        at: int | None = None,
        through: Through | str | None = None,
        layers: bool = False,
    ) -> LogitsResult:
        """The k best next tokens after text (after position `at`, counting the text's own tokens from 0),
        scored by the model's output table, h · Wᵀ, as `logits TEXT` gives them (torch); through "wte": an
        untied model's scores by wte beside them; layers: every layer read through the output table."""
        from gpt2emb.core.logits import check_logits, logits_of

        check_logits(text, k, at)
        return logits_of(self._ref(), text, k, at, _through(through), layers, False, self.reporter)

    def tying(self, load: bool = False, grad: str | None = None, compare: bool = False) -> TyingResult:
        """Whether the output layer reuses wte, as `tying` checks it (config, a model on the meta device, the
        checkpoint): load, also on the model loaded (torch); grad, a text: the gradient of the next-token
        loss on it by each of wte's two uses; compare: an untied output layer's rows against wte's."""
        from gpt2emb.core.tying import check_grad, tying_of

        check_grad(grad)
        return tying_of(self._ref(), self.name, load, grad, self.reporter, compare)

    def analogy_eval(
        self,
        file: str | Path,
        method: Method | str = Method.add,
        rule: Rule | str = Rule.space,
        ignore_case: bool = False,
        errors: bool = False,
        restrict: int | None = None,
    ) -> AnalogyEvalResult:
        """A benchmark file of analogies (word2vec's questions-words format) scored per section, as
        `analogy --eval FILE` scores it (gensim's evaluate_word_analogies): rule, how a word becomes a token
        (space: as in running text, bare); restrict, only questions whose words are among the first N ids."""
        import time

        from gpt2emb import candidates, limits
        from gpt2emb.core import evaluate_files
        from gpt2emb.core.evaluate import analogy_eval_in

        started = time.perf_counter()
        if restrict is not None:  # before the file is read, as the command checks it
            candidates.check_restrict(restrict, self.model.shape.vocab_size)
        sections = evaluate_files.read_analogies(limits.user_path(file))
        method, rule = Method(method), Rule(rule)
        return analogy_eval_in(
            self, str(file), sections, method, rule, ignore_case, errors, restrict, started
        )

    def similarity_eval(
        self, file: str | Path, rule: Rule | str = Rule.space, ignore_case: bool = False
    ) -> PairsEvalResult:
        """A benchmark file of word pairs with human scores (WordSim-353 style): the Pearson and Spearman
        correlation of their cosines with the scores, as `similarity --eval FILE` gives them (gensim's
        evaluate_word_pairs)."""
        from gpt2emb import limits
        from gpt2emb.core import evaluate_files
        from gpt2emb.core.evaluate import similarity_eval_in

        read = evaluate_files.read_pairs(limits.user_path(file))
        return similarity_eval_in(self, str(file), read, Rule(rule), ignore_case)

    # choices arrive as members (contract.enforced made them so before the body ran): Pool(pool) types them

    def _ranked(
        self,
        k: int,
        exact: bool,
        pool: Pool | str,
        among: str | Path | None,
        restrict: int | None,
        whole_words: bool,
        keep_query: bool = False,
        keep_inputs: bool = False,
        fold: bool = False,
    ) -> tuple[RankOptions, Restriction | None]:
        """The ranking options of neighbors and analogy as one record, and its candidates read. The methods
        pass their own parameters here in this order, so the record is spelled out once."""
        options = RankOptions(
            k=k,
            exact=exact,
            pool=Pool(pool),
            keep_query=keep_query,
            keep_inputs=keep_inputs,
            among=among,
            restrict=restrict,
            whole_words=whole_words,
            fold=fold,
        )
        check_top(k, self.model.shape.vocab_size, self.model.static)
        return options, restriction_of(self, options)

    def _ref(self) -> registry.ModelRef:
        """What the handle was opened as (a handle built from an entry alone: its name, resolved again)."""
        return self.ref if self.ref is not None else registry.resolve(self.name)

    # ------------------------------------------------------------------ streams of lines

    # A stream of words: each answered as it comes, in blocks of a matrix pass, a word that fails as a
    # batch.FailedLine in its place (the others still answered). A str each, read as a line of stdin is: the
    # spaces around it dropped, a blank one or a `# comment` skipped. A file opened in text mode is one.

    def each_vector(
        self, words: Iterable[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> batch.Answers[VectorItem]:
        """Each word's row, as `vector` gives it, one VectorItem (or batch.FailedLine) per word."""
        return each_vector_in(self, contract.blocks_of(words), exact, Pool(pool))

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
        options, restriction = self._ranked(
            k, exact, pool, among, restrict, whole_words, keep_query, fold=fold
        )
        return each_neighbors_in(self, contract.blocks_of(words), options, restriction)

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
        """Each question `A B C` (white space between the words) or a sum `king - man + woman`, answered as
        `analogy` answers it: one AnalogyResult (or batch.FailedLine) per question."""
        options, restriction = self._ranked(
            k, exact, pool, among, restrict, whole_words, keep_inputs=keep_inputs
        )
        questions_ = contract.blocks_of(questions, "questions")
        return each_analogy_in(self, questions_, options, Method(method), restriction)

    def each_similarity(
        self, words: Iterable[str], exact: bool = False, pool: Pool | str = Pool.mean
    ) -> tuple[SimilarityResult | None, list[batch.FailedLine]]:
        """One matrix of every word that has a row (None for fewer than two); the words that fail, apart."""
        return each_similarity_in(self, contract.blocks_of(words), exact, Pool(pool))


def _through(value: Through | str | None) -> Through | None:
    """logits' through, its name or its member (checked as a text by the contract first)."""
    if value is None or isinstance(value, Through):
        return value
    if value not in set(Through):
        raise UsageError(f"through is {value!r}, which is no table logits scores with: give 'wte' or None")
    return Through(value)


def open_embeddings(
    model: str | os.PathLike[str] = registry.DEFAULT_MODEL,
    revision: str | None = None,
    reporter: Reporter | None = None,
    encoding: str | None = None,
) -> Embeddings:
    """A handle on one model's embeddings, for notebooks and scripts: `gpt2emb.open("gpt2")`. Its arguments
    are checked here, at the handle's edge; its cache entry is opened and checked once, here (fetched on
    first use); every call then answers from it."""
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
    if encoding is not None:  # a static word table's (word2vec, GloVe): utf-8 when None
        contract.text("encoding", encoding)
    o = open_ref(registry.resolve(model, revision, encoding), contract.reporter("reporter", reporter))
    return Embeddings(o.model, o.vocab, o.reporter, o.ref)


# ---------------------------------------------------------------- what needs no model opened: gpt2emb.NAME


@contract.checked
def sizes(
    models: str | Sequence[str] | None = None,
    dtype: str = "fp32",
    verify: bool = False,
    revision: str | None = None,
    reporter: Reporter | None = None,
) -> SizesResult:
    """Parameter counts, as `sizes` gives them: of GPT-2's four sizes by the formula (verify: each figure
    checked against its checkpoint headers on the Hub), or with models, of those models counted from their
    checkpoint headers (no weights read)."""
    from gpt2emb.core import sizes as core

    width = str(dtype)  # a DType by now (contract.checked), whose value is its name
    if models is None:
        if revision is not None:
            raise UsageError("revision is for the models given")
        return core.sizes(width, verify)
    if verify:
        raise UsageError("verify checks the four GPT-2 sizes' formula; models are counted from their headers")
    names = registry.distinct_models(list(models), revision, reporter)
    return core.of_models(names, width, revision)


@contract.checked
def models() -> ModelsResult:
    """The named models, their shapes, and which are cached, as `models` lists them."""
    from gpt2emb.core.sizes import models as listed

    return listed()


@contract.checked
def cache_list() -> CacheResult:
    """The cache's entries, as `cache list` shows them."""
    from gpt2emb.core import cache

    return cache.cache_list()


@contract.checked
def cache_verify(
    model: str | None = None, repair: bool = False, reporter: Reporter | None = None
) -> VerifyResult:
    """Every byte of every cached entry (or one model's) against its checksums, as `cache verify`; with
    repair, a damaged entry rebuilt."""
    from gpt2emb.core import cache

    return cache.cache_verify(model, repair, reporter)


@contract.checked
def cache_clear(model: str | None = None, outdated: bool = False) -> CacheResult:
    """Remove the cache's entries (or one model's; outdated: only those of folders changed since), as `cache
    clear`; what is in use is kept and said."""
    from gpt2emb.core import cache

    return cache.cache_clear(model, outdated)


@contract.checked
def cache_refresh(model: str | None = None, reporter: Reporter | None = None) -> RefreshResult:
    """Ask the Hub again what each recorded branch or tag names (or one model's), as `cache refresh`."""
    from gpt2emb.core import cache

    return cache.cache_refresh(model, reporter)


def side_by_side(results: Sequence[NeighborsResult] | Sequence[AnalogyResult]) -> SideBySideResult:
    """Several models' answers to one question side by side, and how much each pair's lists overlap, as
    `neighbors WORD -m A -m B` shows them: results, each handle's neighbors (or analogy) of the same words.
    Its sides are empty: a result does not say whether its model is a static word table."""
    from gpt2emb.core import compare

    listed = list(results) if isinstance(results, Sequence) and not isinstance(results, str) else None
    kinds = {type(r) for r in listed or ()}
    if listed is None or len(kinds) > 1 or not kinds <= {NeighborsResult, AnalogyResult}:
        raise WrongType(
            "results are NeighborsResult (or AnalogyResult) of the same question, not "
            + contract.shown(results)
        )
    if len(listed) < 2:
        raise UsageError(f"side_by_side compares two or more models' results, not {len(listed)}")
    asked = {_question(r) for r in listed}
    if len(asked) > 1:
        shown = " and ".join(sorted(repr(q) for q in asked)[:2])
        raise UsageError(f"the results answer different questions ({shown}): give each model the same words")
    return compare.side_by_side(listed)  # type: ignore[arg-type]  # one kind, checked above


def _question(result: object) -> str:
    """What a result answers: its words (neighbors) or its expression (analogy)."""
    if isinstance(result, NeighborsResult):
        return " ".join(item.word for item in result.items)
    return result.expression if isinstance(result, AnalogyResult) else ""
