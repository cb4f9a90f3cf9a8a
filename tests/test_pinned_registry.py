"""registry.py pinned where a mutation run (scripts/mutate.py) found it loose: each named model's figures as
its Hub config.json publishes them (found by its name and each alias, as a command looks it up), the special
tokens refused by id before anything is fetched, and a path too long for the system named as no folder."""

from __future__ import annotations

import pytest

import gpt2emb
from gpt2emb import registry
from gpt2emb.errors import UnknownModel

from conftest import run_cli, run_process
from fakehub import FakeHub

# name, aliases: (vocab_size, n_embd, n_positions, n_layer, n_head) of config.json, the family, the row of
# position 0 (RoBERTa's position ids start at padding_idx + 1 = 2)
PUBLISHED = {
    ("gpt2", "small", "gpt2-small", "openai-community/gpt2"): ((50257, 768, 1024, 12, 12), "gpt2", 0),
    ("gpt2-medium", "medium", "openai-community/gpt2-medium"): ((50257, 1024, 1024, 24, 16), "gpt2", 0),
    ("gpt2-large", "large", "openai-community/gpt2-large"): ((50257, 1280, 1024, 36, 20), "gpt2", 0),
    ("gpt2-xl", "xl", "openai-community/gpt2-xl"): ((50257, 1600, 1024, 48, 25), "gpt2", 0),
    ("distilgpt2", "distilbert/distilgpt2"): ((50257, 768, 1024, 6, 12), "gpt2", 0),
    ("roberta-base", "roberta", "FacebookAI/roberta-base"): ((50265, 768, 512, 12, 12), "roberta", 2),
    ("roberta-large", "FacebookAI/roberta-large"): ((50265, 1024, 512, 24, 16), "roberta", 2),
}


@pytest.mark.parametrize(("names", "published"), list(PUBLISHED.items()))
def test_each_model_has_its_published_figures_by_every_name(
    names: tuple[str, ...], published: tuple[tuple[int, ...], str, int]
) -> None:
    figures, family, offset = published
    for name in names:
        spec = registry.find(name.upper())
        assert spec is not None and spec.name == names[0]
        shape = spec.shape
        assert (shape.vocab_size, shape.d_model, shape.n_positions, shape.n_layer, shape.n_head) == figures
        assert (shape.family, shape.position_offset, shape.position_table) == (family, offset, True)


@pytest.mark.parametrize(
    ("model", "token", "token_id"),
    [
        ("gpt2", "<|endoftext|>", 50256),
        ("roberta-base", "<s>", 0),
        ("roberta-base", "<pad>", 1),
        ("roberta-base", "</s>", 2),
        ("roberta-base", "<unk>", 3),
        ("roberta-large", "<mask>", 50264),
    ],
)
def test_a_special_token_typed_as_a_word_is_refused_by_its_id_offline(
    model: str, token: str, token_id: int
) -> None:
    # a process of its own: the table is read when the module is imported
    done = run_process("vector", token, "-m", model, env={"HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2
    assert f"{token} is a special token, not a word: ask for its row by id (id:{token_id})" in done.stderr


def test_a_path_too_long_for_the_system_is_no_such_folder() -> None:
    name = "./" + "x" * 5000
    with pytest.raises(UnknownModel, match=r"^no such file or folder: \./x{5000}; give the folder"):
        gpt2emb.open(name)


def test_a_name_that_is_no_model_is_shown_whole_up_to_100_characters() -> None:
    with pytest.raises(
        UnknownModel, match=r"^gpt3 is not a model I know; did you mean gpt2\? \(a Hub repo is"
    ):
        registry.resolve("gpt3")
    with pytest.raises(UnknownModel, match=r"^q{100} is not a model I know; known models: gpt2, gpt2-medium"):
        registry.resolve("q" * 100)
    with pytest.raises(UnknownModel, match=r"^q{100}\.\.\. is not a model I know; known models: gpt2,"):
        registry.resolve("q" * 101)


def test_a_name_shaped_as_a_repo_the_hub_refuses_is_shown_up_to_120_characters() -> None:
    with pytest.raises(
        UnknownModel, match=r"^a--b/c is not a Hub repo id: the Hub names a repo owner/name, each"
    ):
        registry.resolve("a--b/c")
    long = "a--b/" + "c" * 115  # 120 characters: shown whole
    with pytest.raises(UnknownModel, match=rf"^{long} is not a Hub repo id: "):
        registry.resolve(long)
    with pytest.raises(UnknownModel, match=rf"^{long}\.\.\. is not a Hub repo id: "):
        registry.resolve(long + "c")


def test_a_model_named_twice_is_answered_once_with_a_note(hub: FakeHub) -> None:
    result = run_cli("neighbors", "cat", "-m", "gpt2", "-m", "small", "-k", "3", "--json")
    assert result.exit_code == 0, result.stderr
    assert "small is gpt2 again: each model is answered once" in " ".join(result.stderr.split())
