"""The options several commands share (-m, --json, --revision, ...) as Annotated types; model completion."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from gpt2emb.choices import Pool, Rule
from gpt2emb.errors import UsageError
from gpt2emb.registry import MODELS, find


class Command(TyperCommand):
    """A command of words. Its usage line marks an argument of many values with "...", as click does: Typer
    0.27 and 0.28 leave it out where the argument has a metavar (`{WORD}` for `{WORD}...`). A word typed with
    a dash before it is told so before click reads it as options. Given by cls=Command."""

    signs = False  # its words are a sum whose signs may be typed (analogy: king - man + woman)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            shown = param.get_usage_pieces(ctx)
            if param.param_type_name == "argument" and param.nargs == -1:
                shown = [p if p.endswith("...") else f"{p}..." for p in shown]
            pieces.extend(shown)
        return pieces

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:  # completion reads what is typed so far, and refuses nothing
            refuse_dashed_word(self, ctx.info_name or "", args)
        return super().parse_args(ctx, args)


class SumCommand(Command):
    signs = True


def refuse_dashed_word(command: Command, name: str, args: list[str]) -> None:
    """A word typed with a dash glued to it (king -man), which click would read as options (-m an, even
    beside another -m, since -m repeats; -w, which does not exist), is refused saying so and how to type it.
    A short option given its value glued on stays one where the value makes sense (-mxl)."""
    options: dict[str, Any] = {  # click's Options, each under each of its names
        o: p for p in command.params if p.param_type_name == "option" for o in [*p.opts, *p.secondary_opts]
    }
    words: list[str] = []  # the command's words, and the options typed with them (each with its value)
    typed: list[str] = []
    dashed: tuple[str, Any] | None = None
    i = 0
    while i < len(args):
        arg, i = args[i], i + 1
        if arg == "--":
            words += args[i:]
            break
        option = options.get(arg.split("=", 1)[0] if arg.startswith("--") else arg)
        if option is not None:
            taken = 0 if option.is_flag or "=" in arg else option.nargs
            typed += args[i - 1 : i + taken]
            i += taken
            continue
        short = options.get(arg[:2])
        glued = short is not None and not short.is_flag and "-m" in short.opts and find(arg[2:])
        if re.fullmatch(r"-[^\W\d_]{2,}", arg) and not glued:
            dashed = dashed or (arg, short)
            words.append(arg)
        elif not arg.startswith("-") or arg == "-":
            words.append(arg)
        else:
            typed.append(arg)
    if dashed is None:
        return
    arg, short = dashed
    read = f"the option {arg[:2]} {arg[2:]}" if short is not None and not short.is_flag else "options"
    if command.signs:
        spaced = " ".join(f"{w[0]} {w[1:]}" if w[0] in "+-" and len(w) > 1 else w for w in words)
        raise UsageError(f"{arg} is read as {read}: put a space after the sign ({spaced})")
    shown = [a if a.isprintable() and a and " " not in a else repr(a) for a in [*typed, "--", *words]]
    raise UsageError(
        f"{arg} is read as {read}: to give a word that starts with a dash, put -- before the words "
        f"({' '.join(['gpt2emb', name, *shown])})"
    )


def whole(minimum: int | None = None) -> Callable[[Any], int]:
    """The parser of a count given on the command line: ASCII digits with an optional sign (spaces around
    are fine), at least minimum. Not int(), which also takes 1_0 and other scripts' digits (as no id:N
    does). The option gives its placeholder as metavar (a parser's would be its function's name)."""

    def parse(value: Any) -> int:
        if isinstance(value, int):  # the default
            return value
        if not re.fullmatch(r"\s*[-+]?[0-9]+\s*", str(value), re.ASCII):
            raise typer.BadParameter(f"{value!r} is not a whole number.")
        number = int(value)
        if minimum is not None and number < minimum:
            raise typer.BadParameter(f"{number} is less than {minimum}.")
        return number

    return parse


def complete_model(incomplete: str) -> list[str]:
    names = [n for m in MODELS for n in (m.name, *m.aliases)]
    return [n for n in names if n.startswith(incomplete)]


Model = Annotated[
    str,
    typer.Option(
        "-m",
        "--model",
        help="gpt2, medium, large, xl, roberta, ... (gpt2emb models), a Hub repo id or a folder.",
        autocompletion=complete_model,
    ),
]
Models = Annotated[
    list[str] | None,
    typer.Option(
        "-m",
        "--model",
        help="gpt2 (the default), medium, large, xl, a Hub repo id or a folder; "
        "give it more than once to compare models side by side.",
        autocompletion=complete_model,
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
Encoding = Annotated[
    str | None,
    typer.Option(
        "--encoding",
        help="How a static word table's words are written (utf-8 when left out): cp1252, latin-1, ...; "
        "only for a word2vec or GloVe file.",
        metavar="NAME",
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
        "--eval", help="Score a benchmark file instead (its format: docs/scripting.md).", metavar="FILE"
    ),
]
RuleOpt = Annotated[
    Rule,
    typer.Option(
        "--rule",
        help="With --eval, how a word becomes a token: space (' king', as in text) or bare. A static "
        "file's words are its keys, whatever the rule.",
    ),
]
IgnoreCase = Annotated[
    bool, typer.Option("--ignore-case", help="With --eval, match words whatever their case, as gensim does.")
]
Top = Annotated[int, typer.Option("-k", "--top", help="How many results.", parser=whole(), metavar="<int>")]
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
        parser=whole(),
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
# a command's words: WordsOrStdin for a command that reads them from stdin (it calls stdin.from_stdin), Words
# for one that does not, so that no command's --help promises what it does not do
Words = Annotated[
    list[str],
    typer.Argument(help="Words (king), or token ids (id:5822).", metavar="WORD", show_default=False),
]
WordsOrStdin = Annotated[
    list[str],
    typer.Argument(
        help="Words (king), or token ids (id:5822); - alone reads them from stdin, one per line.",
        metavar="WORD",
        show_default=False,
    ),
]


def refuse_unused(ctx: typer.Context, names: tuple[str, ...], why: str) -> None:
    """Refuse the options among names given on the command line: where they stand they would do nothing."""
    given = [
        "/".join(p.opts)
        for p in ctx.command.params
        if p.name in names and getattr(ctx.get_parameter_source(p.name or ""), "name", "DEFAULT") != "DEFAULT"
    ]
    if given:
        raise UsageError(f"{', '.join(given)} {why}")


Figure = Annotated[
    str | None,
    typer.Option(
        "--figure",
        help='Also draw the answer into FILE, a .png, .svg or .pdf (needs "gpt2emb\\[plot]").',
        metavar="FILE",
        show_default=False,
    ),
]


def figure_of(
    figure: str | None,
    *,
    stdin: bool = False,
    jsonl: bool = False,
    eval_file: str | None = None,
    models: int = 1,
) -> str | None:
    """--figure's file, checked before any model is opened (gpt2emb.plot is imported for it alone): a figure
    draws one answer, of one model (models: how many -m a command that draws only one was given)."""
    if figure is None:
        return None
    if stdin:
        raise UsageError("--figure draws one answer: give the words on the command line, not - (stdin)")
    if jsonl:
        raise UsageError("--figure draws one answer, and --jsonl prints a line per word: use --json with it")
    if eval_file is not None:
        raise UsageError("--figure draws one answer, not the score of a benchmark file (--eval)")
    if models > 1:
        raise UsageError(
            "--figure draws one model's answer here: give one -m (neighbors draws several side by side)"
        )
    from gpt2emb import plot

    return plot.check_figure(figure)
