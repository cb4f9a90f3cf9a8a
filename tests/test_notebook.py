"""In Jupyter (and IPython), a result of the Python handle displays as the table its command prints: a
notebook run by a real Jupyter kernel, its outputs against the CLI's (run in-process, at the same width)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from fakehub import FakeHub

CELLS = [
    "import gpt2emb\nm = gpt2emb.open('gpt2')",
    "m.neighbors('cat', k=3)",
    "m.vector('id:0')",
    "m.neighbors('cat', k=2, restrict=300)",
    "m.position_map(cells=4)",
    "m.neighbors('cat', k=3).items[0].neighbors[0].rank",
]


def test_a_result_displays_as_its_table_in_a_notebook(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat  # here, not at the top: Jupyter's client is half a second of every worker's collection
    from nbclient import NotebookClient

    new = nbformat.v4
    notebook = new.new_notebook(cells=[new.new_code_cell(c) for c in CELLS])  # type: ignore[no-untyped-call]
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    outputs = [cell.outputs for cell in notebook.cells[1:]]
    assert [[o.output_type for o in cell] for cell in outputs] == [["execute_result"]] * 5  # shown once
    neighbors, vector, restricted, shaded, rank = (cell[0].data for cell in outputs)
    monkeypatch.setenv("COLUMNS", "115")  # rich's width for Jupyter
    # the tables as printed, but for the blank lines after them
    assert neighbors["text/plain"] == run_cli("neighbors", "cat", "-k", "3").stdout.rstrip("\n")
    # where to see the rest: the result itself, not a command's option
    typed = run_cli("vector", "id:0").stdout
    assert "(20 more; --full)" in typed  # the tiny model's rows are 32 numbers, the table shows 12
    assert vector["text/plain"] == typed.replace("; --full", " in .vector").rstrip("\n")
    assert "<|endoftext|>" in vector["text/plain"]
    html = vector["text/html"]
    assert html.startswith("<pre") and "&lt;|endoftext|&gt;" in html and "<|endoftext|>" not in html
    assert '<span style="font-weight: bold">' in neighbors["text/html"]  # the command's styles, as HTML
    typed = run_cli("neighbors", "cat", "-k", "2", "--restrict", "300").stdout
    assert "candidates: 300 tokens (--restrict 300)" in typed
    assert restricted["text/plain"] == typed.replace("--restrict 300", "restrict=300").rstrip("\n")
    typed = run_cli("positions", "--heatmap", "--cells", "4").stdout
    assert shaded["text/plain"] == typed.rstrip("\n")
    for colour in ("#2850ff", "#dc1e1e"):  # the shades in their colours: -1 blue, +1 red
        assert f'<span style="color: {colour}' in shaded["text/html"]
    assert rank == {"text/plain": "1"}  # anything else displays as it always does


def test_in_ipython_in_a_terminal_a_result_is_printed_as_its_command_prints_it(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = "import gpt2emb; m = gpt2emb.open('gpt2'); m.similarity(['cat', 'dog', 'kitten', 'cats'])"
    ipython = Path(sys.executable).with_name("ipython")
    narrow = {"COLUMNS": "40"}  # the terminal's width: too narrow for the matrix in one part
    proc = subprocess.run(
        [str(ipython), "--colors=NoColor", "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **narrow},
        timeout=120,
    )
    monkeypatch.setenv("COLUMNS", narrow["COLUMNS"])
    typed = run_cli("similarity", "cat", "dog", "kitten", "cats").stdout
    assert "part 1 of 3" in typed
    assert typed.rstrip("\n") + "\n" in proc.stdout and "SimilarityResult(" not in proc.stdout


def test_outside_ipython_nothing_is_imported_for_it(hub: FakeHub) -> None:
    code = "import sys, gpt2emb; gpt2emb.open('gpt2'); print('IPython' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
