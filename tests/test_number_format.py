"""One number format on screen: a count or a size of 1,000 or more has thousands separators, in every table
and every message a person reads; an index never has them (a token id, a position, a rank, a line number:
id:50256, position 1023), nor does what is code: a shape ((5, 1600)), an option as typed (--restrict 5000).
JSON numbers are numbers, unchanged.

Every command's table and messages on the tiny GPT-2, and each view given a result whose counts are large
(the tiny model's are mostly below 1,000), are read for a number of four digits or more without separators."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

import gpt2emb
from gpt2emb.output import DIMS
from gpt2emb.output.console import print_view
from gpt2emb.results.cache import RefreshedRevision, RefreshResult, VerifyResult
from gpt2emb.results.common import Token
from gpt2emb.results.evaluate import WrongAnswer

from conftest import run_cli, run_json
from fakehub import FakeHub
from tinymodel import Tiny, save_local

# four digits or more, not inside a word (a commit id), a decimal or a separated number
BARE = re.compile(r"(?<![\w.,])\d{4,}(?![\w,]|\.\d)")
# where a number is an index or code, not a count: positions (0 to 1023, rows 2 to 1025, a heatmap's row
# labels), ids, lines, a shape, an option as typed
INDEX = re.compile(
    r"\bposition \d+|\b0 to \d+|\brows \d+ to \d+|^ *\d+(?= [·░▒▓█?]{2})|\bid:\d+|\bline \d+"
    r"|\(\d+, \d+\)|\[\d+\.\.\d+\]|--[\w-]+ \d+",
    re.MULTILINE,
)


def bare(text: str) -> list[str]:
    """The numbers of 1,000 or more written without separators, outside an index and a path."""
    text = re.sub(r"\S*/\S*", " ", text)  # paths (a model's folder, the cache)
    return BARE.findall(INDEX.sub(" ", text))


QUESTIONS = ": royalty\nman king woman queen\nking queen man woman\n: animals\ncat cats dog kitten\n"
PAIRS = "king\tqueen\t8.5\ncat\tdog\t7.4\ncat\tcats\t9.2\n"


def command_lines(tmp_path: Path) -> list[list[str]]:
    (tmp_path / "q.txt").write_text(QUESTIONS)
    (tmp_path / "pairs.txt").write_text(PAIRS)
    (tmp_path / "among.txt").write_text("cat\ndog\nkitten\nking queen\n")
    long_text = " king" * 1100
    return [
        ["vector", "cat", "kingdom", "--full"],
        ["neighbors", "cat", "-k", "5"],
        ["neighbors", "cat", "--among", str(tmp_path / "among.txt")],
        ["neighbors", "cat", "--fold"],
        ["neighbors", "cat", "-m", "gpt2", "-m", str(tmp_path / "tiny")],
        ["analogy", "king", "man", "woman"],
        ["analogy", "--eval", str(tmp_path / "q.txt"), "--errors"],
        ["similarity", "cat", "cats", "dog", "kitten"],
        ["similarity", "--eval", str(tmp_path / "pairs.txt")],
        ["positions", "0", "1", "2", "500"],
        ["positions", "--heatmap", "--cells", "4"],
        ["sizes"],
        ["sizes", "-m", "gpt2"],
        ["models"],
        ["tying", "--grad", "the cat sat on the mat"],
        ["input", "the king sat"],
        ["input", long_text, "--truncate"],
        ["input", long_text],  # refused: too long
        ["context", "king", "the cat and king", "hello king is a man"],
        ["context", "king", "a" + long_text, "b king"],  # refused: too long
        ["tying", "--grad", long_text],  # refused: too long
        ["positions", "1024"],  # refused
        ["neighbors", "cat", "-k", "5000"],  # refused
        ["neighbors", "cat", "--restrict", "5000"],  # refused
        ["geometry"],
        ["export", "--format", "word2vec", "-o", str(tmp_path / "out.txt")],
        ["lab"],
        ["cache", "list"],
        ["cache", "verify"],
    ]


def test_every_command_separates_its_counts(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    save_local(tiny, tmp_path / "tiny")
    found = {}
    for args in command_lines(tmp_path):
        result = run_cli(*args)
        found[" ".join(args)[:60]] = bare(result.stdout + result.stderr)
    assert {k: v for k, v in found.items() if v} == {}


def shown(result: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setenv("COLUMNS", "200")
    print_view(result, DIMS)  # as a command shows it: vector its first 12 numbers
    return capsys.readouterr().out


LARGE = 50_257


def large_results(m: Any, tiny: Tiny, tmp_path: Path) -> dict[str, Any]:
    """Results of the tiny model with their counts made large, each the way its view shows one."""
    r = dataclasses.replace
    vector = m.vector("cat")
    item = vector.items[0]
    neighbors = m.neighbors("cat", k=5, fold=True)
    folded = r(neighbors, k=LARGE, items=(r(neighbors.items[0], form_share=2_000),))
    tying = m.tying(grad="the cat sat")
    g = tying.gradient
    gradient = r(
        g,
        input_path=r(g.input_path, rows=1_500),
        output_path=r(g.output_path, rows=LARGE),
        shared_rows=1_200,
        table_rows=LARGE,
        tokens=g.tokens * 700,
    )
    (tmp_path / "q.txt").write_text(QUESTIONS)
    (tmp_path / "pairs.txt").write_text(PAIRS)
    evaluated = m.analogy_eval(tmp_path / "q.txt")
    wrong = WrongAnswer("royalty", ("man", "king", "woman"), "queen", "cat")
    sections = tuple(r(s, correct=1_234, incorrect=5_678, skipped=9_012) for s in evaluated.sections)
    pairs = m.similarity_eval(tmp_path / "pairs.txt")
    heat = m.position_map(cells=4)
    geometry = m.geometry()
    exported = m.export("word2vec", tmp_path / "out.txt")
    cached = gpt2emb.cache_list()
    verified = gpt2emb.cache_verify()
    entry = verified.entries[0]
    revision = RefreshedRevision("gpt2", "openai-community/gpt2", "main", "a" * 40, "b" * 40, False)
    similar = m.similarity(["cat", "dog"])
    many = tuple(Token(i % 300, "x") for i in range(1_234))
    side = gpt2emb.side_by_side([m.neighbors("cat", k=3), m.neighbors("cat", k=3)])
    return {
        "vector": r(vector, items=(r(item, vector=item.vector * 50),)),  # 1,600 numbers, 1,588 more
        "neighbors --fold": folded,
        "tying --grad": r(tying, gradient=gradient),
        "analogy --eval": r(evaluated, sections=sections, total=sections[0], errors=(wrong,) * 1_500),
        "similarity --eval": r(pairs, pairs=3_000, used=2_000, skipped=1_000, unreadable=1_000),
        "positions --heatmap": r(heat, n_positions=8_192, block=4_096.0),
        "geometry": r(geometry, d_model=1_600),
        "export": r(exported, dims=1_600, rows=LARGE),
        "cache list": r(cached, entries=cached.entries * 1_000),
        "cache verify": VerifyResult(
            verified.root, False, tuple(r(entry, ok=False, problem="x") for _ in range(1_000)), 10
        ),
        "cache refresh": RefreshResult(cached.root, (revision,) * 1_000),
        "similarity": r(similar, items=(r(similar.items[0], tokens=many), *similar.items[1:])),
        "side by side": r(side, overlap=tuple(r(o, shared=1_000, k=2_000) for o in side.overlap)),
    }


def test_every_view_separates_large_counts(
    hub: FakeHub,
    tiny: Tiny,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    m = gpt2emb.open("gpt2")
    capsys.readouterr()
    results = large_results(m, tiny, tmp_path)
    found = {name: bare(shown(result, monkeypatch, capsys)) for name, result in results.items()}
    assert {k: v for k, v in found.items() if v} == {}
    # and each large count is there, separated: the views were given them
    text = {name: shown(result, monkeypatch, capsys) for name, result in results.items()}
    for name, expected in [
        ("vector", "1,588 more"),
        ("neighbors --fold", "2,000 of the 50,257 nearest"),
        ("tying --grad", "1,500 of 50,257"),
        ("analogy --eval", "first 20 of 1,500"),
        ("analogy --eval", "6,912"),  # answered: correct + incorrect
        ("similarity --eval", "2,000 of 3,000"),
        ("positions --heatmap", "all 8,192 position rows"),
        ("geometry", "d = 1,600"),
        ("export", "50,257 rows of 1,600 numbers"),
        ("cache list", "1,000 entries"),
        ("cache verify", "1,000 damaged"),
        ("cache refresh", "1,000 revisions"),
        ("similarity", "(1,234 tokens)"),
        ("side by side", "share 1,000 of their top 2,000"),
    ]:
        assert expected in " ".join(text[name].split()), name


def numbers(doc: Any, at: str = "") -> dict[str, int | float]:
    """Every number of a JSON document by its path (models/0/wte_params); a bool is no number."""
    if isinstance(doc, dict):
        return {k: v for key, value in doc.items() for k, v in numbers(value, f"{at}/{key}").items()}
    if isinstance(doc, list):
        return {k: v for i, value in enumerate(doc) for k, v in numbers(value, f"{at}/{i}").items()}
    return {at: doc} if isinstance(doc, int | float) and not isinstance(doc, bool) else {}


# the four GPT-2 sizes as published (their config.json): d_model, n_layer, n_head
PUBLISHED = {"gpt2": (768, 12, 12), "gpt2-medium": (1024, 24, 16), "gpt2-large": (1280, 36, 20)}
PUBLISHED["gpt2-xl"] = (1600, 48, 25)


@pytest.mark.parametrize(("dtype", "width"), [("fp32", 4), ("fp16", 2)])
def test_the_json_numbers_are_unchanged(hub: FakeHub, dtype: str, width: int) -> None:
    """Every number of `sizes --json` is the count computed here from GPT-2's published shapes, as a JSON
    number (an int where it counts), never a separated string: nothing of the tables' format reaches it."""
    doc = run_json("sizes", "--dtype", dtype)
    assert doc["models"][0]["vocab_size"] == 50257 and isinstance(doc["models"][0]["vocab_size"], int)
    expected: dict[str, int | float] = {}
    for i, (d, layers, heads) in enumerate(PUBLISHED.values()):
        vocab, positions = 50257, 1024
        wte, wpe, final_ln = vocab * d, positions * d, 2 * d
        # a block: two layer norms (2d each), attention's c_attn (d x 3d + 3d) and c_proj (d x d + d), the
        # MLP's c_fc (d x 4d + 4d) and c_proj (4d x d + d)
        block = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
        total = wte + wpe + layers * block + final_ln
        counts = {"vocab_size": vocab, "d_model": d, "n_positions": positions, "n_layer": layers}
        counts |= {"n_head": heads, "wte_params": wte, "wpe_params": wpe, "block_params": layers * block}
        counts |= {"final_ln_params": final_ln, "total_params": total, "position_rows": positions}
        counts |= {"output_params": 0}  # tied: the output layer is wte
        shares = {"wte_share": wte / total, "embeddings_mb": (wte + wpe) * width / 1e6}
        shares["total_mb"] = total * width / 1e6
        expected |= {f"/models/{i}/{key}": value for key, value in (counts | shares).items()}
    found = numbers(doc)
    assert sorted(found) == sorted(expected)  # no number more or less, and each where it belongs
    for path, value in expected.items():
        if isinstance(value, int):
            assert found[path] == value and isinstance(found[path], int), path
        else:  # a ratio or a size in MB: float64 here and in gpt2emb, by another order of operations
            assert found[path] == pytest.approx(value, rel=1e-12), path
