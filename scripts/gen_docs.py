"""The docs' generated parts, made by the app itself, and every example of the docs run.

- Each command page's reference: `gpt2emb COMMAND --help` at 100 columns, between `<!-- help:COMMAND -->` and
  `<!-- /help -->`.
- Each ```console block: every `$ command` line is run and what it prints is written below it. The commands
  run in-process, in a fresh folder and cache for each page, in the page's order, where `./tiny-gpt2` is the
  model docs/examples/tiny_gpt2.py builds and `docs/examples/` holds the files the examples read; the names
  of the Hub's GPT-2s (gpt2, xl, ...) are that model too, served by a loopback fake Hub (tests/fakehub.py).
- ```sh lines and ```python blocks are run but print nothing into the page (tests/test_docs.py checks their
  exit codes). A ```pycon block is a Python session: each `>>>` statement's output is written below it.

    python scripts/gen_docs.py            # rewrite every page whose generated parts changed
    python scripts/gen_docs.py --check    # name the pages that drifted, exit 1 if any
"""

from __future__ import annotations

import code
import contextlib
import io
import json
import os
import re
import runpy
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
TINY = "tiny-gpt2"
PLAIN = {"COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb", "GPT2EMB_CACHE_DIR": "cache"}
HELP_COLUMNS = "100"
# the Hub names the examples may use, each served as the tiny GPT-2 (the chapter's models, by their repos)
GPT2_REPOS = (
    "openai-community/gpt2",
    "openai-community/gpt2-medium",
    "openai-community/gpt2-large",
    "openai-community/gpt2-xl",
    "distilbert/distilgpt2",
)
COMMIT = "0123456789abcdef0123456789abcdef01234567"
sys.path.insert(0, str(ROOT / "tests"))


def pages() -> list[Path]:
    """The README and every Markdown page of docs/ (docs/schema holds JSON only)."""
    return [README, *sorted(DOCS.rglob("*.md"))]


# --- the app: its commands and their help ----------------------------------------------------------------


def commands() -> list[str]:
    """Every command, read from the app in the order --help lists them; a group's as `cache list`, ..."""
    import typer

    from gpt2emb.cli import app

    def names(command: Any, path: list[str]) -> list[str]:
        if not isinstance(command, typer.core.TyperGroup):  # a command, not a group of them
            return [" ".join(path)]
        context = typer.Context(command)
        listed = command.list_commands(context)
        return [n for name in listed for n in names(command.get_command(context, name), [*path, name])]

    return names(typer.main.get_command(app), [])


def invoke(args: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[str, int]:
    """What `gpt2emb ARGS` prints (stdout and stderr as a terminal shows them) and its exit code, run
    in-process through the app's own error boundary. `-` reads `stdin` from a descriptor of its own, as
    `< file` gives it."""
    from typer.testing import CliRunner

    from gpt2emb.cli import app

    with tempfile.TemporaryFile() as source:
        source.write(stdin)
        source.flush()

        def descriptor(*_: Any) -> int:
            return os.open(f"/proc/self/fd/{source.fileno()}", os.O_RDONLY)

        with mock.patch("gpt2emb.cli.stdin.descriptor", descriptor):
            result = CliRunner().invoke(app, args, env=env, prog_name="gpt2emb")
    return result.output, result.exit_code


def help_text(command: str) -> str:
    out, _ = invoke([*command.split(), "--help"], {**PLAIN, "COLUMNS": HELP_COLUMNS})
    return "\n".join(line.rstrip() for line in out.splitlines()).strip("\n")


def with_commands(text: str) -> str:
    """text, a `<!-- commands -->` ... `<!-- /commands -->` part holding the table of every command at the top
    level, each with its page and what it shows, as its stem declares them (gpt2emb/commands/STEM.py)."""
    from gpt2emb import commands

    rows = [
        f"| [{c.name}](commands/{c.name}.md) | {c.shows} |" for c in commands.commands() if " " not in c.name
    ]
    table = "\n".join(["| command | what it shows |", "| --- | --- |", *rows])
    return re.sub(
        r"<!-- commands -->\n.*?<!-- /commands -->",
        lambda _: f"<!-- commands -->\n{table}\n<!-- /commands -->",
        text,
        flags=re.DOTALL,
    )


def with_help(text: str) -> str:
    """text, each `<!-- help:COMMAND -->` ... `<!-- /help -->` part holding that command's --help now."""

    def fill(m: re.Match[str]) -> str:
        return f"{m.group(1)}\n```\n{help_text(m.group(2))}\n```\n<!-- /help -->"

    return re.sub(r"(<!-- help:([a-z ]+) -->)\n.*?<!-- /help -->", fill, text, flags=re.DOTALL)


# --- a workspace: the folder, model and Hub the examples run in -------------------------------------------


@dataclass
class Workspace:
    """A fresh folder (the current directory while it is open) holding ./tiny-gpt2 and docs/examples/, a
    cache of its own, and the fake Hub serving the tiny model under the GPT-2 repos."""

    hub: Any
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="gpt2emb-docs-")))
    codes: list[int] = field(default_factory=list)  # each command's exit code, in page order
    namespace: dict[str, Any] = field(default_factory=dict)  # the page's Python blocks and sessions share it

    @contextlib.contextmanager
    def opened(self) -> Iterator[Workspace]:
        from huggingface_hub import constants

        from fakehub import Repo
        from tinymodel import build, hub_files, save_local

        tiny = build()
        save_local(tiny, self.folder / TINY)
        shutil.copytree(EXAMPLES, self.folder / "docs" / "examples")
        for repo in GPT2_REPOS:
            self.hub.repos[repo] = Repo(COMMIT, hub_files(tiny))
        env = {**PLAIN, "HF_HUB_CACHE": str(self.folder / "hf")}
        before = os.getcwd()
        with (
            mock.patch.dict(os.environ, env),
            mock.patch.object(constants, "HF_HUB_CACHE", env["HF_HUB_CACHE"]),
            mock.patch.object(constants, "HF_HUB_OFFLINE", False),
        ):
            os.chdir(self.folder)
            try:
                yield self
            finally:
                os.chdir(before)
                shutil.rmtree(self.folder, ignore_errors=True)

    def shell(self, line: str) -> str:
        """What a console line prints: `gpt2emb ...` (with `< FILE`, `> FILE`, or `printf '...' |` before
        it), `echo $?`, or `python docs/examples/NAME.py ...`."""
        if line == "echo $?":
            return f"{self.codes[-1]}\n"
        words = words_of(line)
        if words[0] == "python":
            return self.script(words[1:])
        stdin = b""
        if words[0] == "printf" and words[2] == "|":
            stdin = words[1].encode().decode("unicode_escape").encode("utf-8")
            words = words[3:]
        target = None
        if "<" in words:
            at = words.index("<")
            stdin, words = Path(words[at + 1]).read_bytes(), words[:at] + words[at + 2 :]
        if ">" in words:
            at = words.index(">")
            target, words = Path(words[at + 1]), words[:at] + words[at + 2 :]
        if words[0] != "gpt2emb" or {"|", ";", "&&"} & set(words) or "--install-completion" in words:
            raise ValueError(f"not a command the docs can run: {line}")
        out, code_ = invoke(words[1:], dict(os.environ), stdin)
        self.codes.append(code_)
        if target is not None:
            target.write_text(out)
            return ""
        return out

    def script(self, words: list[str]) -> str:
        printed = io.StringIO()
        with mock.patch.object(sys, "argv", words), contextlib.redirect_stdout(printed):
            runpy.run_path(words[0], run_name="__main__")
        self.codes.append(0)
        return printed.getvalue()

    def python(self, source: str) -> str:
        """A pycon block's session: each `>>>` statement run as the interpreter runs it, then its output; its
        exit code 1 when a statement raised (a page shows no traceback)."""
        interpreter = _Session(self.namespace)
        blocks: list[list[str]] = []
        for line in source.splitlines():
            if line.startswith(">>> "):
                blocks.append([line[4:]])
            elif line.startswith("... ") and blocks:
                blocks[-1].append(line[4:])
        out: list[str] = []
        for block in blocks:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                interpreter.runsource("\n".join(block) + ("\n" if len(block) > 1 else ""), symbol="single")
            out += [f">>> {block[0]}", *[f"... {b}" for b in block[1:]]]
            out += [line.rstrip() for line in printed.getvalue().splitlines()]
        self.codes.append(1 if interpreter.raised else 0)
        return "\n".join(out)


class _Session(code.InteractiveInterpreter):
    """The interpreter of a pycon block, which remembers whether a statement raised."""

    raised = False

    def showtraceback(self) -> None:
        self.raised = True
        super().showtraceback()

    def showsyntaxerror(self, filename: str | None = None, **kwargs: Any) -> None:
        self.raised = True
        super().showsyntaxerror(filename, **kwargs)


# what may differ between two runs of the same example: a number by BLAS rounding (1e-3 on the 3 or 4 decimals
# shown), a timing, a hash naming a local folder's files (their times and inode) or a cache entry. A number in
# exponent form (`2.3e-08`, `1e-5`) is read whole and compared relatively; below NOISE it is float32 rounding
# noise, whose digits differ between CPUs' kernels, so any two such values are alike.
TOKEN = re.compile(
    r"(?P<time>\d+\.\d+ s\b)|(?P<hash>\b[0-9a-f]{12,}\b)"
    r"|(?P<exponent>[-+]?\d+(?:\.\d+)?[eE][-+]?\d+\b)|(?P<number>[-+]?\d[\d,]*\.\d+)"
    r"|(?P<space>\s+)|(?P<text>.)",
    re.DOTALL,
)
DECIMALS = 1e-3  # absolute, on a number shown with 3 or 4 decimals
RELATIVE = 1e-3  # on a number in exponent form
NOISE = 1e-6  # an exponent-form value below it, on both sides, is rounding noise


def tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "", m.group()) for m in TOKEN.finditer(text)]


def alike(kind: str, x: str, y: str) -> bool:
    """Whether two tokens of one kind may stand for each other in an example's output."""
    if kind == "number":
        return abs(float(x.replace(",", "")) - float(y.replace(",", ""))) <= DECIMALS
    if kind == "exponent":
        a, b = float(x), float(y)
        return (abs(a) < NOISE and abs(b) < NOISE) or abs(a - b) <= RELATIVE * max(abs(a), abs(b))
    return kind != "text" or x == y


def same_output(shown: str, made: str, hashes: dict[str, str] | None = None) -> bool:
    """shown and made alike but for numbers within their tolerance, timings, hashes and column padding.

    hashes: what the page's earlier outputs have paired (each shown hash with the hash made in its place),
    so that one hash shown twice on a page stands for one hash made, and two shown hashes for two."""
    a, b = tokens(shown), tokens(made)
    pairs = dict(hashes or {})
    for (kind, x), (kind_b, y) in zip(a, b, strict=False):
        if kind != kind_b or not alike(kind, x, y):
            return False
        if kind == "hash" and pairs.setdefault(x, y) != y:
            return False
    if len(a) != len(b) or len(set(pairs.values())) != len(pairs):
        return False
    if hashes is not None:
        hashes.update(pairs)
    return True


# --- the blocks of a page --------------------------------------------------------------------------------

BLOCK = re.compile(r"^```(console|sh|python|pycon)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def console_commands(body: str) -> list[str]:
    return [line[2:] for line in body.splitlines() if line.startswith("$ ")]


def words_of(line: str) -> list[str]:
    """A shell line's words, with `|`, `;`, `&&`, `<` and `>` as words of their own."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    return list(lex)


def sh_commands(body: str) -> list[str]:
    """The gpt2emb commands of a sh block: each `&&`- or `;`-separated part of a line that starts with
    gpt2emb (or with `printf '...' |` before it), up to a `|` after it; the rest (pip, python, jq) is the
    reader's."""
    found = []
    for line in body.splitlines():
        words, part = words_of(line), []
        for word in [*words, ";"]:
            if word not in (";", "&&"):
                part.append(word)
                continue
            if part[:1] == ["printf"] and part[2:4] == ["|", "gpt2emb"]:
                head, rest = part[:3], part[3:]
            elif part[:1] == ["gpt2emb"]:
                head, rest = [], part
            else:
                head, rest = [], []
            if rest:
                end = rest.index("|") if "|" in rest else len(rest)
                shown = (w if w in ("|", "<", ">") else shlex.quote(w) for w in head + rest[:end])
                found.append(" ".join(shown))
            part = []
    return found


def generate(text: str, space: Workspace, on_command: Callable[[str, str, int], None] | None = None) -> str:
    """text with every console and pycon block's output made again in `space`, and its sh and python blocks
    run; on_command(kind, command, exit code) is told of each one run."""

    hashes: dict[str, str] = {}  # the page's shown hashes, each with the one made in its place

    def block(m: re.Match[str]) -> str:
        made = made_again(m)
        if same_output(m.group(0), made, hashes):
            return m.group(0)  # no churn from rounding or a hash
        # made again: a hash the page already shows keeps its shown spelling, so the page stays one run's
        shown_as = {y: x for x, y in hashes.items()}
        made = "".join(shown_as.get(t, t) if kind == "hash" else t for kind, t in tokens(made))
        hashes.update({t: t for kind, t in tokens(made) if kind == "hash" and t not in hashes})
        return made

    def made_again(m: re.Match[str]) -> str:
        kind, body = m.group(1), m.group(2)
        if kind == "console":
            parts, lines = [], console_commands(body)
            for command, after in zip(lines, [*lines[1:], ""], strict=True):
                out = space.shell(command)
                parts.append(f"$ {command}\n" + "\n".join(line.rstrip() for line in out.splitlines()))
                if command == "echo $?":
                    continue
                if space.codes[-1] != 0 and after != "echo $?":  # a reader must see that it failed
                    raise ValueError(f"{command} exits {space.codes[-1]}: show it with `$ echo $?` after it")
                if on_command:
                    on_command(kind, command, space.codes[-1])
            return "```console\n" + "\n".join(p.rstrip("\n") for p in parts) + "\n```"
        if kind == "sh":
            for command in sh_commands(body):
                space.shell(command)
                if on_command:
                    on_command(kind, command, space.codes[-1])
            return m.group(0)
        if kind == "python":
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                exec(compile(body, "<docs>", "exec"), space.namespace)
            if on_command:
                on_command(kind, body.splitlines()[0], 0)
            return m.group(0)
        session = space.python(body)
        if on_command:
            on_command(kind, body.splitlines()[0], space.codes[-1])
        return f"```pycon\n{session}\n```"

    text = BLOCK.sub(block, text)
    for command in inline_commands(text):
        space.shell(command)
        if on_command:
            on_command("inline", command, space.codes[-1])
    return text


def inline_commands(text: str) -> list[str]:
    """The whole commands quoted inline (`gpt2emb sizes`, as in a table), run after the page's blocks; not
    those with a placeholder (WORD, FILE) or an ellipsis, nor one that would write the shell's own startup
    file (completion)."""
    prose = BLOCK.sub("", text)
    spans = re.findall(r"`(gpt2emb [^`]+)`", prose)
    return [s for s in spans if not re.search(r"\b[A-Z]{2,}\b|\.\.\.|[\[\]]|-completion", s)]


def regenerate(page: Path, hub: Any, on_command: Callable[[str, str, int], None] | None = None) -> str:
    """The page as it is generated now: its help parts and example outputs made again."""
    text = with_commands(with_help(page.read_text(encoding="utf-8")))
    if not BLOCK.search(text) and not inline_commands(text):
        return text
    with Workspace(hub).opened() as space:
        return generate(text, space, on_command)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from fakehub import FakeHub

    hub = FakeHub().start()
    os.environ["HF_ENDPOINT"] = hub.url  # before huggingface_hub is imported
    drifted: list[Path] = []
    ran: list[str] = []
    try:
        for page in pages():
            new = regenerate(page, hub, lambda kind, command, code: ran.append(command))
            if new != page.read_text(encoding="utf-8"):
                drifted.append(page.relative_to(ROOT))
                if "--check" not in sys.argv:
                    page.write_text(new, encoding="utf-8")
        import gen_figures  # the pictures of docs/img/, drawn by the pages' --figure lines

        if "--check" not in sys.argv:
            gen_figures.make(hub)
        else:
            with tempfile.TemporaryDirectory() as folder:
                for name, data in gen_figures.make(hub, Path(folder)).items():
                    kept = json.loads((DOCS / "img" / name).with_suffix(".json").read_text())
                    if not gen_figures.same_data(kept, data):
                        drifted.append((DOCS / "img" / name).relative_to(ROOT))
    finally:
        hub.stop()
    verb = "drifted" if "--check" in sys.argv else "updated"
    print(f"{len(ran)} examples run in {len(pages())} pages")
    names = ", ".join(map(str, drifted))
    print(f"{len(drifted)} page(s) {verb}: {names}" if drifted else "all pages current")
    sys.exit(1 if drifted and "--check" in sys.argv else 0)
