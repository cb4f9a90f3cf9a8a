"""limits.py pinned where a mutation run (scripts/mutate.py) found it loose: the sizes named in the docs (a
word list of at most 64 MB, a text on stdin of at most 16 MB), a word list that cannot be opened, and a file
name holding bytes that are not UTF-8 kept under a UTF-8 locale and under the C locale."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gpt2emb import batch, limits
from gpt2emb.errors import UsageError

from conftest import run_cli
from fakehub import FakeHub

MB = 1 << 20


def sparse(path: Path, size: int) -> str:
    """A file of `size` zero bytes (no line end: one long line), no disk used."""
    with path.open("wb") as f:
        f.truncate(size)
    return str(path)


def test_a_word_list_of_exactly_64_mb_is_read_and_one_byte_more_refused(tmp_path: Path) -> None:
    # 64 MB read whole: its one line is then what is refused, past 1 MB
    at = sparse(tmp_path / "at.txt", 64 * MB)
    refused = r"^at\.txt, line 1: longer than 1 MB; a word list holds a word a line$"
    with pytest.raises(UsageError, match=refused):
        limits.read(at, "at.txt", "a word list")
    past = sparse(tmp_path / "past.txt", 64 * MB + 1)
    refused = r"^past\.txt is over 64 MB: a word list is far smaller; is this the file you meant\?$"
    with pytest.raises(UsageError, match=refused):
        limits.read(past, "past.txt", "a word list")


def test_a_text_on_stdin_of_exactly_16_mb_is_read_and_one_byte_more_refused() -> None:
    chunk = b"a" * MB
    assert len(batch.text([chunk] * 16)) == 16 * MB
    with pytest.raises(UsageError, match=r"^stdin holds more than 16 MB: far more text than any model reads"):
        batch.text([chunk] * 16 + [b"b"])


def test_a_word_list_that_cannot_be_opened_is_named_with_the_reason(hub: FakeHub, tmp_path: Path) -> None:
    result = run_cli("neighbors", "cat", "--among", str(tmp_path / "missing.txt"))
    assert result.exit_code == 2
    stderr = " ".join(result.stderr.split())
    assert f"cannot read {tmp_path / 'missing.txt'}: No such file or directory" in stderr


@pytest.mark.skipif(sys.getfilesystemencoding() != "utf-8", reason="a UTF-8 locale's file names")
def test_a_file_name_of_bytes_that_are_not_utf8_is_read_under_a_utf8_locale(tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/w\xff.txt"  # as the shell hands such a name: surrogate-escaped
    with open(name, "wb") as f:
        f.write(b"cat\ndog\n")
    assert limits.read(os.fsdecode(name), "w.txt", "a word list") == b"cat\ndog\n"


def test_under_the_c_locale_a_name_read_from_the_file_system_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # under LC_ALL=C, Python names a file whose name has bytes past ASCII with stand-ins (os.listdir gives
    # "w\udce9.txt" for b"w\xe9.txt"), and opens it by those bytes again: such a path (the handle's
    # similarity_eval takes one) is kept; a name typed as text the locale lacks is refused
    monkeypatch.setattr(sys, "getfilesystemencoding", lambda: "ascii")
    assert limits.user_path("w\udce9.txt") == Path("w\udce9.txt")
    with pytest.raises(
        UsageError, match=r"^the path 'wé\.txt' holds characters that this locale's encoding \(ascii\)"
    ):
        limits.user_path("wé.txt")
