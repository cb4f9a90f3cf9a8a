"""Cross-cutting: what a run imports and makes. --help, --version, sizes and completion import nothing heavy;
a warm query imports its own stem only, never torch; each command is found in its own stem, and a run makes
its command alone."""

import functools
import gc
import os
import subprocess
import sys

import pytest

from conftest import run_cli
from fakehub import FakeHub

PROBE = """
import atexit, sys
def report():
    heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'numpy', 'tokenizers',
                                                              'pydantic'})
    sys.stderr.write('MODULES=' + ','.join(heavy) + '\\n')
atexit.register(report)
sys.argv = ['gpt2emb'] + sys.argv[1:]
from gpt2emb.cli import main
main()
"""


def imported(*args: str, env: dict[str, str] | None = None) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    line = next(x for x in proc.stderr.splitlines() if x.startswith("MODULES="))
    return {m for m in line.removeprefix("MODULES=").split(",") if m}


def test_light_commands_import_nothing_heavy(hub: FakeHub) -> None:
    assert imported("--help") == set()
    assert imported("--version") == set()
    assert imported("sizes") == set()
    assert imported("neighbors", "--help") == set()
    completion = {
        "_GPT2EMB_COMPLETE": "complete_bash",
        "COMP_WORDS": "gpt2emb neighbors -m x",
        "COMP_CWORD": "3",
    }
    assert imported(env=completion) == set()


def test_warm_lookup_never_imports_torch(hub: FakeHub) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0  # builds the cache
    assert imported("neighbors", "cat", "--json") == {"numpy"}  # a single-token word needs no tokenizer
    assert imported("analogy", "king", "man", "woman") == {"numpy"}
    assert imported("neighbors", "gato") == {"numpy"}  # split by gpt2emb's own BPE (bpe.py)
    assert imported("neighbors", "gatö") == {"numpy"}
    assert imported("neighbors", "猫") == {"numpy", "tokenizers"}  # a script bpe.py leaves to the library


STEM_PROBE = """
import atexit, sys
def report():
    ours = sorted(m for m in sys.modules if m.startswith("gpt2emb."))
    third = {m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"gpt2emb"}
    third = sorted(m for m in third if m[0] != "_")  # not _distutils_hack, which a .pth file loads
    sys.stderr.write("OURS=" + ",".join(ours) + "\\nTHIRD=" + ",".join(third) + "\\n")
atexit.register(report)
sys.argv = ["gpt2emb"] + sys.argv[1:]
from gpt2emb.cli import main
main()
"""
# What a warm word command imports: what every command shares, and its own stem (cli.neighbors,
# core.neighbors, results.neighbors, output.views.neighbors), never another stem's cli, core, results or
# views (cli/root.py imports the stem named by the command alone). A new import fails here.
WARM_SHARED = {
    *("bpe", "candidates", "choices", "errors", "kept", "limits", "measures", "ops", "stems"),
    *(
        "registry",
        "report",
        "tokens",
        *("queries", "quoting", "tokenizer_library", "word_lists"),  # what was tokens.py (issue 58)
        "piece_lines",
        "core",
        "core.open",
        "core.words",
        "results",
        "results.common",
    ),
    *("output", "output.console", "output.layout", "output.progress", "output.streams"),
    *("output.views", "cli", "cli.root", "cli.options", "cli.stdin"),
    *("store", "store.build", "store.entries", "store.hub", "store.revisions", "families", "families.gpt2"),
}
WARM_OWN = {  # views.words: what the views of neighbors and analogy share
    "neighbors": {"cli.neighbors", "core.neighbors", "results.neighbors", "output.views.neighbors"}
    | {"output.views.words"},
    "vector": {"cli.vector", "core.vector", "results.vector", "output.views.vector"},
    "analogy": {
        "cli.analogy",
        "core.analogy",
        "sums",
        "results.analogy",
        "output.views.analogy",
        "output.views.words",
    },
}
WORD_STEMS = ("vector", "neighbors", "analogy", "similarity")
WARM_THIRD_PARTY = {"annotated_doc", "numpy", "rich", "shellingham", "typer"}


@pytest.mark.parametrize(
    "args", [["neighbors", "cat"], ["vector", "cat"], ["analogy", "king", "man", "woman"]]
)
def test_a_warm_word_command_imports_its_own_stem_only(hub: FakeHub, args: list[str]) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0  # builds the cache
    proc = subprocess.run([sys.executable, "-c", STEM_PROBE, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    found = dict(
        line.split("=", 1) for line in proc.stderr.splitlines() if line.startswith(("OURS=", "THIRD="))
    )
    ours = {m.removeprefix("gpt2emb.") for m in found["OURS"].split(",")}
    others = {
        f"{layer}.{s}"
        for s in WORD_STEMS
        if s != args[0]
        for layer in ("cli", "core", "results", "output.views")
    }
    assert ours & (others | {"core.compare", "results.compare", "output.views.compare"}) == set()
    expected = WARM_SHARED | WARM_OWN[args[0]]
    assert ours == expected, f"imported beyond the expected: {ours - expected}; not: {expected - ours}"
    numpys = {m.split(".")[0] for m in numpys_own()} - {"numpy"}  # numpy 1.26 brings cython_runtime
    assert set(found["THIRD"].split(",")) - numpys == WARM_THIRD_PARTY


@pytest.mark.parametrize(
    ("stem", "lines"),
    [
        ("neighbors", "cat\ndog"),
        ("vector", "cat\ndog"),
        ("analogy", "king man woman"),
        ("similarity", "cat\ndog"),
    ],
)
def test_a_word_command_reading_stdin_imports_its_own_stem_only(hub: FakeHub, stem: str, lines: str) -> None:
    """`STEM -` answers a stream of lines with its own core's each_STEM: no other word stem is imported."""
    assert run_cli("neighbors", "cat").exit_code == 0  # builds the cache
    argv = [sys.executable, "-c", STEM_PROBE, stem, "-", "--json"]
    proc = subprocess.run(argv, input=f"{lines}\n", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    found = dict(
        line.split("=", 1) for line in proc.stderr.splitlines() if line.startswith(("OURS=", "THIRD="))
    )
    ours = {m.removeprefix("gpt2emb.") for m in found["OURS"].split(",")}
    layers = ("cli", "core", "results", "output.views")
    others = {f"{layer}.{s}" for s in WORD_STEMS if s != stem for layer in layers}
    assert ours & others == set()
    assert {"batch", f"core.{stem}", f"results.{stem}"} <= ours


MODULES_PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("MODULES=" + ",".join(sorted(sys.modules)) + "\\n"))
sys.argv = ["gpt2emb"] + sys.argv[1:]
from gpt2emb.cli import main
main()
"""
# what a warm query never needs: the heavy libraries, numpy.ma (np.unique imports it), what only a build
# uses (a checkpoint's readers, temporary folders), stdin's threads (batch); as --json, no rich nor views
NEVER_WARM = {"torch", "transformers", "tokenizers", "pydantic", "huggingface_hub", "numpy.ma", "tempfile"}
NEVER_WARM |= {f"gpt2emb.{m}" for m in ("store.checkpoint", "store.tokenizer_files", "batch", "heavy")}
# What a build uses of the store. A warm query reads no checkpoint and builds nothing.
NEVER_WARM |= {
    f"gpt2emb.store.{m}"
    for m in ("checkpoint_files", "table_rows", "whole_weights", "encoder_files", "writing", "install")
}
NEVER_AS_JSON = NEVER_WARM | {"rich", "gpt2emb.output.console", "gpt2emb.output.layout"}
NEVER_AS_JSON |= {f"gpt2emb.output.views.{stem}" for stem in ("words", *WORD_STEMS)}


@functools.cache
def numpys_own() -> frozenset[str]:
    """What `import numpy` loads by itself (numpy 1.26 imports numpy.ma; 2.x does not): not ours to avoid."""
    probe = "import sys, numpy; print(','.join(sys.modules))"
    return frozenset(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.split(",")
    )


@pytest.mark.parametrize(
    "args",
    [
        ["neighbors", "cat", "--json"],
        ["vector", "cat", "--json"],
        ["analogy", "king", "man", "woman", "--json"],
        ["neighbors", "cat"],
        ["analogy", "king", "man", "woman"],
    ],
)
def test_a_warm_query_imports_nothing_it_does_not_use(hub: FakeHub, args: list[str]) -> None:
    assert run_cli("neighbors", "cat").exit_code == 0  # builds the cache
    proc = subprocess.run([sys.executable, "-c", MODULES_PROBE, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("MODULES="))
    modules = set(line.removeprefix("MODULES=").split(","))
    never = (NEVER_AS_JSON if "--json" in args else NEVER_WARM) - numpys_own()
    assert {m for m in modules - numpys_own() if m in never or m.split(".")[0] in never} == set()
    assert "rich" in modules or "--json" in args  # a table is rich's
    assert sorted(m for m in modules if m.startswith("gpt2emb.families.")) == ["gpt2emb.families.gpt2"]


def test_only_the_console_script_tunes_the_collector() -> None:
    """gpt2emb.cli.main raises the collector's threshold for its own process and freezes what it made before
    it exits; importing gpt2emb.cli (tests, notebooks, the whole app) leaves the collector as it was."""
    code = (
        "import atexit, gc, sys; import gpt2emb.cli; from gpt2emb.cli import app; "
        "before = gc.get_threshold()[0]; "
        "atexit.register(lambda: sys.stderr.write("
        "f'GC={before},{gc.get_threshold()[0]},{gc.get_freeze_count() > 0}\\n')); "
        "sys.argv = ['gpt2emb', 'sizes', '--json']; gpt2emb.cli.main()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"GC={gc.get_threshold()[0]},100000,True" in proc.stderr  # this Python's default before: 700, 2000


def test_each_command_is_found_in_its_own_stem() -> None:
    """cli.root.App.get_command looks for a command in the stem named as it, or in the stem whose declaration
    (gpt2emb/commands/STEM.py) holds it: every command the app lists is found so (a run of it imports that
    stem's module alone), in the declarations' order, and nothing else is a command."""
    import typer

    from gpt2emb import commands
    from gpt2emb.cli import app

    group = typer.main.get_command(app)
    context = typer.Context(group)
    names = group.list_commands(context)  # type: ignore[attr-defined]
    assert {"neighbors", "analogy", "vector", "cache", "sizes", "models", "input", "context"} <= set(names)
    assert names == [c.name for c in commands.commands() if " " not in c.name]
    for name in names:
        stem = commands.stem_of(name)
        assert stem is not None and name in [c.name for c in commands.stem(stem).commands]
    for name in ("text", "neighbor", "list", "main", "options", "root", "a.b"):
        assert group.get_command(context, name) is None  # type: ignore[attr-defined]


def test_the_warm_commands_annotations_are_objects_not_strings() -> None:
    """cli/vector.py, neighbors.py, analogy.py, similarity.py and cli/root.py hold no `from __future__ import
    annotations`: Typer would evaluate each annotation string of the command it makes twice on every run."""
    from gpt2emb.cli import analogy, neighbors, similarity, vector
    from gpt2emb.cli.root import _root

    commands = [vector.vector, neighbors.neighbors, analogy.analogy, similarity.similarity, _root]
    for command in commands:
        assert command.__annotations__, command
        strings = [name for name, kind in command.__annotations__.items() if isinstance(kind, str)]
        assert strings == [], (command.__name__, strings)


COUNTING = """
import atexit, gc, sys
from typer.core import TyperCommand, TyperGroup
def count():
    gc.unfreeze()  # the console script froze what the run made: gc.get_objects leaves the frozen out
    made = [o for o in gc.get_objects() if isinstance(o, TyperCommand | TyperGroup)]
    commands = sum(not isinstance(o, TyperGroup) for o in made)
    sys.stderr.write(f"COMMANDS={commands}\\n")
atexit.register(count)
sys.argv = ["gpt2emb"] + sys.argv[1:]
from gpt2emb.cli import main
main()
"""


@pytest.mark.parametrize(
    ("args", "made"),
    [
        (["neighbors", "--help"], 1),
        (["lab", "--help"], 1),
        (["sizes", "--json"], 2),
        (["cache", "list", "--help"], 5),
    ],
)
def test_a_command_run_makes_its_command_alone(args: list[str], made: int) -> None:
    """A run makes the command it runs and no other (with the others of its stem's module: sizes and models;
    the cache group's five), counted as the command objects alive at its end."""
    proc = subprocess.run([sys.executable, "-c", COUNTING, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"COMMANDS={made}" in proc.stderr.splitlines()
    whole = subprocess.run([sys.executable, "-c", COUNTING, "--help"], capture_output=True, text=True)
    assert int(whole.stderr.split("COMMANDS=")[1]) >= 19  # --help lists every command: all are made


def test_input_imports_no_torch(hub: FakeHub) -> None:
    """Nor the tokenizers library, for a text of the scripts gpt2emb's own BPE answers (see bpe.py)."""
    text = "O Brasil é gigante"
    assert run_cli("input", text).exit_code == 0  # builds the cache
    assert imported("input", text, "--json") == {"numpy"}
    assert imported("input", text) == {"numpy"}
    assert imported("input", "東京 " + text) == {"numpy", "tokenizers"}  # not those scripts: the library
