"""The neighbors command: the nearest tokens to each word (-m more than once: models side by side)."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every run
# (inspect.signature with eval_str, then get_type_hints), evaluating each string twice, half of what making
# the command costs; as objects they are made once, at import (tests/test_imports.py checks they are not
# strings).

from typing import Annotated

import typer

from gpt2emb import output
from gpt2emb.choices import Pool
from gpt2emb.cli.options import (
    Among,
    Command,
    Encoding,
    Exact,
    Figure,
    Json,
    Jsonl,
    Models,
    PoolOpt,
    Restrict,
    Revision,
    Strict,
    Top,
    WholeWords,
    WordsOrStdin,
    figure_of,
)
from gpt2emb.cli.stdin import from_stdin, one_model, stdin_blocks, stream
from gpt2emb.errors import ExitCode
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    cls=Command,
    epilog="Examples:\n\n  gpt2emb neighbors cat\n\n  gpt2emb neighbors cat dog -k 5\n\n  "
    "gpt2emb neighbors king --fold\n\n  gpt2emb neighbors cat --among animals.txt -k 5\n\n  "
    "gpt2emb neighbors cat --restrict 10000 --whole-words\n\n  "
    "gpt2emb neighbors cat --json | jq '.items[0].neighbors[].token'\n\n  "
    "gpt2emb neighbors - -k 5 --jsonl < words.txt | head",
)
def neighbors(
    words: WordsOrStdin,
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
    encoding: Encoding = None,
    json: Json = False,
    jsonl: Jsonl = False,
    strict: Strict = False,
    figure: Figure = None,
) -> int:
    """The nearest tokens to each word by cosine similarity over all of wte (or the candidates chosen)."""
    from gpt2emb import registry
    from gpt2emb.core import neighbors as core
    from gpt2emb.core.open import RankOptions

    options = RankOptions(
        k=top,
        exact=exact,
        pool=pool,
        keep_query=keep_query,
        among=among,
        restrict=restrict,
        whole_words=whole_words,
        fold=fold,
    )
    figure = figure_of(figure, stdin="-" in words, jsonl=jsonl)  # several models: a panel each

    if from_stdin(words, json, jsonl, strict):
        reporter = output.reporter(json or jsonl)
        ref = registry.resolve(one_model(model or [DEFAULT_MODEL]), revision, encoding)
        return stream(core.each_neighbors(ref, stdin_blocks(), options, reporter), json, jsonl, strict)
    models = registry.distinct_refs(
        model or [DEFAULT_MODEL], revision, output.reporter(json or jsonl), encoding
    )
    if jsonl:
        models = [one_model(models, jsonl=True)]
    reporter = output.reporter(json or jsonl)
    if len(models) > 1:
        from gpt2emb.core import compare

        output.render(compare.neighbors_side_by_side(models, words, options, reporter, figure), json)
        return ExitCode.OK
    output.render(core.neighbors(models[0], words, options, reporter, figure), json, lines=jsonl)
    return ExitCode.OK
