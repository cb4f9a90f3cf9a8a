"""heavy.py reading a pytorch_model.bin and its one-line errors, pinned where a mutation run found them loose.

- a .bin cut short after its storages are located (the rows still to read) is a short read, exit 6, never
  SIGBUS: the rows are read with plain reads at the offsets _storage_starts finds (the existing test cuts the
  file before they are located, where the zip check answers);
- a .bin the weights-only loader refuses is named unsafe, one cut short is named damaged, one that holds no
  dict is "not a state dict", one with a storage record but no tensor is missing its table;
- a long error is quoted on one line, cut at 1,000 characters with "...";
- a safetensors file that fails for want of memory says so, not "save the model again";
- a load without a label names config.json by its path; a pickle transformers refuses is named unsafe.
"""

from __future__ import annotations

import fractions
import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpt2emb import heavy
from gpt2emb.errors import BadModel

from conftest import told_changed_while_read
from tinymodel import Tiny, save_local

SCRIPT = """
import os, sys
from pathlib import Path
from gpt2emb import heavy

path = Path(sys.argv[1])
starts = heavy._storage_starts

def cut_after(p, state):
    found = starts(p, state)
    os.truncate(path, 1000)  # every storage's rows lie past here
    return found

heavy._storage_starts = cut_after
sys.argv = ["gpt2emb", "vector", "cat", "-m", str(path.parent)]
from gpt2emb.cli.root import main
main()
"""


def test_a_bin_cut_short_after_its_storages_are_located_is_exit_6_not_a_signal(
    tiny: Tiny, tmp_path: Path
) -> None:
    folder = save_local(tiny, tmp_path / "F", weights="bin")
    told_changed_while_read(SCRIPT, folder, str(folder / "pytorch_model.bin"))


def test_a_bin_the_weights_only_loader_refuses_is_unsafe(tmp_path: Path) -> None:
    import torch

    path = tmp_path / "pytorch_model.bin"
    torch.save({"wte.weight": torch.zeros(2, 2), "x": fractions.Fraction(1, 2)}, path)
    with pytest.raises(BadModel) as caught:
        heavy._state(path)
    assert str(caught.value) == f"{path} {heavy.UNSAFE} (UnpicklingError); {heavy.SAVE_SAFELY}"


def test_a_bin_cut_short_is_damaged(tmp_path: Path) -> None:
    import torch

    path = tmp_path / "pytorch_model.bin"
    torch.save({"wte.weight": torch.zeros(64, 64)}, path)
    os.truncate(path, path.stat().st_size - 100)
    with pytest.raises(BadModel, match="is damaged: it is not a whole zip archive"):
        heavy._state(path)


def test_a_bin_that_holds_no_dict_is_not_a_state_dict(tmp_path: Path) -> None:
    import torch

    path = tmp_path / "pytorch_model.bin"
    torch.save([torch.zeros(2, 2)], path)
    with pytest.raises(BadModel) as caught:
        heavy._state(path)
    assert str(caught.value) == f"{path} is not a state dict"


def test_a_long_error_is_cut_at_1000_characters() -> None:
    assert heavy._one_line(ValueError("ab\n" * 600)) == "ValueError: " + ("ab " * 334)[:1000] + "..."
    assert heavy._one_line(ValueError("x" * 1000)) == "ValueError: " + "x" * 1000


def test_safetensors_that_fail_for_want_of_memory_say_so(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import safetensors

    folder = save_local(tiny, tmp_path / "F")
    assert (folder / "model.safetensors").is_file()

    def no_memory(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(safetensors, "safe_open", no_memory)
    with pytest.raises(BadModel, match=f"there is not enough memory to load the model in {folder}:"):
        heavy.weight_shapes(folder)


def test_a_bin_that_holds_no_tensor_says_so(tmp_path: Path) -> None:
    """A zip holding a storage record that no tensor of its pickle uses: the loaded dict has no tensor, so no
    storage address to match the records to; the answer is the missing tensor, not a crash."""
    import zipfile

    import torch

    path = tmp_path / "pytorch_model.bin"
    torch.save({"n": 1}, path)
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(archive.namelist()[0].split("/")[0] + "/data/0", bytes(16))
    with pytest.raises(BadModel) as caught:
        heavy.load_bin_embeddings(path, {"wte": ("wte.weight",)}, "m")
    assert (
        str(caught.value)
        == "m's checkpoint has no wte.weight tensor: it is not a checkpoint of its model type"
    )


GPT2_CLASSES = ("GPT2Config", "GPT2Model", "GPT2LMHeadModel")


def test_a_load_without_a_label_names_the_config_file_by_its_path(tiny: Tiny, tmp_path: Path) -> None:
    folder = save_local(tiny, tmp_path / "F")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "activation_function": "wiggle"}))
    with pytest.raises(BadModel) as caught:
        heavy.hidden_states(folder, GPT2_CLASSES, [(1, 2)])
    assert str(caught.value).startswith(f"{folder / 'config.json'} says activation_function = ")


def test_a_bin_transformers_refuses_as_a_pickle_is_unsafe(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The weights-only loader inside transformers refusing the pickle (after gpt2emb's own look passed)."""
    import pickle

    import transformers

    folder = save_local(tiny, tmp_path / "F", weights="bin")

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise pickle.UnpicklingError("Weights only load failed")

    monkeypatch.setattr(transformers.GPT2Model, "from_pretrained", refused)
    with pytest.raises(BadModel) as caught:
        heavy.hidden_states(folder, GPT2_CLASSES, [(1, 2)], label="L")
    bin_ = folder / "pytorch_model.bin"
    assert str(caught.value) == f"{bin_} {heavy.UNSAFE} (UnpicklingError); {heavy.SAVE_SAFELY}"
