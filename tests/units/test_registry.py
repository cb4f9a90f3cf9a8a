"""registry.py: the model registry.

Names and aliases resolve to one record with the published shapes. Other Hub repos and folders are
resolved too, an unknown name is answered with what was meant, and a family is found by its name.
Each named model's figures are checked against what its Hub config.json publishes, found by its name and
by each alias, as a command looks it up. Special tokens are refused by id before anything is fetched, and a
path too long for the system is named as no folder."""

from __future__ import annotations

import pytest

import gpt2emb
from gpt2emb import registry
from gpt2emb.errors import ExitCode, UnknownModel, UsageError

from conftest import run_cli, run_process
from fakehub import FakeHub


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt2", "gpt2"),
        ("small", "gpt2"),
        ("gpt2-small", "gpt2"),
        ("medium", "gpt2-medium"),
        ("LARGE", "gpt2-large"),
        ("xl", "gpt2-xl"),
        ("openai-community/gpt2-xl", "gpt2-xl"),
    ],
)
def test_names_and_aliases_resolve_to_one_record(name: str, expected: str) -> None:
    ref = registry.resolve(name)
    assert ref.spec is not None and ref.spec.name == expected
    assert ref.repo == f"openai-community/{expected}"


def test_published_shapes() -> None:
    shapes = {m.name: (m.shape.d_model, m.shape.n_layer, m.shape.n_head) for m in registry.MODELS}
    assert shapes == {
        "gpt2": (768, 12, 12),
        "gpt2-medium": (1024, 24, 16),
        "gpt2-large": (1280, 36, 20),
        "gpt2-xl": (1600, 48, 25),
        "distilgpt2": (768, 6, 12),
        "roberta-base": (768, 12, 12),
        "roberta-large": (1024, 24, 16),
    }
    vocab_positions = {(m.shape.family, m.shape.vocab_size, m.shape.n_positions) for m in registry.MODELS}
    assert vocab_positions == {("gpt2", 50257, 1024), ("roberta", 50265, 512)}
    assert {m.name for m in registry.GPT2_SIZES} == {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"}


def test_other_hub_repos_and_folders(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert registry.resolve("distilbert/distilgpt2").repo == "distilbert/distilgpt2"
    ref = registry.resolve(str(tmp_path))
    assert ref.folder == tmp_path.resolve() and ref.repo is None


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("gpt2-xxl", "did you mean gpt2-xl?"),
        ("mediun", "did you mean gpt2-medium?"),
        ("banana", "known models: gpt2, gpt2-medium"),
        ("~nosuchuser0", "known models"),  # a home folder that cannot be found is no folder, not a crash
    ],
)
def test_unknown_names_say_what_was_meant(name: str, hint: str) -> None:
    with pytest.raises(UnknownModel) as err:
        registry.resolve(name)
    assert hint in err.value.message
    assert err.value.code == ExitCode.UNKNOWN_MODEL


@pytest.mark.parametrize("name", ["../etc", "a/../../b", "", "  ", "a/b/c"])
def test_names_that_could_escape_are_not_repo_ids(name: str) -> None:
    with pytest.raises(UnknownModel):
        registry.resolve(name)


@pytest.mark.parametrize(
    "name",
    ["C:\\models\\my-gpt2", "C:/models/my-gpt2", "models\\my-gpt2", "\\\\server\\share\\m", "./m", "/no/m"],
)
def test_a_path_that_does_not_exist_is_no_such_folder(name: str) -> None:
    """Not 'not a model I know' nor a Hub repo: a Windows path on any system, or a path of this one."""
    with pytest.raises(UnknownModel) as err:
        registry.resolve(name)
    assert err.value.message.startswith(f"no such file or folder: {name}; give the folder that holds")
    assert err.value.code == ExitCode.UNKNOWN_MODEL


def test_a_file_is_a_static_word_table(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A file given as a model is a static word table (issue 55; it was refused as "a file, not a folder"),
    whatever it holds: reading it says what is wrong with it (exit 6)."""
    (tmp_path / "config.json").write_text("{}")
    ref = registry.resolve(str(tmp_path / "config.json"))
    assert ref.static and ref.file == tmp_path / "config.json" and ref.folder is None and ref.repo is None
    # named relatively, as a Hub repo (owner/name) or a bare name are: a file that is there is what was meant
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "afile").write_text("")
    monkeypatch.chdir(tmp_path)
    for name in ("bad/afile", "config.json"):
        ref = registry.resolve(name)
        assert (ref.name, ref.file) == (name, (tmp_path / name).resolve())
    with pytest.raises(UsageError, match="revision is for Hub models"):
        registry.resolve("bad/afile", "main")
    assert registry.resolve("bad/other").repo == "bad/other"  # no such file: a Hub repo id, as before


def test_a_family_is_found_by_name_importing_its_own_module_alone() -> None:
    """families.by_name imports the module named as the family where there is one; every family is the
    record the full list holds, and a Spelling recorded by name is one of that name and class."""
    import subprocess
    import sys

    from gpt2emb import families

    every = families._families()
    assert [f.name for f in every][:1] == ["gpt2"] and len(every) >= 8
    for family in every:
        assert families.by_name(family.name) is family
        for spelling in {f.words.name: f.words for f in every}.values():
            found = families.words_named(spelling.name, family)
            assert (found.name, type(found)) == (spelling.name, type(spelling))
        assert families.words_named("", family) is family.words  # an entry that recorded none
    probe = "import sys; from gpt2emb import families; families.by_name('gpt2'); "
    probe += "print(*sorted(m for m in sys.modules if m.startswith('gpt2emb.families.')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["gpt2emb.families.gpt2"]


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
