"""What the word commands share: words from stdin (`-`), when it applies, reading it, and printing a batch's
answers as they come."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from gpt2emb import output
from gpt2emb.errors import ExitCode, UsageError

One = TypeVar("One")  # a model: a name as given, or resolved (registry.ModelRef)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from gpt2emb.batch import Answers, FailedLine, Line


def from_stdin(words: list[str], json: bool, jsonl: bool, strict: bool) -> bool:
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


def one_model(models: list[One], jsonl: bool = False) -> One:
    if len(models) > 1:
        raise UsageError(
            "--jsonl takes one model: its lines are one model's answers"
            if jsonl
            else "- (words from stdin) takes one model: stdin can be read only once"
        )
    return models[0]


def stdin_blocks() -> Iterator[list[Line]]:
    from gpt2emb import batch

    return batch.blocks(batch.lines(batch.chunks(descriptor("words", ", one per line"))))


def descriptor(what: str, how: str = "") -> int:
    """stdin's file descriptor, for `-`: a person at a terminal is told how to end what they type."""
    if sys.stdin is None:
        raise UsageError(f"- reads {what} from stdin, but there is no stdin")
    if sys.stdin.isatty():
        output.hint(f"reading {what} from stdin{how}; end with Ctrl-D (Ctrl-Z then Enter on Windows)")
    return sys.stdin.fileno()


def stream(answers: Answers[Any], as_json: bool, jsonl: bool, strict: bool, dims: int | None = None) -> int:
    """Print a batch's answers as they come (a table, or a JSON line, each); one JSON document of them all
    at the end with --json. A line that failed is reported on stderr, and the exit code says some did."""
    from gpt2emb import limits
    from gpt2emb.batch import FailedLine

    code: int = ExitCode.OK
    kept: list[Any] = []
    first = True
    reporter = output.reporter(True)  # with --jsonl, notes go to stderr as JSON
    for note in answers.notes if jsonl else ():  # said once, before the lines (tables: in the first)
        reporter.note(note)
    for answer in answers:
        if isinstance(answer, FailedLine):
            code = failures([answer], as_json or jsonl, strict)
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


def failures(failed: list[FailedLine], as_json: bool, strict: bool) -> int:
    """Report lines that failed, each on stderr with its number; with --strict the first ends the run."""
    for f in failed:
        output.error(f.message, f.error.kind, f.error.code, as_json, f.line.number)
        if strict:
            raise typer.Exit(f.error.code)
    return ExitCode.SOME_FAILED if failed else ExitCode.OK
