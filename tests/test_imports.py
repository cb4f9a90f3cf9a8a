import functools
import gc
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

from conftest import COMMIT, every_command, run_cli, run_json, run_process
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, safetensors_bytes


def cosines(wte: np.ndarray, v: np.ndarray) -> np.ndarray:
    w = wte.astype(np.float64)
    result: np.ndarray = (w @ v) / (np.linalg.norm(w, axis=1) * np.linalg.norm(v))
    return result


def test_analogy_king_man_woman(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("analogy", "king", "man", "woman")
    assert doc["model"] == "gpt2" and doc["expression"] == "king - man + woman"
    first = doc["results"][0]
    assert (first["token"], first["id"], first["rank"]) == (" queen", tiny.id("queen"), 1)
    assert first["score"] == pytest.approx(1.0, abs=1e-6)
    ids = {tiny.id(w) for w in ("king", "man", "woman")}
    assert not ids & {r["id"] for r in doc["results"]}  # inputs left out by default
    scores = cosines(
        tiny.wte, tiny.wte[tiny.id("king")] - tiny.wte[tiny.id("man")] + tiny.wte[tiny.id("woman")]
    )
    for inp in doc["inputs"]:
        assert inp["score"] == pytest.approx(scores[inp["id"]], abs=1e-5)
        s = scores[inp["id"]]  # float32 against float64: rows within 1e-6 of the input may fall either side
        assert int((scores > s + 1e-6).sum()) + 1 <= inp["rank"] <= int((scores > s - 1e-6).sum()) + 1
    expected = [i for i in np.argsort(-scores, kind="stable") if i not in ids][:10]
    assert [r["id"] for r in doc["results"]] == expected


def test_analogy_keep_inputs_marks_them(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("analogy", "king", "man", "woman", "--keep-inputs", "-k", "6")
    scores = cosines(
        tiny.wte, tiny.wte[tiny.id("king")] - tiny.wte[tiny.id("man")] + tiny.wte[tiny.id("woman")]
    )
    assert [r["id"] for r in doc["results"]] == list(np.argsort(-scores, kind="stable")[:6])
    inputs = {tiny.id(w) for w in ("king", "man", "woman")}
    assert [r["input"] for r in doc["results"]] == [r["id"] in inputs for r in doc["results"]]
    assert [r["token"] for r in doc["results"][:2]] == [" queen", " woman"]
    king = next(i for i in doc["inputs"] if i["word"] == "king")
    assert doc["results"][king["rank"] - 1]["token"] == " king"  # an input's rank is its place in this list
    table = run_cli("analogy", "king", "man", "woman", "--keep-inputs", "-k", "3")
    assert '" woman" *' in table.stdout and "where the inputs rank" in table.stdout


def test_neighbors(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("neighbors", "cat", "-k", "3")
    item = doc["items"][0]
    assert item["tokens"] == [{"id": tiny.id("cat"), "token": " cat"}]
    assert [n["token"] for n in item["neighbors"]] == [" cats", " kitten", " dog"]
    scores = cosines(tiny.wte, tiny.wte[tiny.id("cat")])
    for n in item["neighbors"]:
        assert n["score"] == pytest.approx(scores[n["id"]], abs=1e-5)
    kept = run_json("neighbors", "cat", "dog", "-k", "2", "--keep-query")
    assert [n["token"] for n in kept["items"][0]["neighbors"]] == [" cat", " cats"]
    assert kept["items"][1]["word"] == "dog" and kept["items"][1]["neighbors"][0]["token"] == " dog"


@pytest.mark.parametrize(
    "args", [["neighbors", "cat", "king"], ["positions", "0-30"], ["sizes"], ["vector", "cat"], ["models"]]
)
def test_a_piped_table_has_no_padding_at_its_line_ends(hub: FakeHub, args: list[str]) -> None:
    out = run_cli(*args).stdout
    assert "─" in out and out.endswith("\n")  # a table was printed
    assert [line for line in out.split("\n") if line.endswith(" ")] == []


def test_neighbors_of_a_split_word_say_so(hub: FakeHub, tiny: Tiny) -> None:
    result = run_cli("neighbors", "gato", "-k", "2")
    assert result.exit_code == 0
    assert "splits into" in result.stderr or "splits into" in result.stdout
    doc = run_json("neighbors", "gato", "-k", "2")
    assert len(doc["items"][0]["tokens"]) > 1 and "mean" in doc["items"][0]["note"]
    strict = run_cli("neighbors", "gato", "--pool", "strict")
    assert strict.exit_code == 2 and "is not one token" in strict.stderr


def test_vector(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("vector", "king", "id:5")
    king = doc["items"][0]
    assert king["vector"] == pytest.approx(tiny.wte[tiny.id("king")].tolist())
    assert king["norm"] == pytest.approx(float(np.linalg.norm(tiny.wte[tiny.id("king")])), rel=1e-6)
    assert doc["items"][1]["tokens"][0]["id"] == 5
    table = run_cli("vector", "king", "--dims", "3")
    assert "(29 more; --full)" in table.stdout
    assert f"{tiny.wte[tiny.id('king')][0]:+.4f}" in table.stdout
    assert "more; --full" not in run_cli("vector", "king", "--full").stdout


def test_positions(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("positions", "0", "1", "2", "500")
    assert doc["positions"] == [0, 1, 2, 500]
    rows = tiny.wpe[[0, 1, 2, 500]].astype(np.float64)
    unit = rows / np.linalg.norm(rows, axis=1)[:, None]
    np.testing.assert_allclose(np.array(doc["matrix"]), unit @ unit.T, atol=1e-6)
    np.testing.assert_allclose(doc["norms"], np.linalg.norm(rows, axis=1), rtol=1e-6)
    m = doc["matrix"]
    assert m[0][1] > m[0][2] > m[0][3]  # neighbouring positions are the most alike
    assert run_json("positions", "0-3", "1023")["positions"] == [0, 1, 2, 3, 1023]
    assert "cosine similarity of position rows" in run_cli("positions", "0", "1").stdout


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("1024", "position 1024 does not exist: gpt2 learned 1,024 positions, 0 to 1023"),
        ("abc", "'abc' is not a position"),
        ("5-2", "range 5-2 runs backwards"),
        ("-1", "position -1 does not exist: positions count from 0"),  # not click's "No such option: -1"
        ("--cels", "No such option: --cels; did you mean --cells?"),  # an unknown option is still one
        ("--figure", "positions draws its figure with --png FILE"),
        ("-x", "No such option: -x"),
    ],
)
def test_bad_positions(hub: FakeHub, arg: str, message: str) -> None:
    result = run_cli("positions", arg)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_a_negative_position_is_told_before_any_model_is_opened(hub: FakeHub) -> None:
    result = run_cli("positions", "0", "-5", "--json")
    assert result.exit_code == 2 and "position -5 does not exist" in result.stderr
    assert hub.requests == []


def test_tying(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("tying")
    assert doc["tied"] is True and doc["model"] == "gpt2"
    assert [c["name"] for c in doc["checks"]] == ["config", "meta_model", "checkpoint"]
    assert all(c["passed"] for c in doc["checks"])
    assert doc["saved_params"] == tiny.wte.size
    assert "tied: the output layer reuses wte" in run_cli("tying").stdout
    assert not any(
        "model.safetensors" in r[1] and r[2] in ("", "bytes=0-") for r in hub.requests if r[0] == "GET"
    )


def test_untied_model(hub: FakeHub, tiny: Tiny) -> None:
    files = hub_files(tiny)
    files["config.json"] = json.dumps({**tiny.config, "tie_word_embeddings": False}).encode()
    files["model.safetensors"] = safetensors_bytes({**tiny.state(), "lm_head.weight": tiny.wte * 2})
    hub.repos["someone/untied"] = Repo("e" * 40, files)
    doc = run_json("tying", "-m", "someone/untied")
    assert doc["tied"] is False and doc["saved_params"] == 0
    assert [c["passed"] for c in doc["checks"]] == [False, False, False]


def test_tying_load_does_the_labs_proof(hub: FakeHub) -> None:
    doc = run_json("tying", "--load")
    loaded = doc["checks"][-1]
    assert loaded["name"] == "loaded_model" and loaded["passed"] is True and "data_ptr()" in loaded["detail"]


@pytest.mark.parametrize(
    ("code", "args"),
    [
        (2, ("neighbors", "cat", "-k", "0")),
        (2, ("neighbors", "cat", "-k", "-3")),
        (2, ("neighbors", "cat", "-k", "100000")),
        (2, ("vector", "")),
        (2, ("vector", "   ")),
        (2, ("vector", "id:-1")),
        (2, ("vector", "id:99999999")),
        (2, ("vector", "id:x")),
        (2, ("analogy", "king", "man")),
        (3, ("neighbors", "cat", "-m", "gpt2-xxl")),
        (3, ("neighbors", "cat", "-m", "someone/missing")),
        (2, ("vector", "x" * 10000)),
        (2, ("positions",)),
        (2, ("sizes", "--dtype", "int8")),
    ],
)
def test_bad_input_is_one_line_without_traceback(
    hub: FakeHub, code: int, args: tuple[str, ...], caches: dict[str, Path]
) -> None:
    plain = run_cli(*args)
    assert plain.exit_code == code, plain.output
    assert plain.stdout == "" and "Traceback" not in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1 and plain.stderr.startswith("gpt2emb: ")
    as_json = run_cli(*args, "--json")
    assert as_json.exit_code == plain.exit_code and as_json.stdout == ""
    error = json.loads(as_json.stderr)["error"]
    assert error["code"] == plain.exit_code and error["message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("neighbors", "cat", "-k", "abc"), "Invalid value for '-k' / '--top': 'abc' is not a whole number."),
        (("neighbors", "cat", "-k", "1.5"), "'1.5' is not a whole number."),
        (("neighbors", "cat", "-k", "1_0"), "'1_0' is not a whole number."),  # as id:1_0 is refused
        (("neighbors", "cat", "--restrict", "\u0665\u0660"), "is not a whole number."),  # Arabic-Indic 50
        (("vector", "king", "--dims", "0"), "Invalid value for '--dims': 0 is less than 1."),
        (("neighbors", "cat", "--pool", "MEAN"), "'MEAN' is not one of 'mean', 'first', 'strict'."),
        (("analogy", "king", "man", "woman", "--method", "x"), "'x' is not one of 'add', '3cosadd', '3cos"),
        (("sizes", "--dtype", "int8"), "'int8' is not one of 'fp32', 'fp16'."),
        (("neighbors",), "Missing argument 'WORD'."),
    ],
)
def test_option_values_are_checked_with_clear_messages(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_option_values_arrive_typed(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("neighbors", "cat", "-k", " 2", "--pool", "first", "-m", "gpt2", "-m", "small")
    assert doc["model"] == "gpt2" and doc["k"] == 2  # two names of one model: answered once
    assert doc["items"][0]["pool"] == "first"
    assert run_json("vector", "king", "--dims", "3")["items"][0]["norm"] > 0
    analogy = run_json("analogy", "king", "man", "woman", "--method", "3cosmul", "-k", "1")
    assert analogy["method"] == "3cosmul" and len(analogy["results"]) == 1


def test_offline_without_cache(hub: FakeHub, offline: None) -> None:
    result = run_cli("neighbors", "cat", "--json")
    assert result.exit_code == 4
    assert "not cached" in json.loads(result.stderr)["error"]["message"]


def test_version_and_help() -> None:
    assert run_cli("--version").stdout.strip() == f"gpt2emb {version('gpt2emb')}"
    helps = run_cli("--help").stdout
    for command in ("vector", "neighbors", "analogy", "positions", "sizes", "tying"):
        assert command in helps
        assert "Examples:" in run_cli(command, "--help").stdout


def test_real_process_end_to_end_then_offline(hub: FakeHub, tiny: Tiny) -> None:
    first = run_process("analogy", "king", "man", "woman", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["results"][0]["token"] == " queen"
    assert first.stderr == ""  # nothing on stderr when piped: no progress bars
    hub.requests.clear()
    again = run_process("analogy", "king", "man", "woman", "--json", env={"HF_HUB_OFFLINE": "1"})
    assert again.returncode == 0 and again.stdout == first.stdout
    assert hub.requests == []
    table = run_process("neighbors", "cat", env={"COLUMNS": "120"})
    assert table.returncode == 0 and '" cats"' in table.stdout and "\x1b[" not in table.stdout
    module = subprocess.run([sys.executable, "-m", "gpt2emb", "--version"], capture_output=True, text=True)
    assert module.stdout.strip() == f"gpt2emb {version('gpt2emb')}"


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
    *("bpe", "candidates", "choices", "contract", "errors", "limits", "measures", "ops"),
    *(
        "registry",
        "report",
        "tokens",
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
    """cli.root.App.get_command looks for a command in the stem named as it, or in the one ELSEWHERE names:
    every command the app lists is found so (a run of it imports that stem's module alone), and nothing else
    is a command."""
    import typer

    from gpt2emb.cli import app
    from gpt2emb.cli.root import ELSEWHERE, STEMS

    group = typer.main.get_command(app)
    context = typer.Context(group)
    names = group.list_commands(context)  # type: ignore[attr-defined]
    assert {"neighbors", "analogy", "vector", "cache", "sizes", "models", "input", "context"} <= set(names)
    for name in names:
        assert ELSEWHERE.get(name, name) in STEMS, f"{name}: say in ELSEWHERE which stem holds it"
    assert set(ELSEWHERE) <= set(names) and set(ELSEWHERE.values()) <= set(STEMS)
    for name in ("text", "neighbor", "list", "main"):
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


def test_similarity(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("similarity", "cat", "cats", "dog")
    assert [i["word"] for i in doc["items"]] == ["cat", "cats", "dog"]
    rows = tiny.wte[[tiny.id("cat"), tiny.id("cats"), tiny.id("dog")]].astype(np.float64)
    unit = rows / np.linalg.norm(rows, axis=1)[:, None]
    np.testing.assert_allclose(np.array(doc["matrix"]), unit @ unit.T, atol=1e-6)
    assert doc["matrix"][0][1] > doc["matrix"][0][2]  # cat is closer to cats than to dog
    table = run_cli("similarity", "cat", "cats", "dog")
    assert table.exit_code == 0 and '" cats"' in table.stdout and "0.989" in table.stdout
    # a column is headed by the text its word's tokens spell, as the rows show them: cat is " cat", id:N is N
    ids = run_cli("similarity", "cat", f"id:{tiny.id('cat')}")
    assert ids.stdout.count('" cat"') == 4  # both headers and both rows
    one = run_cli("similarity", "cat")
    assert one.exit_code == 2 and "at least two words" in one.stderr


def test_models_and_cache_management(hub: FakeHub, caches: dict[str, Path]) -> None:
    before = run_json("models")
    names = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "distilgpt2", "roberta-base", "roberta-large"]
    assert [m["name"] for m in before["models"]] == names
    assert not any(m["cached"] for m in before["models"])
    assert run_json("cache", "list")["entries"] == []
    assert run_json("cache", "path")["path"] == str(caches["cache"])
    assert run_cli("cache", "path").stdout.strip() == str(caches["cache"])
    run_json("neighbors", "cat")
    listed = run_json("cache", "list")
    (entry,) = listed["entries"]
    assert entry["name"] == "gpt2" and entry["repo"] == "openai-community/gpt2" and entry["commit"] == COMMIT
    assert entry["bytes"] == sum(f.stat().st_size for f in Path(entry["path"]).iterdir())
    assert [m["cached"] for m in run_json("models")["models"]] == [True] + [False] * (len(names) - 1)
    assert "1 entry," in " ".join(run_cli("cache", "list").stdout.split())
    assert run_json("cache", "clear", "xl")["entries"] == []  # another model: nothing removed
    cleared = run_json("cache", "clear", "small")
    assert [e["commit"] for e in cleared["entries"]] == [COMMIT] and cleared["total_bytes"] == entry["bytes"]
    assert run_json("cache", "list")["entries"] == [] and not Path(entry["path"]).exists()
    run_json("neighbors", "cat")  # fetched again on the next use
    assert len(run_json("cache", "clear")["entries"]) == 1


def test_position_heatmap(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("positions", "--heatmap", "--cells", "4")
    assert doc["n_positions"] == 1024 and doc["block"] == 256 and doc["png"] is None
    unit = tiny.wpe / np.linalg.norm(tiny.wpe, axis=1)[:, None]
    full = unit.astype(np.float64) @ unit.T.astype(np.float64)
    expected = full.reshape(4, 256, 4, 256).mean(axis=(1, 3))
    np.testing.assert_allclose(np.array(doc["matrix"]), expected, atol=1e-6)
    table = run_cli("positions", "--heatmap")
    assert table.exit_code == 0 and "each cell averages 32 x 32 positions" in table.stdout
    assert (
        len([line for line in table.stdout.splitlines() if "▓" in line or "█" in line]) >= 32
    )  # the diagonal
    assert run_cli("positions", "0", "--heatmap").exit_code == 2
    assert run_cli("positions", "--heatmap", "--cells", "1").exit_code == 2


def test_position_figure(hub: FakeHub, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "wpe.png"
    doc = run_json("positions", "--png", str(target))
    assert doc["png"] == str(target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 20_000


def test_position_figure_without_matplotlib(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [plot] extra were not installed
    result = run_cli("positions", "--png", str(tmp_path / "x.png"))
    assert result.exit_code == 2 and 'pip install "gpt2emb[plot]"' in result.stderr
    assert hub.requests == []  # said before anything was fetched


def test_models_side_by_side(hub: FakeHub, tiny: Tiny) -> None:
    other = Tiny(tiny.tokenizer, tiny.config, tiny.wte.copy(), tiny.wpe, tiny.blocks)
    rng = np.random.default_rng(5)
    other.wte[tiny.id("kitten")] = rng.normal(0, 1, tiny.wte.shape[1])  # kitten is no longer like cat
    hub.repos["someone/other"] = Repo("b" * 40, hub_files(other))
    doc = run_json("neighbors", "cat", "dog", "-k", "5", "-m", "gpt2", "-m", "someone/other")
    assert doc["models"] == ["gpt2", "someone/other"]
    first, second = ([n["token"] for n in r["items"][0]["neighbors"]] for r in doc["results"])
    assert " kitten" in first and " kitten" not in second
    (cat, dog) = doc["overlap"]
    assert cat["query"] == "cat" and cat["models"] == ["gpt2", "someone/other"] and dog["query"] == "dog"
    assert cat["shared"] == len(set(first) & set(second)) == len(cat["tokens"]) < 5
    single = run_json("neighbors", "cat", "-k", "5")
    assert single["items"] == doc["results"][0]["items"][:1]  # one model: the plain shape, unchanged
    table = run_cli("analogy", "king", "man", "woman", "-m", "gpt2", "-m", "someone/other", "-k", "3")
    assert table.exit_code == 0 and "side by side" in table.stdout and "share" in table.stdout
    assert run_cli("analogy", "--eval", "x.txt", "-m", "gpt2", "-m", "xl").exit_code == 2


def test_help_shows_every_option_text_whole() -> None:
    """Rich markup must not eat anything: `needs "gpt2emb[plot]"` once showed as `needs "gpt2emb"`."""
    commands = every_command()
    assert len(commands) > 8
    for path, command in commands:
        shown = " ".join(run_cli(*path, "--help").stdout.replace("│", " ").split())
        for param in command.params:
            text = getattr(param, "help", None)
            if text:
                assert " ".join(text.replace("\\[", "[").split()) in shown, (path, text)


@pytest.mark.parametrize("args", [(), ("cache",)])
def test_no_command_shows_the_help_and_nothing_else(args: tuple[str, ...]) -> None:
    result = run_process(*args)
    assert result.returncode == 2 and "Usage: gpt2emb" in result.stdout + result.stderr
    assert "gpt2emb: " not in result.stderr  # no empty error line after the help


@pytest.mark.parametrize(
    ("args", "named", "without"),
    [
        (["analogy", "king", "man", "woman", "--rule", "bare", "--errors"], "--rule, --errors", 4),
        (["analogy", "--eval", "Q", "-k", "3", "--keep-inputs"], "-k/--top, --keep-inputs", 3),
        (["analogy", "--eval", "Q", "--exact", "--pool", "first"], "--exact, --pool", 3),
        (["similarity", "cat", "dog", "--ignore-case"], "--ignore-case", 3),
        (["similarity", "cat", "dog", "--rule", "space"], "--rule", 3),  # the default, given: still nothing
        (["similarity", "--eval", "P", "--pool", "strict"], "--pool", 3),
    ],
)
def test_an_option_that_would_change_nothing_is_refused(
    hub: FakeHub, tmp_path: Path, args: list[str], named: str, without: int
) -> None:
    files = {"Q": tmp_path / "q.txt", "P": tmp_path / "p.tsv"}
    files["Q"].write_text(": capital\nking man queen woman\n")
    files["P"].write_text("cat\tdog\t7\nking\tqueen\t8\n")
    args = [str(files[a]) if a in files else a for a in args]
    result = run_cli(*args)
    assert result.exit_code == 2
    assert f"gpt2emb: {named} would change nothing" in result.stderr
    assert hub.requests == []  # refused before anything was fetched
    assert run_cli(*args[:without]).exit_code == 0  # without them, the same command answers


def test_png_needs_a_file_name(hub: FakeHub) -> None:
    for name in ("", "  "):
        result = run_cli("positions", "--png", name)
        assert result.exit_code == 2 and "--png needs a file name" in result.stderr
    assert hub.requests == []


def test_a_word_of_white_space_is_quoted_in_its_title(hub: FakeHub) -> None:
    spaces = run_cli("vector", "--exact", "  ")
    assert spaces.exit_code == 0 and '\n"  " in gpt2: ' in "\n" + spaces.stdout
    assert "\nking in gpt2: " in "\n" + run_cli("vector", "king").stdout  # a plain word as typed
