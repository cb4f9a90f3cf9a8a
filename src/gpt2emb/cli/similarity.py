"""The similarity command: the cosine of each pair of words, and similarity --eval FILE."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every run
# (inspect.signature with eval_str, then get_type_hints), evaluating each string twice, half of what making
# the command costs; as objects they are made once, at import (tests/test_imports.py checks they are not
# strings).

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Pool, Rule
from gpt2emb.cli.options import (
    Command,
    Encoding,
    EvalFile,
    Exact,
    Figure,
    IgnoreCase,
    Json,
    Models,
    PoolOpt,
    Revision,
    RuleOpt,
    Strict,
    figure_of,
    refuse_unused,
)
from gpt2emb.cli.stdin import failures, from_stdin, one_model, stdin_blocks
from gpt2emb.errors import ExitCode, UsageError
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    cls=Command,
    epilog="Examples:\n\n  gpt2emb similarity cat cats dog\n\n  gpt2emb similarity king queen man --json"
    "\n\n  gpt2emb similarity - < words.txt\n\n  gpt2emb similarity --eval wordsim353.tsv",
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
    model: Models = None,
    exact: Exact = False,
    pool: PoolOpt = Pool.mean,
    eval_file: EvalFile = None,
    rule: RuleOpt = Rule.space,
    ignore_case: IgnoreCase = False,
    revision: Revision = None,
    encoding: Encoding = None,
    json: Json = False,
    strict: Strict = False,
    figure: Figure = None,
) -> int:
    """Pairwise cosine similarity of words' rows of wte: is cat closer to cats or to dog?

    With - in place of the words, the words of stdin, one per line. With --eval FILE, the correlation with human judgements of a word-pair file (WordSim-353 format)."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb import registry
    from gpt2emb.core import similarity as core

    figure = figure_of(figure, stdin="-" in (words or []), eval_file=eval_file, models=len(model or []))
    reporter = output.reporter(json)
    models = registry.distinct_refs(model or [DEFAULT_MODEL], revision, reporter, encoding)
    if eval_file is not None:
        if words:
            raise UsageError("give words, or --eval FILE, not both")
        if strict:
            raise UsageError("--strict is for - (words from stdin), not --eval")
        refuse_unused(
            ctx, ("exact", "pool"), "would change nothing with --eval: its words are read by --rule"
        )
        from gpt2emb.core import evaluate as evaluation

        if len(models) > 1:  # each scored on the pairs that all answer
            from gpt2emb.core import evaluate_compare

            sides = evaluate_compare.similarity_eval_side_by_side(
                models, eval_file, rule, ignore_case, reporter
            )
            output.render(sides, json)
            return ExitCode.OK
        scores = evaluation.similarity_eval(models[0], eval_file, rule, ignore_case, reporter)
        output.render(scores, json)
        return ExitCode.OK
    refuse_unused(ctx, ("rule", "ignore_case"), "would change nothing without --eval FILE")
    if from_stdin(words or [], json, False, strict):
        result, failed = core.each_similarity(one_model(models), stdin_blocks(), exact, pool, reporter)
        code = failures(failed, json, strict)
        if result is None:
            raise UsageError("stdin held fewer than two words to compare (one per line)")
        output.render(result, json)
        return code
    if len(models) > 1:  # a column per model
        from gpt2emb.core import compare

        output.render(compare.similarity_side_by_side(models, words or [], exact, pool, reporter), json)
        return ExitCode.OK
    output.render(core.similarity(models[0], words or [], exact, pool, reporter, figure), json)
    return ExitCode.OK
