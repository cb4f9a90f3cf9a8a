"""Every per-model command is reachable from a notebook: each method of the handle, and each module-level
function of gpt2emb, gives the very document (to_dict()) its command prints with --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import gpt2emb
from gpt2emb.errors import UsageError
from gpt2emb.report import QuietReporter

from conftest import run_cli, run_json
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, safetensors_bytes

RIVER, PAID = "the cat and king", "hello king is a man"


def opened() -> gpt2emb.Embeddings:
    return gpt2emb.open("gpt2", reporter=QuietReporter())


def timeless(doc: dict[str, Any]) -> dict[str, Any]:
    """An evaluation's document without its wall-clock time, which no two runs share."""
    return {k: v for k, v in doc.items() if k != "seconds"}


def test_geometry_is_the_commands(hub: FakeHub) -> None:
    assert opened().geometry().to_dict() == run_json("geometry")


def test_context_is_the_commands(hub: FakeHub) -> None:
    assert opened().context("king", [RIVER, PAID]).to_dict() == run_json("context", "king", RIVER, PAID)
    pooled = opened().context("kingdom", ["the kingdom is big"] * 2, pool="first").to_dict()
    doc = run_json("context", "kingdom", *["the kingdom is big"] * 2, "--pool", "first")
    # a note names an option as its caller spells it: --pool on the command line, pool in Python
    assert pooled == {**doc, "notes": [n.replace("(--pool)", "(pool)") for n in doc["notes"]]}
    assert any("(pool)" in n for n in pooled["notes"])


def test_context_is_checked_as_the_command_checks_it(hub: FakeHub) -> None:
    with pytest.raises(UsageError, match="at least two sentences"):
        opened().context("king", RIVER)  # a str is one sentence
    with pytest.raises(UsageError, match="sentence 2 is empty"):
        opened().context("king", [RIVER, " "])
    with pytest.raises(TypeError, match="sentences are given as a str or a list of str"):
        opened().context("king", [RIVER, 5])  # type: ignore[list-item]


def test_tying_is_the_commands(hub: FakeHub) -> None:
    m = opened()
    assert m.tying().to_dict() == run_json("tying")
    assert m.tying(grad="the cat sat").to_dict() == run_json("tying", "--grad", "the cat sat")
    assert m.tying(load=True).to_dict() == run_json("tying", "--load")
    with pytest.raises(UsageError, match="grad needs a text of at least two tokens"):
        m.tying(grad="")


def test_compare_is_the_commands_on_an_untied_model(hub: FakeHub, tiny: Tiny) -> None:
    files = hub_files(tiny)
    files["config.json"] = json.dumps({**tiny.config, "tie_word_embeddings": False}).encode()
    files["model.safetensors"] = safetensors_bytes({**tiny.state(), "lm_head.weight": tiny.wte * 2})
    hub.repos["someone/untied"] = Repo("e" * 40, files)
    m = gpt2emb.open("someone/untied", reporter=QuietReporter())
    assert m.tying(compare=True).to_dict() == run_json("tying", "--compare", "-m", "someone/untied")


def test_the_evaluations_are_the_commands(hub: FakeHub, tmp_path: Path) -> None:
    questions, pairs = tmp_path / "questions.txt", tmp_path / "pairs.txt"
    questions.write_text(
        ": capitals\nking man woman queen\nman king woman queen\n: other\ncat dog man king\n"
    )
    pairs.write_text("cat\tdog\t5.0\nking\tqueen\t8.0\ncat\tking\t1.0\nman\twoman\t7.5\n")
    m, file = opened(), str(questions)
    doc = run_json("analogy", "--eval", file)
    assert timeless(m.analogy_eval(file).to_dict()) == timeless(doc)
    doc = run_json("analogy", "--eval", file, "--method", "3cosmul", "--errors")
    assert timeless(m.analogy_eval(file, method="3cosmul", errors=True).to_dict()) == timeless(doc)
    got = m.analogy_eval(questions, rule="bare", ignore_case=True, restrict=300)  # a pathlib.Path too
    doc = run_json(
        "analogy", "--eval", str(questions), "--rule", "bare", "--ignore-case", "--restrict", "300"
    )
    assert timeless(got.to_dict()) == timeless(doc)
    with pytest.raises(UsageError) as first:  # restrict is checked before the file is read, as by the command
        m.analogy_eval(tmp_path / "missing.txt", restrict=10**9)
    refused = run_cli("analogy", "--eval", str(tmp_path / "missing.txt"), "--restrict", str(10**9))
    assert "restrict" in first.value.message and "missing.txt" not in first.value.message
    assert refused.exit_code == first.value.code == 2 and "missing.txt" not in refused.stderr
    assert m.similarity_eval(str(pairs)).to_dict() == run_json("similarity", "--eval", str(pairs))
    got_pairs = m.similarity_eval(pairs, ignore_case=True).to_dict()  # a pathlib.Path too
    assert got_pairs == run_json("similarity", "--eval", str(pairs), "--ignore-case")


def test_the_model_free_commands_are_functions_of_the_package(hub: FakeHub) -> None:
    assert gpt2emb.sizes().to_dict() == run_json("sizes")
    assert gpt2emb.sizes(dtype="fp16").to_dict() == run_json("sizes", "--dtype", "fp16")
    assert gpt2emb.sizes(["gpt2"]).to_dict() == run_json("sizes", "-m", "gpt2")
    assert gpt2emb.sizes("gpt2").to_dict() == run_json("sizes", "-m", "gpt2")
    with pytest.raises(UsageError, match="verify checks the four GPT-2 sizes"):
        gpt2emb.sizes(["gpt2"], verify=True)
    opened()  # the entry is built: models, cache list and verify have something to say
    assert gpt2emb.models().to_dict() == run_json("models")
    assert gpt2emb.cache_list().to_dict() == run_json("cache", "list")
    assert gpt2emb.cache_verify().to_dict() == run_json("cache", "verify")
    assert gpt2emb.cache_verify("gpt2").to_dict() == run_json("cache", "verify", "gpt2")
    assert gpt2emb.cache_refresh().to_dict() == run_json("cache", "refresh")


def test_side_by_side_puts_several_handles_side_by_side(hub: FakeHub, tiny: Tiny) -> None:
    hub.repos["someone/twin"] = Repo("b" * 40, hub_files(tiny))
    a, b = opened(), gpt2emb.open("someone/twin", reporter=QuietReporter())
    got = gpt2emb.side_by_side([a.neighbors("cat", k=5), b.neighbors("cat", k=5)]).to_dict()
    cli = run_json("neighbors", "cat", "-k", "5", "-m", "gpt2", "-m", "someone/twin")
    # a result does not say whether its model is static: the handle's side by side leaves sides empty
    assert got.pop("sides") == [] and [s["model"] for s in cli.pop("sides")] == cli["models"]
    assert got == cli
    analogies = gpt2emb.side_by_side([h.analogy("king", "man", "woman") for h in (a, b)]).to_dict()
    cli = run_json("analogy", "king", "man", "woman", "-m", "gpt2", "-m", "someone/twin")
    assert analogies.pop("sides") == [] and len(cli.pop("sides")) == 2
    assert analogies == cli
    with pytest.raises(UsageError, match="compares two or more models' results, not 1"):
        gpt2emb.side_by_side([a.neighbors("cat")])
    with pytest.raises(TypeError, match="results are NeighborsResult"):
        gpt2emb.side_by_side([a.neighbors("cat"), a.analogy("king", "man", "woman")])
    with pytest.raises(UsageError, match="the results answer different questions"):
        gpt2emb.side_by_side([a.neighbors("cat"), b.neighbors("dog")])
    with pytest.raises(UsageError, match="the results answer different questions"):
        gpt2emb.side_by_side([a.neighbors("cat"), b.neighbors(["cat", "dog"])])


def test_cache_clear_is_the_commands(hub: FakeHub) -> None:
    opened()
    listed = run_json("cache", "list")
    cleared = gpt2emb.cache_clear("gpt2").to_dict()
    assert cleared["action"] == "clear" and cleared["entries"] == listed["entries"]
    assert run_json("cache", "list")["entries"] == []
