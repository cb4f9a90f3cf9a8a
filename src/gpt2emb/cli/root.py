"""The root of the command line: the Typer app's root options, its commands (each made from its stem's module
when a run asks for it: App.get_command), and the one error boundary (App.main: any failure becomes a
one-line message and an exit code, never a traceback)."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every run
# (inspect.signature with eval_str, then get_type_hints), evaluating each string twice, half of what making
# the command costs; as objects they are made once, at import (tests/test_imports.py checks they are not
# strings).

import errno
import functools
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from gpt2emb import output
from gpt2emb.errors import COMMAND_LINE, LONE_SURROGATE, ExitCode, Gpt2embError, ReaderGone, UsageError
from gpt2emb.report import HUB_BARS
from gpt2emb.stems import is_stem


class App(TyperGroup):
    """The root group. Its commands are click's lazily loaded subcommands: each is made from its stem's module
    when a run asks for it by name, so a run imports the module of the command it invokes, makes that
    command alone (with the others of its module: text's and sizes' two) and reads no other signature.
    Typer would make every command of every stem on every run: 40 ms or more on a busy 2-core machine,
    when a warm query takes some 40 ms beyond numpy's import. --help, completion and a misspelt command
    list them all (list_commands), and so make them all."""

    def list_commands(self, ctx: Any) -> list[str]:
        from gpt2emb import commands  # the stems' declarations: read all for a list of them all

        return [name for stem in commands.declared() for name in _made(stem).list_commands(ctx)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:  # made once per group: kept in its commands, as click's are
            stem = cmd_name if is_stem(cmd_name) else _stem_of(cmd_name)
            command = _made(stem).get_command(ctx, cmd_name) if stem is not None else None
            if command is None:
                return None
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and self.get_command(ctx, args[0]) is None:
            # not a command: Typer suggests the nearest names (did you mean 'neighbors'?) from the group's
            # commands, so all are made
            for each in self.list_commands(ctx):
                self.get_command(ctx, each)
        name, command, rest = super().resolve_command(ctx, args)
        # completion parses resiliently: nothing typed so far is refused there
        given = None if ctx.resilient_parsing else _flag_given_a_value(ctx, command, rest)
        if given:  # click would say "unexpected extra argument (true)", which tells a learner nothing
            flag, value = given
            ctx.fail(f"{flag} is a flag and takes no value ({value}): give {flag} alone, or leave it out")
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ReaderGone() from None  # past Typer, which would make it exit 1

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
        code: int
        spelling = COMMAND_LINE.set(True)  # messages name options as typed here: -k/--top, not k
        bars = HUB_BARS.set(not as_json and sys.stdout.isatty() and sys.stderr.isatty())
        try:
            argv = _as_utf8(argv)
            _check_utf8(argv)
            with output.guarded_stdout():  # a failure to write stdout, whoever writes it, is raised here
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
        except (BrokenPipeError, ReaderGone):
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
            elif isinstance(e, PermissionError):  # a model's file or folder, a cache entry: not a bug either
                output.error(_no_permission(e), "permission", ExitCode.BAD_MODEL, as_json)
                code = ExitCode.BAD_MODEL
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
            HUB_BARS.reset(bars)
        if standalone_mode:
            sys.exit(code)
        return code


def _flag_given_a_value(ctx: Any, command: Any, args: list[str]) -> tuple[str, str] | None:
    """The flag and the value typed after it (lab --load true), where args hold more arguments than the
    command takes (so click would refuse one as unexpected) and one of them follows a flag; else None."""
    while isinstance(command, TyperGroup) and args:  # a group's command (cache list --json yes)
        command, args = command.get_command(ctx, args[0]), args[1:]
    if command is None or "-h" in args or "--help" in args:
        return None
    options = {
        o: p for p in command.params if p.param_type_name == "option" for o in [*p.opts, *p.secondary_opts]
    }
    takes = [p.nargs for p in command.params if p.param_type_name == "argument"]
    if any(n < 0 for n in takes):
        return None  # any number of arguments: none is extra
    positional: list[tuple[str, str | None]] = []  # each with the flag right before it
    i, flag = 0, None
    while i < len(args):
        arg, i = args[i], i + 1
        if arg == "--":
            positional += [(a, None) for a in args[i:]]
            break
        option = options.get(arg) if arg.startswith("-") and arg != "-" else None
        if option is not None and not option.is_flag:
            i += option.nargs  # its value
        if arg.startswith("-") and arg != "-":
            flag = arg if option is not None and option.is_flag else None
            continue
        positional.append((arg, flag))
        flag = None
    if len(positional) <= sum(takes):
        return None
    return next(((f, a) for a, f in positional if f is not None), None)


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


def _no_permission(e: PermissionError) -> str:
    """The message for a file or folder this user may not read (or write), naming it."""
    name = _escaped(os.fsdecode(e.filename), 1000) if e.filename is not None else "a file gpt2emb needs"
    return (
        f"cannot use {name}: {e.strerror} (this user may not read or write it, or search a folder above it); "
        "ls -ld shows who may, chmod or chown changes that"
    )


app = typer.Typer(  # the root: its options (its commands are App's)
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


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Show the version and exit.", is_eager=True, callback=_version)
    ] = False,
) -> None:
    pass


def _stem_of(name: str) -> str | None:
    """The stem declaring a command named otherwise (models, input, context), or None: all are read."""
    from gpt2emb import commands

    return commands.stem_of(name)


@functools.cache
def _made(stem: str) -> TyperGroup:
    """The commands of cli/STEM.py (its `app`), made: a group holding each of them (or the cache group).
    Made once per process: a command holds nothing of a run (click makes a context for each)."""
    holder = typer.Typer(add_completion=False)
    holder.add_typer(importlib.import_module(f"gpt2emb.cli.{stem}").app)
    group = typer.main.get_command(holder)
    assert isinstance(group, TyperGroup)
    return group


def main() -> None:
    """The console script: one run, then the process ends."""
    code = typer.main.get_command(app).main(prog_name="gpt2emb", standalone_mode=False)
    # what the run made is freed by the process's end: frozen, no collection at exit goes over it again (a
    # tenth of a warm query's own work); in-process runs (tests, notebooks) call App.main, which does not
    gc.freeze()
    sys.exit(code)
