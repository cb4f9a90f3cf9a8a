"""The analogy command: a sum of signed words (A - B + C) ranked against every token; analogy --eval FILE."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every run
# (inspect.signature with eval_str, then get_type_hints), evaluating each string twice, half of what making
# the command costs; as objects they are made once, at import (tests/test_imports.py checks they are not
# strings).

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Method, Pool, Rule
from gpt2emb.cli.options import (
    Among,
    Encoding,
    EvalFile,
    Exact,
    Figure,
    IgnoreCase,
    Json,
    Jsonl,
    Models,
    PoolOpt,
    Restrict,
    Revision,
    RuleOpt,
    Strict,
    SumCommand,
    Top,
    WholeWords,
    figure_of,
    refuse_unused,
)
from gpt2emb.cli.stdin import from_stdin, one_model, stdin_blocks, stream
from gpt2emb.errors import ExitCode, UsageError
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    cls=SumCommand,
    epilog="Examples:\n\n  gpt2emb analogy king man woman\n\n  gpt2emb analogy king - man + woman\n\n  "
    "gpt2emb analogy king - man + woman - boy + girl --method 3cosadd\n\n  "
    'gpt2emb analogy "Paris - France + Italy" -k 5\n\n  '
    "gpt2emb analogy king man woman --keep-inputs\n\n  gpt2emb analogy king man woman --method 3cosmul\n\n  "
    "gpt2emb analogy king man woman --among royals.txt\n\n  "
    "gpt2emb analogy --eval questions-words.txt --method 3cosadd --ignore-case\n\n  "
    "gpt2emb analogy --eval questions-words.txt --method 3cosadd --ignore-case --restrict 30000\n\n  "
    "printf 'king man woman\\nParis France Italy\\n' | gpt2emb analogy - --jsonl",
)
def analogy(
    ctx: typer.Context,
    words: Annotated[
        list[str] | None,
        typer.Argument(
            help="Three words A B C (king man woman: A - B + C), or a sum as the chapter writes it: "
            "king - man + woman - boy + girl, any number of terms, each after the first + WORD or - WORD, "
            "as arguments or in one quoted argument. Space a sign from its word: an argument that starts "
            "with a dash is read as options, -man as -m an. - alone reads questions from stdin, one per "
            "line.",
            metavar="WORDS",
            show_default=False,
        ),
    ] = None,
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
    encoding: Encoding = None,
    json: Json = False,
    jsonl: Jsonl = False,
    strict: Strict = False,
    figure: Figure = None,
) -> int:
    """v(A) - v(B) + v(C) ranked by cosine against every token: king man woman -> queen.

    The same written as the chapter writes it, king - man + woman, and any sum of signed words: king - man + woman - boy + girl. With - in place of the words, questions from stdin, one `A B C` (or one sum) per line. With --eval FILE, a whole benchmark file of analogies instead, scored per section (--restrict N: only questions whose words are among the first N token ids, as gensim's restrict_vocab)."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb import registry
    from gpt2emb.core import analogy as core
    from gpt2emb.core.open import RankOptions

    options = RankOptions(
        k=top,
        exact=exact,
        pool=pool,
        keep_inputs=keep_inputs,
        among=among,
        restrict=restrict,
        whole_words=whole_words,
    )
    figure = figure_of(
        figure, stdin=words == ["-"], jsonl=jsonl, eval_file=eval_file, models=len(model or [])
    )

    models = registry.distinct_refs(
        model or [DEFAULT_MODEL], revision, output.reporter(json or jsonl), encoding
    )
    if eval_file is not None:
        if words:
            raise UsageError("--eval takes a benchmark file, not words A B C")
        refuse_unused(
            ctx,
            ("top", "keep_inputs", "exact", "pool"),
            "would change nothing with --eval: it scores each question's first answer, words read by --rule",
        )
        if among is not None or whole_words:
            raise UsageError("--eval takes --restrict N to limit its words, not --among or --whole-words")
        if jsonl or strict:
            raise UsageError("--eval prints one table or one --json document: --jsonl and --strict are for -")
        reporter = output.reporter(json or jsonl)
        if len(models) > 1:  # each scored on the questions that all answer
            from gpt2emb.core import evaluate_compare

            output.render(
                evaluate_compare.analogy_eval_side_by_side(
                    models, eval_file, method, rule, ignore_case, errors, reporter, restrict
                ),
                json,
            )
            return ExitCode.OK
        from gpt2emb.core import evaluate as evaluation

        result = evaluation.analogy_eval(
            models[0], eval_file, method, rule, ignore_case, errors, reporter, restrict
        )
        output.render(result, json)
        return ExitCode.OK
    refuse_unused(ctx, ("rule", "ignore_case", "errors"), "would change nothing without --eval FILE")
    # a - among other words is a sign of the sum; alone, it stands for the words on stdin
    if from_stdin(["-"] if words == ["-"] else [], json, jsonl, strict):
        reporter = output.reporter(json or jsonl)
        answers = core.each_analogy(one_model(models), stdin_blocks(), options, method, reporter)
        return stream(answers, json, jsonl, strict)
    terms = core.terms_of(
        words or [],
        "give three words A B C (as in: analogy king man woman), a sum as the chapter writes it "
        "(analogy king - man + woman), or --eval FILE",
    )
    reporter = output.reporter(json or jsonl)
    if len(models) > 1 and not jsonl:
        from gpt2emb.core import compare

        output.render(compare.analogy_side_by_side(models, terms, options, method, reporter), json)
        return ExitCode.OK
    answer = core.analogy(one_model(models, jsonl=True), terms, options, method, reporter, figure)
    output.render(answer, json, lines=jsonl)
    return ExitCode.OK
