"""The command line: parse, call the core (api.py, sizes.py), hand the result to output/.

The one error boundary is App.main: every failure becomes a one-line message (JSON with --json) and an exit
code, never a traceback. Heavy modules are imported inside the commands, so --help stays instant.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

import typer
from typer.core import TyperGroup

from gpt2emb import output
from gpt2emb.choices import DType, Format, Method, Pool, Rule, Table
from gpt2emb.errors import (
    COMMAND_LINE,
    LONE_SURROGATE,
    BadModel,
    DamagedEntry,
    ExitCode,
    Gpt2embError,
    InUse,
    UsageError,
    error_for,
)
from gpt2emb.registry import DEFAULT_MODEL, MODELS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpt2emb.batch import Answers, Failed, Line


class App(TyperGroup):
    # every parameter a run parses passes here (the group's own, then the chosen command's): see _PlainValue
    def get_params(self, ctx: Any) -> list[Any]:
        return _PlainValue.install(super().get_params(ctx))

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            _PlainValue.install(command.get_params(ctx))
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _ReaderGone() from None  # past Typer, which would make it exit 1

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        as_json = "--json" in argv or "--jsonl" in argv
        output.prepare_streams()  # a cp1252 or ascii stdout shows escapes, never fails
        if as_json or not (sys.stdout.isatty() and sys.stderr.isatty()):
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        code: int
        spelling = COMMAND_LINE.set(True)  # messages name options as typed here: -k/--top, not k
        try:
            _check_utf8(argv)
            rv = super().main(argv, prog_name or "gpt2emb", complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except Gpt2embError as e:
            output.error(e.message, e.kind, e.code, as_json)
            code = e.code
        except typer.TyperException as e:  # click's usage errors: bad option, missing argument
            if type(e).__name__ != "NoArgsIsHelpError":  # that one has shown the help: nothing to add
                command = next((a for a in argv if a in COMMANDS), "")
                hint = " (see: " + " ".join(filter(None, ["gpt2emb", command, "--help"])) + ")"
                output.error(e.format_message() + hint, "usage", ExitCode.USAGE, as_json)
            code = getattr(e, "exit_code", ExitCode.USAGE)
        except typer.Abort:
            code = ExitCode.INTERRUPTED
        except (BrokenPipeError, _ReaderGone):
            # the reader went away (| head): say nothing, and keep Python from complaining at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            code = ExitCode.OK
        except KeyboardInterrupt:
            code = ExitCode.INTERRUPTED
        except Exception as e:  # a bug: one line, not a traceback (GPT2EMB_DEBUG=1 shows it)
            if isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG:
                # a path given too long for this system (-o, -m, --eval): the user's to shorten, not a bug
                output.error(_too_long(e), "usage", ExitCode.USAGE, as_json)
                code = ExitCode.USAGE
            elif os.environ.get("GPT2EMB_DEBUG"):
                raise
            else:
                output.error(
                    f"internal error: {type(e).__name__}: {e} (please report it)",
                    "internal",
                    ExitCode.ERROR,
                    as_json,
                )
                code = ExitCode.ERROR
        finally:
            COMMAND_LINE.reset(spelling)
        if standalone_mode:
            sys.exit(code)
        return code


def _check_utf8(argv: list[str]) -> None:
    """Refuse an argument that is not UTF-8 text, in the words stdin's lines get (exit 2), before anything
    reads it: no tokenizer takes such text, and no JSON holds it. Paths too, though POSIX allows any bytes
    in a file name: every path given is written into the output (-o's files, an --among file, a folder
    model's name in every result), which is UTF-8 text, so such a name could not be shown as it is, nor read
    back from the JSON; linking the file under a UTF-8 name (ln -s) is the way round. A NUL, which no real
    command line can hold, is refused here too."""
    for arg in argv:
        if "\0" in arg:
            raise UsageError(
                f"the argument {_escaped(arg)} holds a NUL character, which no argument can hold"
            )
        found = LONE_SURROGATE.search(arg)
        if found:
            byte = len(arg[: found.start()].encode("utf-8")) + 1  # the bytes before it are whole characters
            raise UsageError(
                f"the argument {_escaped(arg)} is not UTF-8 text (byte {byte}); give it in UTF-8 (iconv -t "
                "UTF-8 converts a text; a file or folder whose name is not UTF-8: rename it, or link it "
                "under a UTF-8 name with ln -s)"
            )


def _escaped(arg: str, n: int = 60) -> str:
    """An argument as a message quotes it: a byte that is not UTF-8 as \\xff (as typed: $'\\xff'), other
    characters that do not print escaped, cut at n characters."""

    def shown(ch: str) -> str:
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:
            return f"\\x{cp - 0xDC00:02x}"
        return ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")

    return '"' + "".join(map(shown, arg[:n])) + '"' + ("..." if len(arg) > n else "")


def _too_long(e: OSError) -> str:
    """The message for a path too long for this system, naming the path as given."""
    name = os.fsdecode(e.filename) if e.filename is not None else "a path given"
    return f"{_escaped(name)} is too long a path for this system ({e.strerror}); give a shorter one"


class _ReaderGone(Exception):
    """stdout's reader has closed the pipe (`| head`): the run ends quietly, with success."""


class _PlainValue:
    """Turns one command-line value into a str, an int, a bool or an Enum member, as Typer would.

    Typer 0.29 builds a pydantic TypeAdapter for every parameter of a run: about 90 ms of imports and schema
    building, a third of a warm `neighbors`. The parameters here are plain str, int, bool, Enum and lists of
    str, so this gives the same values with clearer messages and no pydantic.
    It plugs into Typer's per-parameter coercion slot; a parameter of any other type, or a Typer whose slot
    differs, keeps Typer's own path (tests/test_cli.py checks that a warm query imports no pydantic).
    """

    def __init__(self, kind: type, minimum: int | None) -> None:
        self.kind, self.minimum = kind, minimum

    @classmethod
    def install(cls, params: list[Any]) -> list[Any]:
        for param in params:
            described = getattr(param, "type_descriptor", None)
            if described is None or getattr(param, "_runtime_param", False) is not None:
                continue  # not a Typer parameter, or already set up
            kind, info = described.annotation, described.parameter_info
            if get_origin(kind) is list and get_args(kind) == (str,):
                kind = str
            plain = kind in (str, int, bool) or (isinstance(kind, type) and issubclass(kind, Enum))
            if plain and info.parser is None and info.max is None and (info.min is None or kind is int):
                param._runtime_param = cls(kind, info.min)
        return params

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """The value of one parameter: None when absent, a list for a repeated one."""
        many = param.multiple or param.nargs == -1
        if value is None:
            return () if many else None
        if many:
            return [self.one(v, param, ctx) for v in value]
        return self.one(value, param, ctx)

    def one(self, value: Any, param: Any, ctx: Any) -> Any:
        def bad(problem: str) -> typer.BadParameter:
            return typer.BadParameter(problem, ctx=ctx, param=param)

        if isinstance(value, self.kind):
            return value
        if issubclass(self.kind, Enum):
            member = next((m for m in self.kind if m.value == value), None)
            if member is None:
                raise bad(f"{value!r} is not one of {', '.join(repr(m.value) for m in self.kind)}.")
            return member
        if self.kind is int:
            if not re.fullmatch(r"\s*[-+]?[0-9]+\s*", str(value), re.ASCII):  # not 1_0 (as int() takes)
                raise bad(f"{value!r} is not a whole number.")
            number = int(value)
            if self.minimum is not None and number < self.minimum:
                raise bad(f"{number} is less than {self.minimum}.")
            return number
        if self.kind is bool:
            raise bad(f"{value!r} is not true or false.")
        return str(value)


app = typer.Typer(
    cls=App,
    help="Look inside GPT-2's embeddings (and RoBERTa's, BERT's, GPT-Neo's, Llama's...): token rows (wte), "
    "position rows (wpe), sizes and weight tying.\n\n"
    "A word means the word inside running text: king is the token ' king'. The first use of a model "
    "fetches its embeddings once; after that every command works offline.",
    epilog="Examples:\n\n  gpt2emb analogy king man woman\n\n  gpt2emb neighbors cat -k 5 --json\n\n  "
    "gpt2emb positions 0 1 2 500\n\n  gpt2emb sizes\n\n  gpt2emb tying -m xl",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _complete_model(incomplete: str) -> list[str]:
    names = [n for m in MODELS for n in (m.name, *m.aliases)]
    return [n for n in names if n.startswith(incomplete)]


Model = Annotated[
    str,
    typer.Option(
        "-m",
        "--model",
        help="gpt2, medium, large, xl, roberta, ... (gpt2emb models), a Hub repo id or a folder.",
        autocompletion=_complete_model,
    ),
]
Models = Annotated[
    list[str] | None,
    typer.Option(
        "-m",
        "--model",
        help="gpt2 (the default), medium, large, xl, a Hub repo id or a folder; "
        "give it more than once to compare models side by side.",
        autocompletion=_complete_model,
        show_default=False,
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of a table.")]
Revision = Annotated[
    str | None,
    typer.Option(
        "--revision",
        help="A branch, tag or commit id of the Hub model (main when left out); not for a local folder.",
        metavar="REV",
        show_default=False,
    ),
]
Exact = Annotated[
    bool,
    typer.Option(
        "--exact", help="Take each word as typed, not starting a word: no leading space (BERT: ing is ##ing)."
    ),
]
PoolOpt = Annotated[
    Pool, typer.Option("--pool", help="How a word split into several tokens becomes one vector.")
]
EvalFile = Annotated[
    str | None,
    typer.Option(
        "--eval", help="Score a benchmark file instead (see the README for its format).", metavar="FILE"
    ),
]
RuleOpt = Annotated[
    Rule,
    typer.Option(
        "--rule", help="With --eval, how a word becomes a token: space (' king', as in text) or bare."
    ),
]
IgnoreCase = Annotated[
    bool, typer.Option("--ignore-case", help="With --eval, match words whatever their case, as gensim does.")
]
Top = Annotated[int, typer.Option("-k", "--top", help="How many results.")]
Jsonl = Annotated[
    bool,
    typer.Option(
        "--jsonl", help="One JSON object per line: per word (per input line with -), printed once answered."
    ),
]
Strict = Annotated[
    bool,
    typer.Option(
        "--strict", help="With -: stop at the first line that fails (exit with its code) instead of going on."
    ),
]
Among = Annotated[
    str | None,
    typer.Option(
        "--among",
        help="Rank only the tokens of the words listed in FILE (UTF-8, one a line, # comments); a word that "
        "is not one token is left out, with a note.",
        metavar="FILE",
        show_default=False,
    ),
]
Restrict = Annotated[
    int | None,
    typer.Option(
        "--restrict",
        help="Rank only token ids 0 to N-1 (gensim's restrict_vocab; GPT-2's ids follow its merges, roughly "
        "the commonest first).",
        metavar="N",
        show_default=False,
    ),
]
WholeWords = Annotated[
    bool,
    typer.Option(
        "--whole-words", help="Rank only tokens that start a word (leading space) and hold whole characters."
    ),
]
Words = Annotated[
    list[str],
    typer.Argument(
        help="Words (king), or token ids (id:5822); - alone reads them from stdin, one per line.",
        metavar="WORD",
        show_default=False,
    ),
]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version  # 40 ms of imports: only when asked

        typer.echo(f"gpt2emb {version('gpt2emb')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Show the version and exit.", is_eager=True, callback=_version)
    ] = False,
) -> None:
    pass


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
    from gpt2emb import api

    shown = None if full else dims
    if _from_stdin(words, json, jsonl, strict):
        answers = api.each_vector(
            model, _stdin_blocks(), exact, pool, output.reporter(json or jsonl), revision
        )
        return _stream(answers, json, jsonl, strict, shown)
    result = api.vector(model, words, exact, pool, output.reporter(json or jsonl), revision)
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
    from gpt2emb import api

    if _from_stdin(words, json, jsonl, strict):
        reporter = output.reporter(json or jsonl)
        answers = api.each_neighbors(
            _one_model(model), _stdin_blocks(), top, exact, pool, keep_query, reporter, revision,
            among, restrict, whole_words, fold,
        )  # fmt: skip
        return _stream(answers, json, jsonl, strict)
    models = api.distinct_models(model or [DEFAULT_MODEL], revision, output.reporter(json or jsonl))
    if jsonl:
        models = [_one_model(models, jsonl=True)]
    results = [
        api.neighbors(
            m,
            words,
            top,
            exact,
            pool,
            keep_query,
            output.reporter(json or jsonl),
            revision,
            among=among,
            restrict=restrict,
            whole_words=whole_words,
            fold=fold,
        )
        for m in models
    ]
    output.render(results[0] if len(results) == 1 else api.compare(results), json, lines=jsonl)
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
    from gpt2emb import api

    models = api.distinct_models(model or [DEFAULT_MODEL], revision, output.reporter(json or jsonl))
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
        result = api.analogy_eval(
            models[0], eval_file, method, rule, ignore_case, errors, reporter, revision, restrict
        )
        output.render(result, json)
        return ExitCode.OK
    _refuse_unused(ctx, ("rule", "ignore_case", "errors"), "would change nothing without --eval FILE")
    if _from_stdin([w for w in (a, b, c) if w is not None], json, jsonl, strict):
        reporter = output.reporter(json or jsonl)
        answers = api.each_analogy(
            _one_model(models), _stdin_blocks(), top, exact, pool, keep_inputs, method, reporter, revision,
            among, restrict, whole_words,
        )  # fmt: skip
        return _stream(answers, json, jsonl, strict)
    if a is None or b is None or c is None:
        raise UsageError("give three words A B C (as in: analogy king man woman), or --eval FILE")
    results = [
        api.analogy(
            m,
            a,
            b,
            c,
            top,
            exact,
            pool,
            keep_inputs,
            method,
            output.reporter(json or jsonl),
            revision,
            among=among,
            restrict=restrict,
            whole_words=whole_words,
        )
        for m in ([_one_model(models, jsonl=True)] if jsonl else models)
    ]
    output.render(results[0] if len(results) == 1 else api.compare(results), json, lines=jsonl)
    return ExitCode.OK


@app.command(
    epilog="Examples:\n\n  gpt2emb positions 0 1 2 500\n\n  gpt2emb positions 0-5 1023 --json\n\n"
    "  gpt2emb positions --heatmap\n\n  gpt2emb positions --png wpe.png"
)
def positions(
    positions: Annotated[
        list[str] | None, typer.Argument(help="Positions 0..1023, or ranges like 0-5.", show_default=False)
    ] = None,
    model: Model = DEFAULT_MODEL,
    heatmap: Annotated[
        bool, typer.Option("--heatmap", help="Draw the whole cosine matrix of all positions, in blocks.")
    ] = False,
    cells: Annotated[int, typer.Option("--cells", help="Cells per side of the heatmap, 2 to 256.")] = 32,
    png: Annotated[
        str | None,
        typer.Option(
            "--png",
            help='Write a figure: heatmap, norms, principal components (needs "gpt2emb\\[plot]").',
            metavar="FILE",
        ),
    ] = None,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """Cosine similarity between rows of the position embedding wpe, with each row's norm."""
    from gpt2emb import api

    if heatmap or png is not None:
        if positions:
            raise UsageError("give positions, or --heatmap/--png for all of them, not both")
        output.render(api.position_map(model, cells, png, output.reporter(json), revision), json)
    else:
        output.render(api.positions(model, positions or [], output.reporter(json), revision), json)


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
    from gpt2emb import api

    if eval_file is not None:
        if words:
            raise UsageError("give words, or --eval FILE, not both")
        if strict:
            raise UsageError("--strict is for - (words from stdin), not --eval")
        _refuse_unused(
            ctx, ("exact", "pool"), "would change nothing with --eval: its words are read by --rule"
        )
        reporter = output.reporter(json)
        output.render(api.similarity_eval(model, eval_file, rule, ignore_case, reporter, revision), json)
        return ExitCode.OK
    _refuse_unused(ctx, ("rule", "ignore_case"), "would change nothing without --eval FILE")
    if _from_stdin(words or [], json, False, strict):
        reporter = output.reporter(json)
        result, failed = api.each_similarity(model, _stdin_blocks(), exact, pool, reporter, revision)
        code = _failures(failed, json, strict)
        if result is None:
            raise UsageError("stdin held fewer than two words to compare (one per line)")
        output.render(result, json)
        return code
    output.render(api.similarity(model, words or [], exact, pool, output.reporter(json), revision), json)
    return ExitCode.OK


@app.command(
    epilog="Examples:\n\n  gpt2emb sizes\n\n  gpt2emb sizes --dtype fp16\n\n  "
    "gpt2emb sizes --verify --json\n\n  gpt2emb sizes -m roberta-base -m gpt2"
)
def sizes(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "-m",
            "--model",
            help="Count this model's parameters exactly from its checkpoint headers (no weights read): "
            "a registry name, a Hub repo id or a folder; give it more than once for columns side by side.",
            autocompletion=_complete_model,
            show_default=False,
        ),
    ] = None,
    dtype: Annotated[
        DType, typer.Option("--dtype", help="Byte size used for the megabytes rows.")
    ] = DType.fp32,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Check every figure against the checkpoint headers "
            "on the Hub (about 100 KB each, no weights).",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """Vocabulary, width, layers and parameter counts of the four GPT-2 sizes, and wte's share of them.

    With -m, any model's: its parameters counted from its checkpoint headers, the token table's share."""
    from gpt2emb import sizes as sizes_module

    if model:
        if verify:
            raise UsageError(
                "--verify checks the four GPT-2 sizes' formula; -m counts from the headers already"
            )
        from gpt2emb import api

        names = api.distinct_models(model, revision, output.reporter(json))
        output.render(sizes_module.of_models(names, dtype.value, revision), json)
        return
    if revision is not None:
        raise UsageError("--revision is for a model given with -m")
    result = sizes_module.sizes(dtype.value, verify)
    output.render(result, json)
    if any(m.verified is False for m in result.models):
        raise BadModel("a figure disagrees with the checkpoint on the Hub (see the table)")


@app.command(
    epilog="Examples:\n\n  gpt2emb tying\n\n  gpt2emb tying -m xl --json\n\n  gpt2emb tying --load\n\n"
    '  gpt2emb tying --grad "The cat sat on the mat"\n\n  gpt2emb tying -m EleutherAI/pythia-70m --compare'
)
def tying(
    model: Model = DEFAULT_MODEL,
    load: Annotated[
        bool,
        typer.Option(
            "--load", help="Also load the real model and compare data_ptr() (downloads all weights)."
        ),
    ] = False,
    grad: Annotated[
        str | None,
        typer.Option(
            "--grad",
            help="Exercise 4: one forward and backward pass of the language-model loss on TEXT, with the "
            "gradient reaching wte by the input lookup and by the output layer shown apart (downloads all "
            "weights).",
            metavar="TEXT",
            show_default=False,
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="For an untied model: fetch its output layer's rows (all up to 1 GB, else a seeded sample "
            "of 4,096) and compare each with its row of wte and with a random other row.",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """Whether the output layer reuses wte: config, a model on the meta device, the header."""
    from gpt2emb import api

    result = api.tying(model, load, revision, grad, output.reporter(json), compare)
    output.render(result, json)


cache_app = typer.Typer(
    cls=App,
    help="Where gpt2emb keeps the embeddings it fetched, how to check them and how to free the space.",
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache")


@cache_app.command("list", epilog="Examples:\n\n  gpt2emb cache list\n\n  gpt2emb cache list --json")
def cache_list(json: Json = False) -> None:
    """The cached models: name, commit, size on disk and folder."""
    from gpt2emb import api

    output.render(api.cache_list(), json)


def _cached_model(help: str) -> Any:
    """The optional MODEL of a cache command."""
    return typer.Argument(help=help, show_default=False, autocompletion=_complete_model)


@cache_app.command(
    "clear",
    epilog="Examples:\n\n  gpt2emb cache clear xl\n\n  gpt2emb cache clear --outdated\n\n"
    "  gpt2emb cache clear",
)
def cache_clear(
    model: Annotated[
        str | None, _cached_model("Only this model (all of its commits); without it, everything.")
    ] = None,
    outdated: Annotated[
        bool,
        typer.Option(
            "--outdated",
            help="Only the entries of local folders whose files have changed since they were cached, or "
            "are gone (cache list marks them).",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Remove cached embeddings (the Hugging Face cache is left alone); the next use fetches them again.

    Exits 6 when one could not be removed (on Windows: in use by a program); it then stays whole. On Linux
    and macOS an entry in use is removed all the same, and the command using it may then fail: clear what
    nothing is running on."""
    from gpt2emb import api

    result = api.cache_clear(model, outdated)
    output.render(result, json)
    if result.kept:
        held = ", ".join(f"{k.name} ({k.commit[:12]}): {k.reason}" for k in result.kept)
        again = " ".join(
            ["gpt2emb cache clear", *([model] if model else []), *(["--outdated"] if outdated else [])]
        )
        raise InUse(f"could not remove {held}; close the programs using it, then run {again} again")


@cache_app.command(
    "verify",
    epilog="Examples:\n\n  gpt2emb cache verify\n\n  gpt2emb cache verify xl --repair\n\n  "
    "gpt2emb cache verify --json | jq '.entries[] | select(.ok | not)'",
)
def cache_verify(
    model: Annotated[
        str | None, _cached_model("Only this model (all of its commits); without it, every entry.")
    ] = None,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Rebuild each damaged entry from its source (the Hub or the folder), same commit.",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Read every byte of the cached embeddings against the checksums written with them: ok or damaged.

    Exits 6 while an entry is damaged (after --repair: one that could not be rebuilt)."""
    from gpt2emb import api

    result = api.cache_verify(model, repair, output.reporter(json))
    output.render(result, json)
    bad = [f"{e.name} ({e.commit[:12]})" for e in result.entries if not e.ok]
    if bad:
        fix = "see the notes above, then run" if repair else "run"
        raise DamagedEntry(f"damaged in the cache: {', '.join(bad)}; {fix} gpt2emb cache verify --repair")


@cache_app.command(
    "refresh", epilog="Examples:\n\n  gpt2emb cache refresh\n\n  gpt2emb cache refresh gpt2 --json"
)
def cache_refresh(
    model: Annotated[
        str | None, _cached_model("Only this model; without it, every cached Hub model.")
    ] = None,
    json: Json = False,
) -> None:
    """Ask the Hub again which commit main (and each other branch or tag used) names; rebuild what moved.

    Otherwise a branch is looked up on first use only, and its commit kept until this or cache clear."""
    from gpt2emb import api

    result = api.cache_refresh(model, output.reporter(json))
    output.render(result, json)
    if result.failed:  # the exit code of the first failure, once every other repo was asked
        first = result.failed[0]
        raise error_for(first.code, first.message)  # the message names the repo


@cache_app.command("path", epilog='Examples:\n\n  gpt2emb cache path\n\n  du -sh "$(gpt2emb cache path)"')
def cache_path(json: Json = False) -> None:
    """The cache folder (set GPT2EMB_CACHE_DIR to move it)."""
    from gpt2emb import api

    output.render(api.cache_path(), json)


@app.command(
    "input",
    epilog='Examples:\n\n  gpt2emb input "O Brasil é gigante"\n\n  gpt2emb input "The cat sat on the mat" '
    '--json\n\n  gpt2emb input "Hello world" --full --json\n\n'
    "  gpt2emb input - --truncate < chapter.txt",
)
def input_(
    text: Annotated[
        str,
        typer.Argument(
            help="The text, given to the model's tokenizer as it is (a word looked up gets a space put in "
            "front; a text does not); - alone reads it from stdin.",
            metavar="TEXT",
            show_default=False,
        ),
    ],
    model: Model = DEFAULT_MODEL,
    full: Annotated[
        bool, typer.Option("--full", help='Show every number of h0 (in the JSON: "h0").')
    ] = False,
    truncate: Annotated[
        bool,
        typer.Option(
            "--truncate",
            help="Keep as many tokens as the model has positions (GPT-2: the first 1024) of a longer text.",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """The model's real input for a text: its tokens, and h0 = wte\\[ids] + wpe\\[0..n-1] with its norms.

    And the cosine of each token's wte row with its position's wpe row.

    A text longer than the model's positions cannot go in (GPT-2: position 1024 does not exist)."""
    from gpt2emb import api, batch

    if text == "-":
        text = batch.text(batch.chunks(_stdin("the text")))
    output.render(api.model_input(model, text, full, truncate, output.reporter(json), revision), json)


@app.command(
    epilog="Examples:\n\n  gpt2emb geometry\n\n  gpt2emb geometry -m xl\n\n"
    "  gpt2emb geometry --json | jq .wte_vs_wpe"
)
def geometry(model: Model = DEFAULT_MODEL, revision: Revision = None, json: Json = False) -> None:
    """wte and wpe measured: norms, mean cosine, principal components, and content against position.

    Content against position: the |cosine| of every wte row with every wpe row, next to what random directions in the same dimension give."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb import api

    output.render(api.geometry(model, output.reporter(json), revision), json)


@app.command(
    epilog='Examples:\n\n  gpt2emb context bank "I sat on the river bank" "I paid at the bank"\n\n'
    '  gpt2emb context banco "Sentei no banco da praça" "Fui ao banco pagar a conta"\n\n'
    '  gpt2emb context bank "the river bank" "the bank manager" -m medium --json'
)
def context(
    word: Annotated[
        str,
        typer.Argument(
            help="The word, as inside running text: bank is the token ' bank'.",
            metavar="WORD",
            show_default=False,
        ),
    ],
    sentences: Annotated[
        list[str],
        typer.Argument(
            help="Two or more sentences that hold the word.", metavar="SENTENCE", show_default=False
        ),
    ],
    model: Model = DEFAULT_MODEL,
    pool: PoolOpt = Pool.mean,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """Static against contextual: WORD's vector in each SENTENCE, layer by layer, against its wte row.

    At every layer, from h0 (wte + wpe) to the last hidden state, WORD's vectors are compared between sentences and with WORD's row of wte. It runs the whole model with transformers: the first use fetches all of its weights."""  # noqa: E501 (one paragraph: --help wraps it)
    from gpt2emb import api

    output.render(api.context(word, sentences, model, pool, output.reporter(json), revision), json)


@app.command(epilog="Examples:\n\n  gpt2emb models\n\n  gpt2emb models --json")
def models(json: Json = False) -> None:
    """The named models (GPT-2's four sizes and others): family, aliases, shapes, and which are cached."""
    from gpt2emb import api

    output.render(api.models(), json)


@app.command(
    epilog="Examples:\n\n  gpt2emb export --format word2vec -o gpt2.txt\n\n"
    "  gpt2emb export -m xl --format word2vec-binary -o gpt2-xl.bin\n\n"
    "  gpt2emb export --format projector --whole-words --limit 10000 -o projector/\n\n"
    "  gpt2emb export --format projector --table wpe -o positions/"
)
def export(
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            help="word2vec (text: a 'rows dims' line, then 'key v1 v2 ...' per row), word2vec-binary (the "
            "same with float32 bytes) or projector (a folder holding the Embedding Projector's vectors.tsv "
            "and metadata.tsv).",
            metavar="FORMAT",
            show_default=False,
        ),
    ],
    out: Annotated[
        str,
        typer.Option(
            "-o",
            "--output",
            help="The file to write (word2vec), or the folder (projector, made if need be).",
            metavar="PATH",
            show_default=False,
        ),
    ],
    model: Model = DEFAULT_MODEL,
    table: Annotated[
        Table, typer.Option("--table", help="wte: a row per token; wpe: a row per position (keys pos0, ...).")
    ] = Table.wte,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Keep only the first N rows.", metavar="N", show_default=False),
    ] = None,
    whole_words: Annotated[
        bool,
        typer.Option(
            "--whole-words",
            help="Only tokens that start a word (shown with a leading space) and hold whole characters; "
            "applied before --limit.",
        ),
    ] = False,
    revision: Revision = None,
    json: Json = False,
) -> None:
    """Write a table's rows, in token-id order, for gensim, word2vec tools or the Embedding Projector.

    word2vec keys are the tokenizer's own entries (Ġking); the values read back exactly as stored."""
    from gpt2emb import api

    result = api.export(model, fmt, out, table, limit, whole_words, output.reporter(json), revision)
    output.render(result, json)


COMMANDS = (
    *("vector", "neighbors", "analogy", "similarity", "positions", "sizes", "tying"),
    *("input", "geometry", "context", "cache", "models", "export"),
)


# ---------------------------------------------------------------- words from stdin (`-`)


def _from_stdin(words: list[str], json: bool, jsonl: bool, strict: bool) -> bool:
    """Whether the words come from stdin: `-` alone in their place."""
    if json and jsonl:
        raise UsageError("--json prints one document, --jsonl one line per word: choose one")
    if "-" not in words:
        if strict:
            raise UsageError("--strict is for - (words from stdin): give - in place of the words")
        return False
    if words != ["-"]:
        raise UsageError(
            '- reads the words from stdin, one per line: give it alone, not with other words (the token " -" '
            'itself is --exact " -", or its id)'
        )
    return True


def _refuse_unused(ctx: typer.Context, names: tuple[str, ...], why: str) -> None:
    """Refuse the options among names given on the command line: where they stand they would do nothing."""
    given = [
        "/".join(p.opts)
        for p in ctx.command.params
        if p.name in names and getattr(ctx.get_parameter_source(p.name or ""), "name", "DEFAULT") != "DEFAULT"
    ]
    if given:
        raise UsageError(f"{', '.join(given)} {why}")


def _one_model(models: list[str] | None, jsonl: bool = False) -> str:
    if models and len(models) > 1:
        raise UsageError(
            "--jsonl takes one model: its lines are one model's answers"
            if jsonl
            else "- (words from stdin) takes one model: stdin can be read only once"
        )
    return models[0] if models else DEFAULT_MODEL


def _stdin_blocks() -> Iterator[list[Line]]:
    from gpt2emb import batch

    return batch.blocks(batch.lines(batch.chunks(_stdin("words", ", one per line"))))


def _stdin(what: str, how: str = "") -> int:
    """stdin's file descriptor, for `-`: a person at a terminal is told how to end what they type."""
    if sys.stdin is None:
        raise UsageError(f"- reads {what} from stdin, but there is no stdin")
    if sys.stdin.isatty():
        output.hint(f"reading {what} from stdin{how}; end with Ctrl-D (Ctrl-Z then Enter on Windows)")
    return sys.stdin.fileno()


def _stream(answers: Answers[Any], as_json: bool, jsonl: bool, strict: bool, dims: int | None = None) -> int:
    """Print a batch's answers as they come (a table, or a JSON line, each); one JSON document of them all
    at the end with --json. A line that failed is reported on stderr, and the exit code says some did."""
    from gpt2emb import limits
    from gpt2emb.batch import Failed

    code: int = ExitCode.OK
    kept: list[Any] = []
    first = True
    reporter = output.reporter(True)  # with --jsonl, notes go to stderr as JSON
    for note in answers.notes if jsonl else ():  # said once, before the lines (tables: in the first)
        reporter.note(note)
    for answer in answers:
        if isinstance(answer, Failed):
            code = _failures([answer], as_json or jsonl, strict)
        elif jsonl:
            output.line(answer)
            for note in answers.notes_of(answer):
                reporter.note(note)
        elif as_json:
            if len(kept) == limits.MAX_ANSWERS:  # an endless stdin must not fill the memory
                raise UsageError(
                    f"--json gathers the answers into one document, at most {limits.MAX_ANSWERS:,}, and "
                    "stdin holds more words: use --jsonl (a line per word, printed as it is answered)"
                )
            kept.append(answer)
        else:
            output.render(answers.one(answer, first), False, dims)
            first = False
    if as_json and not jsonl:
        output.render(answers.whole(tuple(kept)), True, dims)
    return code


def _failures(failed: list[Failed], as_json: bool, strict: bool) -> int:
    """Report lines that failed, each on stderr with its number; with --strict the first ends the run."""
    for f in failed:
        output.error(f.message, f.error.kind, f.error.code, as_json, f.line.number)
        if strict:
            raise typer.Exit(f.error.code)
    return ExitCode.SOME_FAILED if failed else ExitCode.OK


def main() -> None:
    app(prog_name="gpt2emb")
