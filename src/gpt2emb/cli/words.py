"""The word commands: vector, neighbors, analogy (and analogy --eval), similarity (and similarity --eval)."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every run
# (inspect.signature with eval_str, then get_type_hints), evaluating each string twice, half of what making
# the command costs; as objects they are made once, at import (tests/test_cli.py checks they are not strings).

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Method, Pool, Rule
from gpt2emb.cli.options import (
    Among,
    EvalFile,
    Exact,
    IgnoreCase,
    Json,
    Jsonl,
    Model,
    Models,
    PoolOpt,
    Restrict,
    Revision,
    RuleOpt,
    Strict,
    Top,
    WholeWords,
    Words,
    _refuse_unused,
)
from gpt2emb.cli.stdin import _failures, _from_stdin, _one_model, _stdin_blocks, _stream
from gpt2emb.errors import ExitCode, UsageError
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    epilog="Examples:\n\n  gpt2emb vector king\n\n  gpt2emb vector king queen --dims 4\n\n  "
    "gpt2emb vector id:5822 --full --json\n\n  gpt2emb vector - --jsonl < words.txt"
)
def vector(
    words: Words,
    model: Model = DEFAULT_MODEL,
    dims: Annotated[
        int, typer.Option("--dims", min=1, help="How many numbers the table shows (--json has them all).")
    ] = output.DIMS,
    full: Annotated[bool, typer.Option("--full", help="Show every number.")] = False,
    exact: Exact = False,
    pool: PoolOpt = Pool.mean,
    revision: Revision = None,
    json: Json = False,
    jsonl: Jsonl = False,
    strict: Strict = False,
) -> int:
    """The raw row of wte for each word: its first numbers, norm, mean, std, min and max."""
    from gpt2emb.core import vector as core

    shown = None if full else dims
    if _from_stdin(words, json, jsonl, strict):
        from gpt2emb.core import words_stream as stream

        answers = stream.each_vector(
            model, _stdin_blocks(), exact, pool, output.reporter(json or jsonl), revision
        )
        return _stream(answers, json, jsonl, strict, shown)
    result = core.vector(model, words, exact, pool, output.reporter(json or jsonl), revision)
    output.render(result, json, shown, jsonl)
    return ExitCode.OK


@app.command(
    epilog="Examples:\n\n  gpt2emb neighbors cat\n\n  gpt2emb neighbors cat dog -k 5\n\n  "
    "gpt2emb neighbors king --fold\n\n  gpt2emb neighbors cat --among animals.txt -k 5\n\n  "
    "gpt2emb neighbors cat --restrict 10000 --whole-words\n\n  "
    "gpt2emb neighbors cat --json | jq '.items[0].neighbors[].token'\n\n  "
    "gpt2emb neighbors - -k 5 --jsonl < words.txt | head"
)
def neighbors(
    words: Words,
    model: Models = None,
    top: Top = 10,
    keep_query: Annotated[
        bool, typer.Option("--keep-query", help="Keep the word's own token in the list.")
    ] = False,
    fold: Annotated[
        bool,
        typer.Option(
            "--fold",
            help="One row per word: its forms (leading space or not, any case, plural in -s/-es) folded "
            "together, so the top k are k different words; forms of the query itself left out.",
        ),
    ] = False,
    among: Among = None,
    restrict: Restrict = None,
    whole_words: WholeWords = False,
    exact: Exact = False,
    pool: PoolOpt = Pool.mean,
    revision: Revision = None,
    json: Json = False,
    jsonl: Jsonl = False,
    strict: Strict = False,
) -> int:
    """The nearest tokens to each word by cosine similarity over all of wte (or the candidates chosen)."""
    from gpt2emb import registry
    from gpt2emb.core import compare
    from gpt2emb.core import neighbors as core
    from gpt2emb.core.open import RankOptions

    options = RankOptions(top, exact, pool, keep_query, among, restrict, whole_words, fold)

    if _from_stdin(words, json, jsonl, strict):
        reporter = output.reporter(json or jsonl)
        from gpt2emb.core import words_stream as stream

        answers = stream.each_neighbors(_one_model(model), _stdin_blocks(), options, reporter, revision)
        return _stream(answers, json, jsonl, strict)
    models = registry.distinct_models(model or [DEFAULT_MODEL], revision, output.reporter(json or jsonl))
    if jsonl:
        models = [_one_model(models, jsonl=True)]
    results = [core.neighbors(m, words, options, output.reporter(json or jsonl), revision) for m in models]
    output.render(results[0] if len(results) == 1 else compare.side_by_side(results), json, lines=jsonl)
    return ExitCode.OK


@app.command(
    epilog="Examples:\n\n  gpt2emb analogy king man woman\n\n  gpt2emb analogy Paris France Italy -k 5\n\n  "
    "gpt2emb analogy king man woman --keep-inputs\n\n  gpt2emb analogy king man woman --method 3cosmul\n\n  "
    "gpt2emb analogy king man woman --among royals.txt\n\n  "
    "gpt2emb analogy --eval questions-words.txt --method 3cosadd --ignore-case\n\n  "
    "gpt2emb analogy --eval questions-words.txt --method 3cosadd --ignore-case --restrict 30000\n\n  "
    "printf 'king man woman\\nParis France Italy\\n' | gpt2emb analogy - --jsonl"
)
def analogy(
    ctx: typer.Context,
    a: Annotated[
        str | None,
        typer.Argument(
            help="A in A - B + C, e.g. king; - alone reads questions from stdin, A B C per line.",
            metavar="A",
            show_default=False,
        ),
    ] = None,
    b: Annotated[str | None, typer.Argument(help="B, e.g. man.", metavar="B", show_default=False)] = None,
    c: Annotated[str | None, typer.Argument(help="C, e.g. woman.", metavar="C", show_default=False)] = None,
    model: Models = None,
    top: Top = 10,
    keep_inputs: Annotated[
        bool, typer.Option("--keep-inputs", help="Rank the input words too, marked *.")
    ] = False,
    method: Annotated[
        Method,
        typer.Option(
            "--method",
            help="add: the lab's raw v(A)-v(B)+v(C); 3cosadd: on unit vectors (gensim most_similar); "
            "3cosmul: Levy and Goldberg's multiplicative form (gensim most_similar_cosmul).",
        ),
    ] = Method.add,
    among: Among = None,
    restrict: Restrict = None,
    whole_words: WholeWords = False,
    exact: Exact = False,
    pool: PoolOpt = Pool.mean,
    eval_file: EvalFile = None,
    rule: RuleOpt = Rule.space,
    ignore_case: IgnoreCase = False,
    errors: Annotated[
        bool, typer.Option("--errors", help="With --eval: list the questions answered wrong.")
    ] = False,
    revision: Revision = None,
    json: Json = False,
    jsonl: Jsonl = False,
    strict: Strict = False,
) -> int:
    """v(A) - v(B) + v(C) ranked by cosine against every token: king man woman -> queen.

    With - in place of A B C, questions from stdin, one `A B C` per line. With --eval FILE, a whole benchmark file of analogies instead, scored per section (--restrict N: only questions whose words are among the first N token ids, as gensim's restrict_vocab)."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb import registry
    from gpt2emb.core import analogy as core
    from gpt2emb.core import compare
    from gpt2emb.core.open import RankOptions

    options = RankOptions(top, exact, pool, keep_inputs, among, restrict, whole_words)

    models = registry.distinct_models(model or [DEFAULT_MODEL], revision, output.reporter(json or jsonl))
    if eval_file is not None:
        if a is not None or len(models) > 1:
            raise UsageError("--eval takes one model and no words A B C")
        _refuse_unused(
            ctx,
            ("top", "keep_inputs", "exact", "pool"),
            "would change nothing with --eval: it scores each question's first answer, words read by --rule",
        )
        if among is not None or whole_words:
            raise UsageError("--eval takes --restrict N to limit its words, not --among or --whole-words")
        if jsonl or strict:
            raise UsageError("--eval prints one table or one --json document: --jsonl and --strict are for -")
        reporter = output.reporter(json or jsonl)
        from gpt2emb.core import evaluate as evaluation

        result = evaluation.analogy_eval(
            models[0], eval_file, method, rule, ignore_case, errors, reporter, revision, restrict
        )
        output.render(result, json)
        return ExitCode.OK
    _refuse_unused(ctx, ("rule", "ignore_case", "errors"), "would change nothing without --eval FILE")
    if _from_stdin([w for w in (a, b, c) if w is not None], json, jsonl, strict):
        reporter = output.reporter(json or jsonl)
        from gpt2emb.core import words_stream as stream

        answers = stream.each_analogy(
            _one_model(models), _stdin_blocks(), options, method, reporter, revision
        )
        return _stream(answers, json, jsonl, strict)
    if a is None or b is None or c is None:
        raise UsageError("give three words A B C (as in: analogy king man woman), or --eval FILE")
    results = [
        core.analogy(m, a, b, c, options, method, output.reporter(json or jsonl), revision)
        for m in ([_one_model(models, jsonl=True)] if jsonl else models)
    ]
    output.render(results[0] if len(results) == 1 else compare.side_by_side(results), json, lines=jsonl)
    return ExitCode.OK


@app.command(
    epilog="Examples:\n\n  gpt2emb similarity cat cats dog\n\n  gpt2emb similarity king queen man --json"
    "\n\n  gpt2emb similarity - < words.txt\n\n  gpt2emb similarity --eval wordsim353.tsv"
)
def similarity(
    ctx: typer.Context,
    words: Annotated[
        list[str] | None,
        typer.Argument(
            help="Words (cat), or token ids (id:9246); - alone reads them from stdin, one per line.",
            metavar="WORD",
        ),
    ] = None,
    model: Model = DEFAULT_MODEL,
    exact: Exact = False,
    pool: PoolOpt = Pool.mean,
    eval_file: EvalFile = None,
    rule: RuleOpt = Rule.space,
    ignore_case: IgnoreCase = False,
    revision: Revision = None,
    json: Json = False,
    strict: Strict = False,
) -> int:
    """Pairwise cosine similarity of words' rows of wte: is cat closer to cats or to dog?

    With - in place of the words, the words of stdin, one per line. With --eval FILE, the correlation with human judgements of a word-pair file (WordSim-353 format)."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb.core import similarity as core

    if eval_file is not None:
        if words:
            raise UsageError("give words, or --eval FILE, not both")
        if strict:
            raise UsageError("--strict is for - (words from stdin), not --eval")
        _refuse_unused(
            ctx, ("exact", "pool"), "would change nothing with --eval: its words are read by --rule"
        )
        from gpt2emb.core import evaluate as evaluation

        reporter = output.reporter(json)
        scores = evaluation.similarity_eval(model, eval_file, rule, ignore_case, reporter, revision)
        output.render(scores, json)
        return ExitCode.OK
    _refuse_unused(ctx, ("rule", "ignore_case"), "would change nothing without --eval FILE")
    if _from_stdin(words or [], json, False, strict):
        reporter = output.reporter(json)
        from gpt2emb.core import words_stream as stream

        result, failed = stream.each_similarity(model, _stdin_blocks(), exact, pool, reporter, revision)
        code = _failures(failed, json, strict)
        if result is None:
            raise UsageError("stdin held fewer than two words to compare (one per line)")
        output.render(result, json)
        return code
    output.render(core.similarity(model, words or [], exact, pool, output.reporter(json), revision), json)
    return ExitCode.OK
