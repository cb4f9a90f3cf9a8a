"""plot/__init__.py, what every figure shares: the checks of --figure's file before any model is opened, and
the writing of it. Pinned on known answers where a mutation run found them loose (issue 53)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from fakehub import FakeHub

pytest.importorskip("matplotlib")


@pytest.mark.parametrize("path", ["", "   "])
def test_a_figure_of_no_name_is_refused_before_anything_is_fetched(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("vector", "king", "--figure", path)
    assert result.exit_code == 2
    assert result.stderr.strip() == "gpt2emb: --figure needs a file name, such as --figure king.png"
    assert hub.requests == [] and list(tmp_path.iterdir()) == []


def test_a_refused_target_s_fix_names_a_file_of_its_own_format(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example a refusal gives keeps the format asked for (its extension, in lower case)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "P.SVG").mkdir()
    (tmp_path / "dev.pdf").symlink_to("/dev/null")
    folder = run_cli("vector", "king", "--figure", "P.SVG")
    assert folder.exit_code == 2 and folder.stderr.strip().endswith(
        "--figure writes a regular file; give a file's path, such as --figure P.SVG/figure.svg"
    )
    device = run_cli("vector", "king", "--figure", "dev.pdf")
    assert device.exit_code == 2 and device.stderr.strip().endswith(
        "--figure writes a regular file; give a file's path, such as --figure figure.pdf"
    )
    assert hub.requests == []


@pytest.mark.parametrize(("path", "fix"), [("pics/", "pics/figure.png"), ("out.svg/", "out.svg/figure.svg")])
def test_a_path_ending_in_a_slash_is_given_a_file_in_that_folder(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, fix: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("vector", "king", "--figure", path)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"gpt2emb: --figure {path} ends with a slash, which names a folder: --figure writes a regular file; "
        f"give a file's path, such as --figure {fix}"
    )
    assert hub.requests == [] and list(tmp_path.iterdir()) == []
