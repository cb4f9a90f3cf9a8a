"""Project exceptions: each carries the exit code and a message that names the problem and the fix."""

from __future__ import annotations

import contextvars
import os
import re
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1  # unexpected failure (a bug: please report it)
    USAGE = 2  # bad option, argument or word
    UNKNOWN_MODEL = 3  # a model name that is not in the registry, not a repo id, not a folder
    NOT_CACHED = 4  # offline and the model has never been fetched
    NETWORK = 5  # the Hub could not be reached or answered with an error
    # a model gpt2emb cannot use as it is: a type it does not read, files that disagree with each other
    # or with the Hub's figures (sizes --verify), a damaged cache entry, or one that cache clear could not
    # remove (in use)
    BAD_MODEL = 6
    SOME_FAILED = 7  # words from stdin: some lines had no answer (each reported on stderr), the rest did
    OUTPUT = 8  # stdout could not be written (a full disk, an I/O error): what was printed is incomplete
    INTERRUPTED = 130


# True while a command runs (cli/root.py sets it): a message names an option as the command line spells it
# (-k/--top, --pool mean), else as the Python handle's parameter (k, pool='mean')
COMMAND_LINE = contextvars.ContextVar("gpt2emb_command_line", default=False)
_FLAGS = {"k": "-k/--top", "out": "-o", "fmt": "--format"}  # the others: --name, _ as -


def option(name: str, value: object = None) -> str:
    """An option named in a message, as the user gave it: `-k/--top`, `--pool mean`, `--exact` on the
    command line; `k`, `pool='mean'`, `exact=True` from Python. name: the handle's parameter; value: the
    value to show with it, as given (True: a flag)."""
    if not COMMAND_LINE.get():
        given = os.fspath(value) if isinstance(value, os.PathLike) else value  # 'a/b', not PosixPath('a/b')
        return name if value is None else f"{name}={given!r}"
    flag = _FLAGS.get(name, "--" + name.replace("_", "-"))
    if value is None or value is True:
        return flag
    typed = str(value)
    return f"{flag} {typed if typed.isprintable() else repr(typed)}"


def spelt(typed: str, in_python: str) -> str:
    """What a message says in the command line's words, or in the Python handle's."""
    return typed if COMMAND_LINE.get() else in_python


class Gpt2embError(Exception):
    """A failure the user can act on; the message is shown as it is, on one line."""

    code: ExitCode = ExitCode.ERROR
    kind = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(Gpt2embError):
    code = ExitCode.USAGE
    kind = "usage"


class WrongType(UsageError, TypeError):
    """A parameter of the Python handle given a value of the wrong type. A TypeError, as Python's own are,
    and a UsageError too (exit 2), so that `except gpt2emb.Gpt2embError` still catches every refusal."""


class UnknownModel(Gpt2embError):
    code = ExitCode.UNKNOWN_MODEL
    kind = "unknown_model"


class NotCached(Gpt2embError):
    code = ExitCode.NOT_CACHED
    kind = "not_cached"


class NetworkError(Gpt2embError):
    code = ExitCode.NETWORK
    kind = "network"


class BadModel(Gpt2embError):
    code = ExitCode.BAD_MODEL
    kind = "bad_model"


def error_for(code: int, message: str) -> Gpt2embError:
    """The project exception that exits with this code (for a failure reported after other results)."""
    kinds = (UsageError, UnknownModel, NotCached, NetworkError, BadModel)
    return next((k(message) for k in kinds if k.code == code), Gpt2embError(message))


class InUse(Gpt2embError):
    """Cache entries that could not be removed: on Windows, a file that a program maps or holds open."""

    code = ExitCode.BAD_MODEL
    kind = "in_use"


class CannotWriteOutput(Gpt2embError):
    """stdout refused what was written to it (a full disk, a file past its size limit, an I/O error)."""

    code = ExitCode.OUTPUT
    kind = "output"


class ReaderGone(Exception):
    """stdout's reader has closed the pipe (`| head`): the run ends quietly, with success. Not an OSError:
    rich, click and Typer each catch a BrokenPipeError their own way (exit 1, nothing said)."""


class DamagedEntry(BadModel):
    """A cache entry whose bytes no longer match the checksums written with it."""

    kind = "damaged_cache"


# what Python makes of a byte that is not UTF-8 (surrogateescape: byte 0xff is U+DCFF), and any other lone
# surrogate (Windows' command line is UTF-16, whose halves can come unpaired): no character, and no tokenizer
# takes it, nor JSON holds it
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def not_unicode(text: str) -> str | None:
    """Why a str is no Unicode text (its first lone surrogate), or None."""
    found = LONE_SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"it holds U+{ord(found.group()):04X}, a lone surrogate (Python's stand-in for a byte that is not "
        "UTF-8); decode the bytes as UTF-8 first"
    )
