"""Add a command in one step: every file a new command needs, each a working minimal example to fill in.

    python scripts/new_command.py NAME           # write the files, then run scripts/generate.py
    python scripts/new_command.py NAME --list    # say which files it would write, write nothing

NAME is a lowercase word that no command has yet. The example command, `gpt2emb NAME WORD...`, answers
each word's token ids and the norm of its row of wte (the mean row where a word is split), as a table or
--json. The files (docs/development.md, "Adding a command", says what to fill in):

    src/gpt2emb/commands/NAME.py       the declaration: where --help lists it, JSON modes, fuzz and warm lines
    src/gpt2emb/cli/NAME.py            the command: parse, call the core, hand the result to output.render
    src/gpt2emb/core/NAME.py           the computation: names and words in, a frozen result out
    src/gpt2emb/results/NAME.py        the result dataclasses: their fields are the JSON
    src/gpt2emb/output/views/NAME.py   the table
    tests/commands/test_NAME.py        its tests, one against an oracle computed from the tiny model's wte
    docs/commands/NAME.md              its page, with the --help part gen_docs.py fills

It edits no file that exists. scripts/generate.py, which it runs, then writes the JSON Schemas, the
completions, docs/index.md's line and the page's --help (the generated files; their tests fail until it ran).
"""

from __future__ import annotations

import keyword
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = '''"""{name}: each word's token ids and the norm of its row of wte."""

from gpt2emb.commands import JSON, Command, Stem

STEM = Stem(
    place=95,
    commands=(
        Command(
            "{name}",
            shows="each word's token ids and the norm of its row of `wte`",
            modes={{JSON: ("{Name}Result", "gpt2emb {name} WORD... --json")}},
            fuzz=(("{name}", "{{w}}"), ("{name}", "{{w}}", "{{v}}", "-m", "{{w}}")),
            warm=("{name}", "king"),  # bench/warm.py times it; tests/commands/test_schema.py runs it
        ),
    ),
)
'''

CLI = '''"""The {name} command: each word's token ids and the norm of its row of wte."""

# No `from __future__ import annotations` in this module: Typer reads a command's annotations on every
# run, and as objects they are made once, at import (tests/test_imports.py checks they are not strings).

import typer

from gpt2emb import output
from gpt2emb.cli.options import Command, Json, Model, Revision, Words
from gpt2emb.errors import ExitCode
from gpt2emb.registry import DEFAULT_MODEL

app = typer.Typer()


@app.command(
    cls=Command, epilog="Examples:\\n\\n  gpt2emb {name} king\\n\\n  gpt2emb {name} king queen --json"
)
def {name}(
    words: Words, model: Model = DEFAULT_MODEL, revision: Revision = None, json: Json = False
) -> int:
    """Each word's token ids and the norm of its row of wte (the mean row of a word split into several)."""
    from gpt2emb import registry
    from gpt2emb.core import {name} as core

    ref = registry.resolve(model, revision)
    output.render(core.{name}(ref, words, output.reporter(json)), json)
    return ExitCode.OK
'''

CORE = '''"""{name}: each word's token ids and the norm of its row of wte (the mean row of a split word)."""

from __future__ import annotations

from gpt2emb import ops
from gpt2emb.choices import Pool
from gpt2emb.core.open import Opened, open_checked, tokens_of
from gpt2emb.registry import ModelRef
from gpt2emb.report import Reporter
from gpt2emb.results.{name} import {Name}Item, {Name}Result


def {name}_in(o: Opened, words: list[str]) -> {Name}Result:
    """The answer for a model already opened (what a method of the Python handle would call)."""
    items = []
    for word in words:
        q = o.vocab.query(word, exact=False, pool=Pool.mean)
        row = ops.query_vector(o.model.wte, q)
        items.append({Name}Item(word, tokens_of(o.vocab, q), ops.norm(row)))
    o.model.check_rows(t.id for item in items for t in item.tokens)
    return {Name}Result(o.name, tuple(items))


def {name}(model: ModelRef, words: list[str], reporter: Reporter | None = None) -> {Name}Result:
    """The answer for a model named on the command line: its words checked before it is opened."""
    return {name}_in(open_checked(model, words, False, None, reporter), words)
'''

RESULTS = '''"""The result of {name}.

The JSON document of a command is its result's to_dict(), so field names here are the JSON interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt2emb.results.common import Document, Token


@dataclass(frozen=True)
class {Name}Item(Document):
    word: str  # as typed
    tokens: tuple[Token, ...]  # the tokens the word is, in order
    norm: float  # the norm of its row of wte (the mean row of its tokens)


@dataclass(frozen=True)
class {Name}Result(Document):
    model: str  # the model's name
    items: tuple[{Name}Item, ...]  # a word each, in the order given
'''

VIEW = '''"""The view of {name}: a row per word, its tokens and the norm of its row."""

from __future__ import annotations

from rich.console import RenderableType

from gpt2emb.output.layout import num, split, titled_table
from gpt2emb.output.views import view
from gpt2emb.results.{name} import {Name}Result


@view.register
def _(result: {Name}Result, dims: int | None) -> RenderableType:
    rows = [[item.word, split(item.tokens), num(item.norm)] for item in result.items]
    return titled_table(f"the norm of each word's row of wte in {{result.model}}", "word~ tokens norm>", rows)
'''

TEST = '''"""`{name} WORD...`: each word's tokens and the norm of its row, against the tiny model's wte."""

import numpy as np
import pytest

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny


def test_{name}_is_the_norm_of_the_words_row(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("{name}", "king", "id:5")
    king, five = doc["items"]
    assert [t["id"] for t in king["tokens"]] == [tiny.id("king")]
    assert king["norm"] == pytest.approx(float(np.linalg.norm(tiny.wte[tiny.id("king")])), rel=1e-6)
    assert five["norm"] == pytest.approx(float(np.linalg.norm(tiny.wte[5])), rel=1e-6)
    table = run_cli("{name}", "king")
    assert table.exit_code == 0 and f"{{king['norm']:.4f}}" in table.stdout


def test_{name}_of_an_unknown_model_is_exit_3(hub: FakeHub) -> None:
    assert run_cli("{name}", "king", "-m", "gpt2-xxl").exit_code == 3
'''

PAGE = """# gpt2emb {name}

Each word's token ids and the norm of its row of `wte` (the mean row of a word split into several tokens).

## Examples

```console
$ gpt2emb {name} king queen -m ./tiny-gpt2
```

## Reference

<!-- help:{name} -->
<!-- /help -->
"""

FILES = {
    "src/gpt2emb/commands/{name}.py": COMMANDS,
    "src/gpt2emb/cli/{name}.py": CLI,
    "src/gpt2emb/core/{name}.py": CORE,
    "src/gpt2emb/results/{name}.py": RESULTS,
    "src/gpt2emb/output/views/{name}.py": VIEW,
    "tests/commands/test_{name}.py": TEST,
    "docs/commands/{name}.md": PAGE,
}


def refusal(name: str, root: Path = ROOT) -> str | None:
    """Why NAME cannot be a new command's, or None."""
    if not re.fullmatch(r"[a-z][a-z0-9]{1,11}", name) or keyword.iskeyword(name):
        return f"{name!r}: a command's name is a lowercase word of letters and digits (2 to 12), as `norm`"
    taken = [f.format(name=name) for f in FILES if (root / f.format(name=name)).exists()]
    if taken:
        return f"{name!r} is taken: {', '.join(taken)} exists"
    return None


def write(name: str, root: Path = ROOT) -> list[str]:
    """Write the command's files under root; the paths written."""
    title = name.capitalize()
    written = []
    for pattern, template in FILES.items():
        path = root / pattern.format(name=name)
        path.write_text(template.format(name=name, Name=title), encoding="utf-8")
        written.append(pattern.format(name=name))
    return written


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    (name,) = args
    why = refusal(name)
    if why is not None:
        print(f"new_command.py: {why}", file=sys.stderr)
        return 2
    if "--list" in argv:
        print("\n".join(f.format(name=name) for f in FILES))
        return 0
    for path in write(name):
        print(f"wrote {path}")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate.py")], cwd=ROOT)
    print(f"next: fill in the files above, then pytest tests/commands/test_{name}.py")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
