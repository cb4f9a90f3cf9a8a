"""A model's file that shrinks while gpt2emb reads it (issue 37, item 5): exit 6, "changed while being read",
never a signal (SIGBUS, when mapped rows are cut off) nor advice to save the model again as safetensors.

Each run is a real process, with the file cut at a chosen moment: just after the checkpoint is mapped, just
before it is loaded, or between a safetensors header and its rows. The moment is chosen by wrapping the
function that reads next, which then runs as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import told_changed_while_read
from tinymodel import Tiny, save_local

SCRIPT = """
import os, sys
from pathlib import Path
from gpt2emb import heavy
from gpt2emb.store import table_rows

path, when = Path(sys.argv[1]), sys.argv[2]

def cut():
    os.truncate(path, path.stat().st_size // 2)

if when == "mapped":  # the state dict is mapped; its rows are read after
    state = heavy._state
    heavy._state = lambda p: (state(p), cut())[0]
elif when == "before load":
    state = heavy._state
    heavy._state = lambda p: (cut(), state(p))[1]
else:  # between the safetensors header (read) and its rows
    embeddings = table_rows.embeddings
    table_rows.embeddings = lambda *a, **k: (cut(), embeddings(*a, **k))[1]
sys.argv = ["gpt2emb", "vector", "cat", "-m", str(path.parent)]
from gpt2emb.cli.root import main
main()
"""


@pytest.mark.parametrize(
    "weights, when", [("bin", "mapped"), ("bin", "before load"), ("safetensors", "between header and rows")]
)
def test_a_file_cut_short_while_read_is_exit_6_changed_while_being_read(
    tiny: Tiny, tmp_path: Path, weights: str, when: str
) -> None:
    folder = save_local(tiny, tmp_path / "F", weights=weights)
    name = "pytorch_model.bin" if weights == "bin" else "model.safetensors"
    said = told_changed_while_read(SCRIPT, folder, str(folder / name), when)
    assert "safetensors" not in said and "internal error" not in said
