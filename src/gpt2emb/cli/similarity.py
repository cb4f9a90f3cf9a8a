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
    Model,
    PoolOpt,
    Revision,
    RuleOpt,
    Strict,
    figure_of,
    refuse_unused,
)
from gpt2emb.cli.stdin import failures, from_stdin, stdin_blocks
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
    model: Model = DEFAULT_MODEL,
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

    figure = figure_of(figure, stdin="-" in (words or []), eval_file=eval_file)
    if eval_file is not None:
        if words:
            raise UsageError("give words, or --eval FILE, not both")
        if strict:
            raise UsageError("--strict is for - (words from stdin), not --eval")
        refuse_unused(
            ctx, ("exact", "pool"), "would change nothing with --eval: its words are read by --rule"
        )
        from gpt2emb.core import evaluate as evaluation

        reporter = output.reporter(json)
        scores = evaluation.similarity_eval(model, eval_file, rule, ignore_case, reporter, revision)
        output.render(scores, json)
        return ExitCode.OK
    refuse_unused(ctx, ("rule", "ignore_case"), "would change nothing without --eval FILE")
    if from_stdin(words or [], json, False, strict):
        reporter = output.reporter(json)
        ref = registry.resolve(model, revision, encoding)
        result, failed = core.each_similarity(ref, stdin_blocks(), exact, pool, reporter)
        code = failures(failed, json, strict)
        if result is None:
            raise UsageError("stdin held fewer than two words to compare (one per line)")
        output.render(result, json)
        return code
    reporter = output.reporter(json)
    ref = registry.resolve(model, revision, encoding)
    output.render(core.similarity(ref, words or [], exact, pool, reporter, figure), json)
    return ExitCode.OK
