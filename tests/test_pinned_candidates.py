"""candidates.py pinned where a mutation run (scripts/mutate.py) found it loose: --restrict 1, the smallest
restriction there is, and the note that names the words of an --among file that are not one token (how many
it names, its singular and plural), each against what the tiny GPT-2's vocabulary says by hand."""

from pathlib import Path

import pytest

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny

SPLIT = (
    "gato",
    "perro",
    "zorro",
    "xyzzy",
    "plugh",
    "qwerty",
    "frobnitz",
)  # none is one token of the tiny model


def test_split_words_are_words_the_tiny_model_splits(tiny: Tiny) -> None:
    vocab = tiny.vocab
    assert all("Ġ" + w not in vocab and w not in vocab for w in SPLIT)


def test_restrict_1_keeps_token_id_0_alone(hub: FakeHub, tiny: Tiny) -> None:
    doc = run_json("neighbors", "cat", "--restrict", "1")
    assert [n["id"] for n in doc["items"][0]["neighbors"]] == [0]  # the one candidate, id 0, never cat (300s)
    assert doc["candidates"]["count"] == 1 and doc["candidates"]["restrict"] == 1
    table = run_cli("neighbors", "cat", "--restrict", "1")
    assert table.exit_code == 0, table.stderr
    assert "candidates: 1 token (--restrict 1)" in table.stdout


def words_file(tmp_path: Path, words: tuple[str, ...]) -> Path:
    path = tmp_path / "words.txt"
    path.write_text("cat\ndog\n" + "".join(w + "\n" for w in words), encoding="utf-8")
    return path


def split_note(doc: dict) -> str:  # type: ignore[type-arg]
    (note,) = [n for n in doc["notes"] if "not one token" in n]
    return str(note)


@pytest.mark.parametrize(
    ("count", "said"),
    [
        (1, '1 word of {path} is not one token and cannot be ranked as one, so it is left out: "gato"'),
        (
            2,
            "2 words of {path} are not one token and cannot be ranked as one, so they are left out: "
            '"gato", "perro"',
        ),
        (
            5,
            "5 words of {path} are not one token and cannot be ranked as one, so they are left out: "
            '"gato", "perro", "zorro", "xyzzy", "plugh"',
        ),
        (
            6,
            "6 words of {path} are not one token and cannot be ranked as one, so they are left out: "
            '"gato", "perro", "zorro", "xyzzy", "plugh", ...',
        ),
    ],
)
def test_the_note_names_at_most_five_split_words_in_the_right_number(
    hub: FakeHub, tmp_path: Path, count: int, said: str
) -> None:
    path = words_file(tmp_path, SPLIT[:count])
    doc = run_json("neighbors", "bird", "--among", str(path))
    assert split_note(doc) == said.format(path=path)
    assert doc["candidates"]["split"] == list(SPLIT[:count])  # the JSON lists them all
    assert doc["candidates"]["count"] == 2  # cat and dog
