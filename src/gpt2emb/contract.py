"""The handle's contract: every public entry of gpt2emb.open(...) and every function of gpt2emb checks its
parameters here, by name, before any work, so a notebook gets a Gpt2embError (a WrongType, also a TypeError,
naming the parameter) and never an error from deep inside; the cores use the same checks for what both the
command line and Python hand them."""

from __future__ import annotations

import errno
import functools
import inspect
import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from gpt2emb.choices import DType, Format, Method, Pool, Rule, Table
from gpt2emb.errors import LONE_SURROGATE, UsageError, WrongType, not_unicode, option
from gpt2emb.quoting import quote
from gpt2emb.report import Reporter
from gpt2emb.word_lists import listed

if TYPE_CHECKING:
    from gpt2emb import batch


def whole(value: Any) -> Any:
    """A count given as any integer type (numpy's int64, from a computation) as a Python int; anything else
    as it is, for the check that refuses it."""
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else value


# ---------------------------------------------------------------- the handle's contract
# Every public entry of the handle (gpt2emb.open, each public method of Embeddings) checks its parameters
# here, by name, before any work: a value of the wrong type is a WrongType naming the parameter, a bad
# value a Gpt2embError, and nothing from deep inside (a tokenizer's TypeError, numpy's "truth value is
# ambiguous", an OSError of a path no system can hold) reaches a notebook. A name means one thing in every
# method, so one table holds the checks.


def shown(value: Any, n: int = 60) -> str:
    """A value as a message quotes it: its repr, cut at n characters (an array's repr can be megabytes)."""
    try:
        text = repr(value)
    except Exception:  # a repr that fails is no reason to hide the real problem
        text = f"<{type(value).__name__}>"
    return text if len(text) <= n else text[:n] + "..."


def flag(name: str, value: Any) -> bool:
    """A flag: a bool (numpy's bool too, from a computation), never a value whose truth is a guess."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise WrongType(f"{name} must be a bool (True or False), not {shown(value)}")


def count(name: str, value: Any) -> int:
    """A count: an int (any integer type: numpy's int64 too), not a bool, a float or a str; its range is
    checked where it is used."""
    value = whole(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise WrongType(f"{name} must be a whole number (an int), not {shown(value)}")


def maybe_count(name: str, value: Any) -> int | None:
    return None if value is None else count(name, value)


def text(name: str, value: Any) -> str:
    """A text or a word: a str of real characters. A lone surrogate is what Python makes of a byte that is
    not UTF-8 (os.fsdecode, surrogateescape): no tokenizer takes it, and no JSON holds it."""
    if not isinstance(value, str):
        raise WrongType(f"{name} must be a str, not {shown(value)}")
    problem = not_unicode(value)
    if problem:
        raise UsageError(f"{name} {quote(value, 40)} is not Unicode text: {problem}")
    return value


def path(name: str, value: Any) -> str | os.PathLike[str]:
    """A path, as a str or a Path (left as given), that the system can look up."""
    if not isinstance(value, str | os.PathLike) or not isinstance(os.fspath(value), str):
        raise WrongType(f"{name} must be a path (a str or a pathlib.Path), not {shown(value)}")
    reachable(option(name), os.fspath(value))
    return value


def maybe_path(name: str, value: Any) -> str | os.PathLike[str] | None:
    return None if value is None else path(name, value)


def reachable(name: str, path: str, system: bool = True) -> None:
    """Refuse a path (name: as the caller calls it) that no file can have: a NUL in it, a name that is not
    UTF-8 (every path given is written into the results, which are UTF-8 text), or (system) one too long
    for this system. The OSError or ValueError these give later names no parameter."""
    if "\0" in path:
        raise UsageError(f"{name} {quote(path, 60)} holds a NUL character, which no file name can hold")
    found = LONE_SURROGATE.search(path)
    if found:
        raise UsageError(
            f"{name} {quote(path, 60)} is not UTF-8 text (U+{ord(found.group()):04X} is Python's stand-in "
            "for a byte that is not UTF-8), and the paths given are written into the results, which are "
            "UTF-8: rename the file or folder, or link it under a UTF-8 name (ln -s)"
        )
    if not system:
        return
    try:
        os.stat(path)
    except OSError as e:  # only a path no system call can take: a missing file is for its user to say
        if e.errno == errno.ENAMETOOLONG or getattr(e, "winerror", None) in (123, 206):
            raise UsageError(
                f"{name} {quote(path, 60)} is not a path this system can use ({e.strerror}); give a "
                "shorter one"
            ) from None
    except ValueError:  # a path this platform refuses outright
        raise UsageError(f"{name} {quote(path, 60)} is not a path this system can use") from None


def reporter(name: str, value: Any) -> Reporter | None:
    """What shows notes and progress: anything with note() and progress(), as gpt2emb.report.Reporter."""
    if value is None or all(callable(getattr(value, m, None)) for m in ("note", "progress")):
        return value  # type: ignore[no-any-return]
    raise WrongType(
        f"{name} must be a Reporter (note() and progress(), as gpt2emb.report.QuietReporter() has), not "
        f"{shown(value)}"
    )


def maybe_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def texts_of(value: Any, name: str) -> list[str]:
    """Texts as the handle takes them (a str is one), each checked to be text; how many is the caller's."""
    listed = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else None
    if listed is None or not all(isinstance(v, str) for v in listed):
        raise WrongType(f"{name} are given as a str or a list of str, not {shown(value)}")
    for n, v in enumerate(listed):
        text(name if isinstance(value, str) else f"{name}[{n}]", v)
    return listed


def maybe_model(name: str, value: Any) -> str | None:
    """A model named by a module-level function: None (all), or a name or folder no file refuses."""
    if value is None:
        return None
    given = text(name, value)
    reachable(name, given, system=False)
    return given


def models_of(name: str, value: Any) -> list[str] | None:
    """Models as gpt2emb.sizes takes them: None, one name, or a list of names (each as maybe_model)."""
    if value is None:
        return None
    listed = texts_of(value, name)
    if not listed:
        raise UsageError(f"{name} is None or at least one model, not an empty list")
    for n, given in enumerate(listed):
        reachable(f"{name}[{n}]", given, system=False)
    return listed


def one_of(kind: type[Enum]) -> Callable[[str, Any], Enum]:
    return lambda name, value: choice(kind, value, name)


CHECKS: dict[str, Callable[[str, Any], Any]] = {
    **dict.fromkeys(("exact", "full", "truncate", "keep_query", "keep_inputs", "whole_words", "fold"), flag),
    **dict.fromkeys(("load", "compare", "ignore_case", "errors", "verify", "repair", "outdated"), flag),
    "k": count,
    "cells": count,
    "restrict": maybe_count,
    "limit": maybe_count,
    "among": maybe_path,
    "png": maybe_path,
    "out": path,
    "text": text,
    "word": text,
    "grad": maybe_text,
    "revision": maybe_text,
    "encoding": maybe_text,
    "model": maybe_model,
    "models": models_of,
    "file": path,
    "a": maybe_text,
    "b": maybe_text,
    "c": maybe_text,
    "positive": lambda name, value: maybe_words(value, name),
    "negative": lambda name, value: maybe_words(value, name),
    "pool": one_of(Pool),
    "method": one_of(Method),
    "fmt": one_of(Format),
    "table": one_of(Table),
    "rule": one_of(Rule),
    "dtype": one_of(DType),
    "reporter": reporter,
}  # words, questions and positions: each method's own (words_of, blocks_of, Embeddings.positions)

Checked = TypeVar("Checked")


def checked(method: Callable[..., Checked]) -> Callable[..., Checked]:
    """method, its parameters checked (and counts, flags, choices made plain) by CHECKS first, or by the check
    a stem's declaration names for a parameter CHECKS lacks (gpt2emb/commands/)."""
    signature = inspect.signature(method)
    declared = {n: c for n, c in _declared_checks().items() if n in signature.parameters}

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Checked:
        try:
            bound = signature.bind(*args, **kwargs)
        except (
            TypeError
        ) as e:  # a missing or unknown argument: Python's words, naming the method as Python does
            raise TypeError(f"{method.__qualname__}(): {e}") from None
        for name, value in bound.arguments.items():
            check = CHECKS.get(name) or declared.get(name)
            if check is not None:
                bound.arguments[name] = check(name, value)
        return method(*bound.args, **bound.kwargs)

    return call


@functools.cache
def _declared_checks() -> dict[str, Callable[[str, Any], Any]]:
    """The checks the stems declare for their own parameter names, each one of this module's (flag, ...)."""
    from gpt2emb import commands  # read when the handle is made, never by the command line

    named = commands.checks()
    unknown = {n: c for n, c in named.items() if c not in DECLARABLE}
    if unknown:
        raise ValueError(f"a stem declares checks the contract has not: {unknown}; name one of {DECLARABLE}")
    return {n: globals()[c] for n, c in named.items()}


# what a stem's declaration may name for a parameter of its own
DECLARABLE = ("flag", "count", "maybe_count", "text", "maybe_text", "path", "maybe_path")

Handle = TypeVar("Handle", bound=type)


def enforced(cls: Handle) -> Handle:
    """Every public method of the class, checked at its entry (see checked)."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, checked(member))
    return cls


def words_of(words: str | Sequence[str], name: str = "words") -> list[str]:
    """Words as the handle takes them (a str is one word), checked to be words: a notebook gets a
    Gpt2embError it can catch (a WrongType, also a TypeError, for a value that is no str), never an error
    from deep inside."""
    listed = [words] if isinstance(words, str) else list(words) if isinstance(words, Sequence) else None
    if listed is None or not all(isinstance(w, str) for w in listed):
        raise WrongType(f"{name} are given as a str or a list of str, not {shown(words)}")
    if not listed:
        raise UsageError("give at least one word")
    for n, w in enumerate(listed):
        text(name if isinstance(words, str) else f"{name}[{n}]", w)
    return listed


def maybe_words(words: str | Sequence[str] | None, name: str) -> list[str] | None:
    """words_of, None and an empty list allowed (analogy's positive and negative, gensim's negative=[])."""
    if words is None:
        return None
    empty = isinstance(words, Sequence) and not isinstance(words, str) and len(words) == 0
    return [] if empty else words_of(words, name)


def signed_words(
    a: str | None,
    b: str | None,
    c: str | None,
    positive: Sequence[str] | None,
    negative: Sequence[str] | None,
) -> list[tuple[str, str]]:
    """analogy's words from Python, as (sign, word) in the order of the sum: a, b and c (a - b + c), or the
    positive words then the negative ones (gensim's most_similar(positive, negative)), not both."""
    given = [w for w in (a, b, c) if w is not None]
    if positive is None and negative is None:
        if a is None or b is None or c is None:
            raise UsageError(
                f"give three words a, b and c (a - b + c), not {len(given)}, or the words of a sum as gensim "
                "takes them: positive=['king', 'woman'], negative=['man']"
            )
        return [("+", a), ("-", b), ("+", c)]
    if given:
        raise UsageError("give a, b and c, or positive and negative, not both")
    plus, minus = list(positive or []), list(negative or [])
    if not plus or len(plus) + len(minus) < 2:
        raise UsageError(
            "a sum takes at least one positive word and two words in all, as in positive=['king', 'woman'], "
            f"negative=['man'] (given: {len(plus)} positive, {len(minus)} negative)"
        )
    return [("+", w) for w in plus] + [("-", w) for w in minus]


Choice = TypeVar("Choice", bound=Enum)


def choice(kind: type[Choice], value: Choice | str, name: str) -> Choice:
    """An option's value as the handle takes it (the member or its name, as on the command line)."""
    choices = ", ".join(repr(m.value) for m in kind)
    if not isinstance(value, str):  # a StrEnum's member is a str too
        raise WrongType(f"{name} must be one of {choices} (a str), not {shown(value)}")
    try:
        return kind(value)
    except ValueError:
        raise UsageError(f"{value!r} is not a {name}: choose one of {choices}") from None


def blocks_of(words: Iterable[str], name: str = "words") -> Iterator[list[batch.Line]]:
    """A handle's stream of words as blocks of numbered lines, as stdin's lines come (see each_vector): a
    word that is not Unicode text fails as a line that is not UTF-8 does; an item that is no str is a
    WrongType, when the stream reaches it."""
    from gpt2emb import batch  # only streams need it: a warm command with its words imports none

    wrong = WrongType(f"{name} must be an iterable of str (a list, a file, a generator), not {shown(words)}")
    if isinstance(words, str | bytes):
        raise wrong
    try:
        items = iter(words)
    except TypeError:  # not iterable at all (a number; numpy's 0-d array)
        raise wrong from None

    def lines() -> Iterator[batch.Line]:
        for number, text in enumerate(items, 1):
            if not isinstance(text, str):
                one = "word" if name == "words" else "question"
                raise WrongType(f"{name} must hold only str, but {one} {number} is not a str: {shown(text)}")
            word = listed(text)
            if word is not None:
                problem = not_unicode(word)
                yield batch.Line(number, word, f"it is not Unicode text: {problem}" if problem else "")

    return batch.blocks(lines())
