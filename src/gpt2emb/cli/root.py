"""The root of the command line: the Typer app's root options, its stems (each stem's commands, added when a
run needs them), the hook into Typer's per-parameter slot, and the one error boundary (App.main: any failure
becomes a one-line message and an exit code, never a traceback)."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every run
# (inspect.signature with eval_str, then get_type_hints), evaluating each string twice, half of what making
# the command costs; as objects they are made once, at import (tests/test_cli.py checks they are not strings).

import copy
import errno
import functools
import gc
import importlib
import os
import re
import sys
from collections.abc import Sequence
from enum import Enum
from typing import Annotated, Any, TypeVar, get_args, get_origin

import typer
from typer.core import TyperGroup

from gpt2emb import output
from gpt2emb.errors import COMMAND_LINE, LONE_SURROGATE, ExitCode, Gpt2embError, UsageError


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
            argv = _as_utf8(argv)
            _check_utf8(argv)
            rv = super().main(argv, prog_name or "gpt2emb", complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except Gpt2embError as e:
            output.error(e.message, e.kind, e.code, as_json)
            code = e.code
        except typer.TyperException as e:  # click's usage errors: bad option, missing argument
            if type(e).__name__ != "NoArgsIsHelpError":  # that one has shown the help: nothing to add
                command = next((a for a in argv if a in self.commands), "")
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


def _as_utf8(argv: list[str]) -> list[str]:
    """The arguments as the UTF-8 text their bytes are. Where the locale's encoding is not UTF-8 (LC_ALL=C,
    Python's UTF-8 mode off), Python decodes the command line in that encoding, and a byte it lacks becomes
    a lone surrogate (surrogateescape): `café` arrives as "caf\\udcc3\\udca9". Such an argument is decoded
    again from its bytes, as UTF-8; one whose bytes are not UTF-8 stays as it is, for _check_utf8."""
    return [_redecoded(arg) if LONE_SURROGATE.search(arg) else arg for arg in argv]


def _redecoded(arg: str) -> str:
    try:
        return os.fsencode(arg).decode("utf-8")
    except UnicodeError:  # not the file system encoding's surrogates, or bytes that are not UTF-8
        return arg


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


_app = typer.Typer(  # the root: its options; each stem's commands are added by whole() or for_run
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


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version  # 40 ms of imports: only when asked

        typer.echo(f"gpt2emb {version('gpt2emb')}")
        raise typer.Exit()


@_app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Show the version and exit.", is_eager=True, callback=_version)
    ] = False,
) -> None:
    pass


# each stem's module (cli/NAME.py), in --help's order: a new stem is one more name here
STEMS = (
    *("vector", "neighbors", "analogy", "similarity", "positions", "sizes", "tying", "text", "geometry"),
    *("export", "lab", "cache", "schema"),
)
GROUPS = ("cache",)  # a group of its own: its subcommands' errors go through the same boundary (cls=App)


def stem(name: str) -> typer.Typer:
    """The commands of cli/NAME.py (its `app`)."""
    commands: typer.Typer = importlib.import_module(f"gpt2emb.cli.{name}").app
    return commands


def _add(app: typer.Typer, name: str) -> None:
    if name in GROUPS:
        app.add_typer(stem(name), cls=App)
    else:
        app.add_typer(stem(name))


@functools.cache
def whole() -> typer.Typer:
    """The whole app, every stem's commands added: gpt2emb.cli.app (the tests', docs' and completion's)."""
    for name in STEMS:
        _add(_app, name)
    return _app


def main() -> None:
    """The console script: one run, then the process ends."""
    code = for_run(sys.argv[1:])(prog_name="gpt2emb", standalone_mode=False)
    # what the run made is freed by the process's end: frozen, no collection at exit goes over it again (a
    # tenth of a warm query's own work); in-process runs (tests, notebooks) call App.main, which does not
    gc.freeze()
    sys.exit(code)


def for_run(argv: list[str]) -> typer.Typer:
    """The app a run needs: when its first argument names a command (or the cache group), the app holding
    that one alone, else the whole app.

    Typer makes a click command of every command of an app on every run, reading each signature and making
    each parameter: 40 ms or more for the commands here on a busy 2-core machine, 6 for one of them, when a
    warm query may take some 40 ms beyond numpy's import. A run invokes one, so only that one is made (and,
    when the command is named as its stem, only that stem's module is imported, not all 13). The
    app is the same but for its list of commands, which only a run without a command shows (--help,
    --version, completion, a misspelt command: those get the whole app, its lists and suggestions whole).
    tests/test_cli.py checks that each command's --help and options are the same either way."""
    name = argv[0] if argv else ""
    if name in STEMS:  # most commands are named as their stem's module: only it is imported
        own = _holding(_app, registered_groups=[])
        _add(own, name)
        found = _one(own, name)
        if found is not None:
            return found
    return _one(whole(), name) or whole()


def _one(app: typer.Typer, name: str) -> typer.Typer | None:
    """An app holding the command (or group) of that name alone, of app's; None when app holds none."""
    for group in app.registered_groups:
        commands = group.typer_instance
        assert commands is not None
        if _named(group.name) or _named(commands.info.name):  # a group of its own (cache)
            if name in (_named(group.name), _named(commands.info.name)):
                return _holding(app, registered_groups=[group])
            continue
        for command in commands.registered_commands:
            if name == (command.name or typer.main.get_command_name(command.callback.__name__)):  # type: ignore[union-attr]
                one = _holding(commands, registered_commands=[command])
                return _holding(app, registered_groups=[_holding(group, typer_instance=one)])
    return None


_Copied = TypeVar("_Copied")


def _named(name: Any) -> str | None:
    """A name given to add_typer or typer.Typer; None where it was left out (Typer's DefaultPlaceholder)."""
    return name if isinstance(name, str) else None


def _holding(original: _Copied, **changed: Any) -> _Copied:
    """A shallow copy of a Typer (or its TyperInfo) with some attributes changed; the original stays."""
    holding = copy.copy(original)
    holding.__dict__.update(changed)
    return holding
