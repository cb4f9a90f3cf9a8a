"""The model registry (registry.py): names and aliases resolved to one record, the published shapes, other
Hub repos and folders, unknown names answered with what was meant, a family found by name."""

import pytest

from gpt2emb import registry
from gpt2emb.errors import ExitCode, UnknownModel, UsageError


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
