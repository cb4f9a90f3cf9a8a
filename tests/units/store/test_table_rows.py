"""store/table_rows.py: a checkpoint's tables read by byte ranges and widened to float32.

F16 and BF16 tables are widened beside an I64 buffer. Rows are read block by block, only from a table of
float rows, and the bars count the bytes read. A model without a position table has no position rows. A
download from the Hub is kept as it arrives where the Hub gives an ETag, and not kept where it gives none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import registry
from gpt2emb.errors import BadModel
from gpt2emb.report import QuietReporter
from gpt2emb.store import build, checkpoint, table_rows
from gpt2emb.store import hub as hub_module

from checkpoints import Recording, folder_of, layout, serve, st_file
from conftest import COMMIT, run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, safetensors_bytes, torch_bin


@pytest.mark.parametrize("where", ["folder", "hub"])
def test_f16_and_bf16_embeddings_are_widened_beside_an_i64_buffer(
    hub: FakeHub, tiny: Tiny, tmp_path: Path, where: str
) -> None:
    wte16 = tiny.wte.astype(np.float16)
    wpe_bf16 = (tiny.wpe.view(np.uint32) >> 16).astype(np.uint16)  # bfloat16 by truncation
    state = {**tiny.state(), "wte.weight": wte16, "wpe.weight": wpe_bf16}
    state["position_ids"] = np.arange(1024, dtype=np.int64)[None]
    checkpoint = st_file(*layout(state, {"wpe.weight": "BF16"}))
    if where == "folder":
        model = str(folder_of(tiny, tmp_path / "half", {"model.safetensors": checkpoint}))
    else:
        serve(hub, tiny, "someone/half", {"model.safetensors": checkpoint})
        model = "someone/half"
    m = build.open_model(registry.resolve(model))
    assert m.wte.dtype == m.wpe.dtype == np.float32
    np.testing.assert_array_equal(m.wte, wte16.astype(np.float32))  # widening is exact
    np.testing.assert_array_equal(m.wpe, (wpe_bf16.astype(np.uint32) << 16).view(np.float32))
    np.testing.assert_allclose(m.wpe, tiny.wpe, rtol=2**-7, atol=0)  # BF16 keeps 8 bits of mantissa
    assert run_json("neighbors", "cat", "-m", model)["items"][0]["neighbors"][0]["token"] == " cats"


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rows_are_read_by_ranges_block_by_block(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: type[np.floating[Any]]
) -> None:
    """An untied output layer's rows, read in blocks of 7 rows (the block size made small), equal the
    table's own rows widened by numpy, each block holding the rows it says."""
    head = (tiny.wte * 3).astype(dtype)
    files = {"model.safetensors": safetensors_bytes({**tiny.state(), "lm_head.weight": head})}
    folder = folder_of(tiny, tmp_path / "untied", files)
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    row_bytes = head.shape[1] * head.itemsize
    monkeypatch.setattr(table_rows, "_BLOCK_BYTES", 7 * row_bytes)
    runs = [range(0, 1), range(5, 40), range(100, 107), range(len(head) - 9, len(head))]
    reporter = Recording()
    got = list(table_rows.read_rows(ref, info, "lm_head.weight", runs, reporter))
    [(_, total, task)] = reporter.lines
    assert total == task.done == row_bytes * sum(map(len, runs))  # the bar counts the rows asked for
    assert [rows for rows, _ in got] == [
        range(a, min(r.stop, a + 7)) for r in runs for a in range(r.start, r.stop, 7)
    ]
    for rows, block in got:
        assert block.dtype == np.float32
        np.testing.assert_array_equal(block, head[rows.start : rows.stop].astype(np.float32))


@pytest.mark.parametrize("where", ["folder", "hub"])
def test_reading_the_tables_reports_their_bytes(hub: FakeHub, tiny: Tiny, tmp_path: Path, where: str) -> None:
    files = {"model.safetensors": safetensors_bytes(tiny.state())}
    if where == "folder":
        model, verb = str(folder_of(tiny, tmp_path / "model", files)), "reading"
    else:
        serve(hub, tiny, "someone/model", dict(files))
        model, verb = "someone/model", "fetching"
    ref = registry.resolve(model)
    reporter = Recording()
    tables = table_rows.embeddings(ref, checkpoint.read_info(ref, COMMIT), reporter)
    np.testing.assert_array_equal(tables.wte, tiny.wte)
    total = tiny.wte.nbytes + tiny.wpe.nbytes
    assert [(label, n, task.done) for label, n, task in reporter.lines] == [
        (f"{verb} {model} embeddings", total, total)
    ]


def test_a_model_without_a_position_table_has_no_position_rows(tmp_path: Path) -> None:
    """A rotary model (Llama) learned no row per position: its wpe has none, its wte is read as stored."""
    wte = np.random.default_rng(0).standard_normal((50, 32)).astype(np.float32)
    config = {
        "model_type": "llama",
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "vocab_size": 50,
        "max_position_embeddings": 128,
    }
    folder = tmp_path / "rotary"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(safetensors_bytes({"model.embed_tokens.weight": wte}))
    ref = registry.resolve(str(folder))
    tables = table_rows.embeddings(ref, checkpoint.read_info(ref, "local"), QuietReporter())
    assert tables.wpe.shape == (0, 32) and tables.wpe.dtype == np.float32
    np.testing.assert_array_equal(tables.wte, wte)


@pytest.mark.parametrize(
    ("dtype", "shape"),
    [("F64", None), ("I32", None), ("F32", "3-D")],
    ids=["float64", "int32", "three-dimensional"],
)
def test_rows_are_read_only_from_a_table_of_float_rows(
    tiny: Tiny, tmp_path: Path, dtype: str, shape: str | None
) -> None:
    """An output layer stored otherwise than as a 2-D table of F32, F16 or BF16 rows is refused by name before
    a byte of it is read: either fault alone is enough."""
    rows = tiny.wte.astype({"F64": np.float64, "I32": np.int32, "F32": np.float32}[dtype])
    if shape == "3-D":
        rows = rows.reshape(len(rows), 2, -1)
    state = {**tiny.state(), "lm_head.weight": rows}
    folder = folder_of(tiny, tmp_path / "model", {"model.safetensors": safetensors_bytes(state)})
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    with pytest.raises(BadModel) as e:
        next(table_rows.read_rows(ref, info, "lm_head.weight", [range(2)], QuietReporter()))
    assert e.value.message == (
        f"{folder}/model.safetensors stores lm_head.weight as {dtype} {list(rows.shape)}; gpt2emb reads a "
        "table of rows stored as F32, F16 or BF16"
    )


def test_an_interrupted_first_use_online_keeps_what_arrived(
    hub: FakeHub, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Online, a Hub model's tables are fetched into a partial file beside its entries (store/partial.py), so
    that the next run resumes where this one broke off, as the message says."""
    from gpt2emb.store import partial

    monkeypatch.setattr(partial, "BLOCK", 4096)  # whole blocks of the tiny tables arrive before the cut
    gets = [0]

    def cut_the_tables(method: str, path: str) -> Any:
        if method == "GET" and path.split("?")[0].endswith("model.safetensors"):
            gets[0] += 1
            return "cut" if gets[0] == 3 else None  # after the two reads of the header
        return None

    hub.fault = cut_the_tables
    result = run_cli("vector", "cat", "--json")
    assert result.exit_code == 5 and "the next run resumes the download" in result.stderr
    assert [p.name.split(".")[0] for p in caches["cache"].rglob("*.partial")] == [COMMIT]


def test_a_checkpoint_the_hub_gives_no_etag_is_fetched_without_keeping(
    hub: FakeHub, caches: dict[str, Path], tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partial file is named by the file's ETag (another ETag: other bytes); where the server gives none,
    nothing is kept, and the first use goes on as any download."""
    monkeypatch.setattr(hub_module, "etag", lambda repo, filename, commit: None)  # a server without ETags
    result = run_cli("vector", "id:5", "--full", "--json")
    assert result.exit_code == 0, result.stderr
    row = json.loads(result.stdout)["items"][0]["vector"]
    np.testing.assert_array_equal(np.float32(row), tiny.wte[5])
    assert list(caches["cache"].rglob("*.partial")) == []


def test_a_table_of_one_row_is_read_whole_and_its_bytes_counted(tiny: Tiny, tmp_path: Path) -> None:
    """A table of a single row is read as that row, its bytes counted."""
    head = tiny.wte[:1] * 3
    files = {"model.safetensors": safetensors_bytes({**tiny.state(), "lm_head.weight": head})}
    folder = folder_of(tiny, tmp_path / "one", files)
    ref = registry.resolve(str(folder))
    info = checkpoint.read_info(ref, "local")
    reporter = Recording()
    [(rows, block)] = list(table_rows.read_rows(ref, info, "lm_head.weight", [range(1)], reporter))
    assert rows == range(1)
    np.testing.assert_array_equal(block, head)
    [(label, total, task)] = reporter.lines
    assert (label, total, task.done) == (f"reading lm_head.weight of {ref.name}", head.nbytes, head.nbytes)


@pytest.mark.parametrize("prefix", ["", "transformer."])
def test_a_bin_table_that_disagrees_with_its_config_is_named_as_the_file_stores_it(
    tiny: Tiny, tmp_path: Path, prefix: str
) -> None:
    """A pytorch_model.bin may store wte under either of its names (GPT2Model's or GPT2LMHeadModel's): the
    message names the one this file uses."""
    folder = folder_of(tiny, tmp_path / "m", {"pytorch_model.bin": torch_bin(tiny.state(prefix))})
    vocab = len(tiny.wte)
    (folder / "config.json").write_text(json.dumps({**tiny.config, "vocab_size": vocab + 1}))
    ref = registry.resolve(str(folder))
    with pytest.raises(BadModel) as e:
        table_rows.embeddings(ref, checkpoint.read_info(ref, "local"), QuietReporter())
    assert str(e.value) == (
        f"{ref.name} disagrees with its config: {prefix}wte.weight is [{vocab}, 32], config.json says "
        f"[{vocab + 1}, 32]"
    )
