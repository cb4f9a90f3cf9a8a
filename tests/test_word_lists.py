"""A word list (--among) read whole at C speed: each distinct word checked and looked up once, at its first
line, however often the list repeats it; a line past limits.MAX_LINE named by its number."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpt2emb import candidates, limits
from gpt2emb.errors import UsageError

from conftest import run_cli, run_json
from fakehub import FakeHub


def words_of(tmp_path: Path, text: str) -> list[tuple[int, str]]:
    path = tmp_path / "words.txt"
    path.write_text(text, encoding="utf-8")
    return candidates._read_words(str(path), exact=False, specials=None)


def test_each_word_once_at_its_first_line(tmp_path: Path) -> None:
    text = "cat\n dog \n\n# cat\ncat\n  cat\ndog\nking\n"
    assert words_of(tmp_path, text) == [(1, "cat"), (2, "dog"), (8, "king")]


def test_the_first_bad_line_is_named_whatever_repeats_before_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"words\.txt, line 4: "):
        words_of(tmp_path, "cat\ncat\ndog\nid:zz\ncat\nid:yy\n")


def test_a_repeated_list_answers_as_its_distinct_words(hub: FakeHub, tmp_path: Path) -> None:
    once, often = tmp_path / "once.txt", tmp_path / "often.txt"
    once.write_text("dog\nking\nqueen\ncats\n")
    often.write_text("dog\nking\n" * 50_000 + "queen\ncats\n" * 3)
    a = run_json("neighbors", "cat", "-k", "3", "--among", str(once))
    b = run_json("neighbors", "cat", "-k", "3", "--among", str(often))
    assert a["items"] == b["items"]
    assert a["candidates"]["count"] == b["candidates"]["count"] == 4


def test_a_long_line_is_named_by_its_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_LINE", 5)
    path = tmp_path / "w.txt"
    for text, line in (("cat\ndog\nkingdom\n", 3), ("abcdef", 1), ("a\nb\n\nabcdefgh", 4)):
        path.write_text(text)
        with pytest.raises(UsageError, match=rf"w\.txt, line {line}: longer than 5 bytes"):
            limits.read(str(path), "w.txt", "a word list")
    for text in ("cat\ndog\nking\n", "abcde", "abcde\n", "\n\n", ""):
        path.write_text(text)
        assert limits.read(str(path), "w.txt", "a word list") == text.encode()


def test_among_a_file_of_many_lines_names_the_long_one(hub: FakeHub, tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(b"cat\n" * 1000 + b"x" * (limits.MAX_LINE + 1) + b"\ndog\n")
    result = run_cli("neighbors", "cat", "--among", str(path))
    assert result.exit_code == 2
    assert "line 1001: longer than 1 MB" in " ".join(result.stderr.split())
