"""docs/architecture.md's picture (scripts/gen_architecture.py): drawn from the imports as they are, every
import going down a band, and the file in docs/img as the script draws it now."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import gen_architecture as arch  # noqa: E402


def test_no_import_goes_up_a_band() -> None:
    assert arch.check(arch.graph()) == []


def test_an_import_up_a_band_is_named() -> None:
    imports = {"gpt2emb.errors": {"gpt2emb.core.open"}, "gpt2emb.core.open": {"gpt2emb.errors"}}
    assert arch.check(imports) == ["gpt2emb.errors (ground) -> gpt2emb.core.open (core/)"]


def test_each_module_in_its_box() -> None:
    assert arch.box_of("gpt2emb.cli.root").name == "cli/"
    assert arch.box_of("gpt2emb.__main__").name == "cli/"
    assert arch.box_of("gpt2emb").name == "handle.py"
    assert arch.box_of("gpt2emb.output.views.neighbors").name == "output/"
    assert arch.box_of("gpt2emb.kept").name == "ground"
    assert arch.box_of("gpt2emb.a_new_module").name == arch.SHARED  # a top-level module not named
    with pytest.raises(SystemExit, match="a_new_package"):
        arch.box_of("gpt2emb.a_new_package.x")  # a package not named: the script says so


def test_the_arrows_are_the_imports() -> None:
    imports = arch.graph()
    found = arch.arrows(imports)
    # the design's path: the CLI calls the cores and hands their result to output; the cores open the store
    assert {("cli/", "core/"), ("cli/", "output/"), ("core/", "store/"), ("store/", "heavy.py")} <= found
    assert ("output/", "core/") not in found and ("core/", "cli/") not in found
    # one line per arrow drawn: between bands, and not into the last (what all share)
    drawn = [
        (a, b)
        for a, b in found
        if arch.box_by_name(a).band != arch.box_by_name(b).band
        and arch.box_by_name(b).band != len(arch.BANDS) - 1
    ]
    svg = arch.draw(imports)
    assert len(re.findall(r"<line ", svg)) == len(drawn) > 5
    every = [m.rpartition(".")[2] for m in imports if arch.box_of(m).name == arch.SHARED]
    assert all(name in svg for name in every)  # the shared box lists its modules


def test_the_picture_is_fresh() -> None:
    assert arch.OUT.read_text() == arch.draw(arch.graph()), "run python scripts/gen_architecture.py"
