"""A special token typed as a word is refused naming its id, on every path: words on the command line, an
--among file, stdin (--jsonl too), analogy, context and lab, and the Python handle.

A model of the registry is refused before anything is fetched, with the id the registry records for the
real model on the Hub (GPT-2's <|endoftext|> is 50256); a folder or a model the registry does not name is
refused once open, with the id its own tokenizer gives (the tiny GPT-2's own id, 0).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import gpt2emb
from gpt2emb import families
from gpt2emb.errors import UsageError
from gpt2emb.registry import GPT2_SPECIALS, MODELS, ROBERTA_SPECIALS
from tiny_roberta import TinyRoberta, build

from conftest import GPT2_VOCAB, run_cli, serve
from fakehub import FakeHub
from tinymodel import Tiny, save_local

EOT = "<|endoftext|>"
REFUSED = "is a special token, not a word: ask for its row by id (id:{})"


@pytest.fixture
def folder(tiny: Tiny, tmp_path: Path) -> str:
    return str(save_local(tiny, tmp_path / "tiny"))


@pytest.fixture
def among(tmp_path: Path) -> str:
    listed = tmp_path / "among.txt"
    listed.write_text(f"cat\n{EOT}\ndog\n", encoding="utf-8")
    return str(listed)


def commands(among: str) -> list[list[str]]:
    """Each command line that takes a word, with <|endoftext|> as one of its words."""
    return [
        ["vector", EOT],
        ["neighbors", EOT],
        ["neighbors", "cat", "--among", among],
        ["analogy", "king", EOT, "woman"],
        ["analogy", "king", "man", "woman", "--among", among],
        ["similarity", "cat", EOT],
        ["context", EOT, f"a {EOT}", f"b {EOT}"],
        ["lab", "--word", EOT],
    ]


def test_a_registry_model_names_the_id_before_anything_is_fetched(hub: FakeHub, among: str) -> None:
    (eot,) = dict(GPT2_SPECIALS).values()
    for args in commands(among):
        result = run_cli(*args, "-m", "gpt2")
        assert result.exit_code == 2, args
        assert f"{EOT} {REFUSED.format(eot)}" in result.stderr, args
        assert "id:N" not in result.stderr, args
    assert hub.requests == []


def test_a_folder_names_its_own_id(tiny: Tiny, folder: str, among: str) -> None:
    eot = tiny.vocab[EOT]
    for args in commands(among):
        result = run_cli(*args, "-m", folder)
        assert result.exit_code == 2, args
        assert f"{EOT} {REFUSED.format(eot)}" in result.stderr, args


@pytest.mark.parametrize("lines", [False, True])
def test_stdin_names_the_id(tiny: Tiny, folder: str, stdin: Callable[[bytes], None], lines: bool) -> None:
    stdin(f"cat\n{EOT}\n".encode())
    result = run_cli("neighbors", "-", "-m", folder, *(["--jsonl"] if lines else []))
    assert result.exit_code != 0
    said = json.loads(result.stderr.splitlines()[-1])["error"]["message"] if lines else result.stderr
    assert f"line 2: {EOT} {REFUSED.format(tiny.vocab[EOT])}" in said


def test_the_python_handle_names_the_id(tiny: Tiny, folder: str, among: str) -> None:
    m = gpt2emb.open(folder)
    eot = tiny.vocab[EOT]
    calls: list[Callable[[], object]] = [
        lambda: m.vector(EOT),
        lambda: m.neighbors(EOT),
        lambda: m.neighbors("cat", among=among),
        lambda: m.analogy("king", "man", "woman", among=among),
        lambda: list(m.each_neighbors(["cat"], among=among)),
        lambda: m.similarity(["cat", EOT]),
    ]
    for call in calls:
        with pytest.raises(UsageError) as refused:
            call()
        assert f"{EOT} {REFUSED.format(eot)}" in str(refused.value)


def test_roberta_names_its_ids_before_and_after_fetching(hub: FakeHub, tmp_path: Path) -> None:
    roberta: TinyRoberta = build(tmp_path / "roberta")
    serve(hub, {"FacebookAI/roberta-base": roberta.files()})
    for special, registered in ROBERTA_SPECIALS:
        early = run_cli("vector", special, "-m", "roberta")
        assert early.exit_code == 2 and REFUSED.format(registered) in early.stderr
        opened = run_cli("vector", special, "-m", str(roberta.folder))
        assert REFUSED.format(roberta.tokenizer.token_to_id(special)) in opened.stderr
    assert hub.requests == []


def test_a_text_written_as_a_special_token_the_model_lacks_is_refused_as_none(hub: FakeHub) -> None:
    result = run_cli("neighbors", "<|im_start|>", "-m", "gpt2")
    assert result.exit_code == 2
    assert "<|im_start|> is written as a special token, and this model's vocabulary has no such token" in (
        result.stderr
    )


def test_the_registry_records_every_special_token_of_each_model() -> None:
    """Each named model has ids for its family's special tokens, within its vocabulary; GPT-2's are those
    of its real vocabulary."""
    for spec in MODELS:
        pattern = families.by_name(spec.shape.family).specials
        assert spec.special_ids and all(pattern.fullmatch(t) for t, _ in spec.special_ids), spec.name
        assert all(0 <= i < spec.shape.vocab_size for _, i in spec.special_ids), spec.name
    vocab = json.loads((GPT2_VOCAB / "vocab.json").read_text(encoding="utf-8"))
    assert {t: vocab[t] for t, _ in GPT2_SPECIALS} == dict(GPT2_SPECIALS)
