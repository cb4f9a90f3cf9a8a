"""Matrix tables (a column per position, word or model) wider than the console: printed in parts that fit,
every number, header and token whole, or, past the limit of parts, not printed at all, with a note."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest

from gpt2emb.output.console import print_view
from gpt2emb.output.layout import MAX_PARTS
from gpt2emb.results.positions import PositionsResult

from conftest import run_cli, run_json, serve
from fakehub import FakeHub
from tinymodel import WORDS

Table = tuple[list[str], list[list[str]]]


def tables(text: str) -> list[Table]:
    """Each table printed: its header's cells and its rows' cells. Cells are apart by 3 spaces or more (a
    column's padding and the rule between columns); none of the tokens shown here holds 3 spaces."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip() and set(line.strip()) <= {"─", "-"}:  # the rule under a header
            rows = []
            for row in lines[i + 1 :]:
                if not row.strip():
                    break
                rows.append(cells(row))
            found.append((cells(lines[i - 1]), rows))
    return found


def cells(line: str) -> list[str]:
    return re.split(r" {3,}", line.strip())


def shown(x: float, digits: int = 3) -> str:
    """A number as the tables print it: fixed digits, and 0 without a sign."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and not float(text) else text


def parts_named(text: str) -> list[str]:
    return re.findall(r"^part (\d+ of \d+): ", text, flags=re.MULTILINE)


def label(item: dict[str, Any]) -> str:
    """A word's row label: its tokens, quoted, with their ids."""
    return " + ".join(f'"{t["token"]}" ({t["id"]})' for t in item["tokens"])


Width = Callable[[int], None]


@pytest.fixture
def columns(monkeypatch: pytest.MonkeyPatch) -> Width:
    """The console's width (rich reads COLUMNS), 80 unless a test sets another."""

    def set_width(width: int) -> None:
        monkeypatch.setenv("COLUMNS", str(width))

    set_width(80)  # as a pipe is, whatever the terminal running the tests
    return set_width


def test_positions_too_wide_for_80_columns_come_in_parts_every_number_whole(
    hub: FakeHub, columns: Width
) -> None:
    doc = run_json("positions", "0-20")
    result = run_cli("positions", "0-20")
    assert result.exit_code == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    found = tables(result.stdout)
    assert len(found) > 1 and parts_named(result.stdout) == [
        f"{n} of {len(found)}" for n in range(1, len(found) + 1)
    ]
    headers = []
    for header, rows in found:
        assert header[:2] == ["pos", "norm"]  # the row labels, in every part
        part = [int(h) for h in header[2:]]
        headers += part
        assert [row[:2] for row in rows] == [
            [str(p), shown(n)] for p, n in zip(doc["positions"], doc["norms"], strict=True)
        ]
        for i, row in enumerate(rows):
            assert row[2:] == [shown(doc["matrix"][i][p]) for p in part]
    assert headers == list(range(21))  # every position once, in order, its header whole


def test_a_part_names_its_columns_as_a_range_only_where_they_are_one(hub: FakeHub, columns: Width) -> None:
    result = run_cli("positions", "500", "0-12")
    headings = re.findall(r"^part \d+ of \d+: (.*)$", result.stdout, flags=re.MULTILINE)
    found = [header[2:] for header, _ in tables(result.stdout)]
    assert len(found) == len(headings) > 1 and found[0][:2] == ["500", "0"]
    assert headings[0] == "columns " + ", ".join(found[0])  # not "500 to 5"
    assert headings[1:] == [f"columns {part[0]} to {part[-1]}" for part in found[1:]]


def test_names_that_only_look_like_numbers_are_listed() -> None:
    from gpt2emb.output.layout import _columns_named

    assert _columns_named([0, 1], ["¹", "²"]) == "columns ¹, ²"  # isdigit() takes "²", int() does not
    assert _columns_named([0, 1, 2], ["7", "8", "9"]) == "columns 7 to 9"


def test_a_matrix_that_fits_is_one_table(hub: FakeHub, columns: Width) -> None:
    columns(250)
    doc = run_json("positions", "0-20")
    result = run_cli("positions", "0-20")
    [(header, rows)] = tables(result.stdout)
    assert not parts_named(result.stdout)
    assert header == ["pos", "norm", *(str(p) for p in range(21))]
    assert rows[20] == ["20", shown(doc["norms"][20]), *(shown(x) for x in doc["matrix"][20])]


def test_similarity_in_parts_shows_every_token_and_number_whole(hub: FakeHub, columns: Width) -> None:
    doc = run_json("similarity", *WORDS)
    result = run_cli("similarity", *WORDS)
    assert result.exit_code == 0
    found = tables(result.stdout)
    assert len(found) > 1 and len(parts_named(result.stdout)) == len(found)
    headers = []
    for header, rows in found:
        assert header[0] == "token"
        headers += header[1:]
        first = WORDS.index(header[1].strip('"').strip())
        for i, row in enumerate(rows):
            assert row[0] == label(doc["items"][i])  # on one line, never folded nor cut
            assert row[1:] == [shown(x) for x in doc["matrix"][i][first : first + len(header) - 1]]
    assert headers == [f'" {w}"' for w in WORDS]  # the text each word's tokens spell


def test_beyond_the_limit_positions_print_their_norms_and_say_where_the_matrix_is(
    hub: FakeHub, columns: Width
) -> None:
    doc = run_json("positions", "0-1023")
    result = run_cli("positions", "0-1023")
    assert result.exit_code == 0
    [(header, rows)] = tables(result.stdout)  # the norms; no matrix
    assert header == ["pos", "norm"]
    assert rows == [[str(p), shown(n)] for p, n in zip(doc["positions"], doc["norms"], strict=True)]
    note = " ".join(result.stdout[result.stdout.index("note:") :].split())
    wide = f"at 80 characters wide, it would take more than {MAX_PARTS} parts"
    assert note.startswith(f"note: the 1,024 x 1,024 matrix is not printed: {wide}")
    assert "--json" in note and "--heatmap" in note and "--figure FILE" in note


def test_beyond_the_limit_similarity_prints_each_words_norm(hub: FakeHub, columns: Width) -> None:
    words = [f"id:{i}" for i in range(100, 160)]
    doc = run_json("similarity", *words)
    result = run_cli("similarity", *words)
    assert result.exit_code == 0
    [(header, rows)] = tables(result.stdout)
    assert header == ["token", "norm"]
    assert rows == [[label(i), shown(n, 4)] for i, n in zip(doc["items"], doc["norms"], strict=True)]
    assert "note: the 60 x 60 matrix is not printed" in result.stdout and "--json" in result.stdout


def test_the_limit_is_counted_in_parts_at_the_console_width(hub: FakeHub, columns: Width) -> None:
    words = [f"id:{i}" for i in range(100, 160)]
    columns(600)
    result = run_cli("similarity", *words)
    assert "not printed" not in result.stdout and len(tables(result.stdout)) <= MAX_PARTS


@pytest.mark.parametrize("width", [20, 40, 60, 80, 100, 120, 200])
def test_no_width_crops_a_number(width: int, columns: Width, capsys: pytest.CaptureFixture[str]) -> None:
    """A hand-made matrix, numbers of several widths, printed at many widths: each part's columns fit, or the
    part is printed wider than the console, never cut. (Its MAX_PARTS columns are printed even one a part.)"""
    n = MAX_PARTS
    matrix = tuple(tuple(round(math.sin(i * n + j) * 10 ** (j % 4), 4) for j in range(n)) for i in range(n))
    positions = tuple(10**k for k in range(n))
    result = PositionsResult("m", positions, tuple(float(i) for i in range(n)), matrix)
    columns(width)
    print_view(result, None)
    text = capsys.readouterr().out
    found = tables(text)
    assert [int(h) for header, _ in found for h in header[2:]] == list(positions)
    for header, rows in found:
        first = positions.index(int(header[2]))
        for i, row in enumerate(rows):
            assert row[2:] == [shown(x) for x in matrix[i][first : first + len(header) - 2]]
        if len(header) > 3:  # more than one column: the part fits the console
            assert all(len(line) <= width for line in text.splitlines() if header[2] in line)


def long_named(hub: FakeHub, tiny_files: dict[str, bytes], count: int) -> tuple[list[str], list[str]]:
    """count copies of the tiny model served under long Hub names: the names, and their -m arguments."""
    names = [f"someone/a-model-with-a-long-name-{n}" for n in range(count)]
    serve(hub, {name: tiny_files for name in names})
    return names, [arg for name in names for arg in ("-m", name)]


def test_side_by_side_models_come_in_parts_with_names_and_answers_whole(
    hub: FakeHub, tiny_files: dict[str, bytes], columns: Width
) -> None:
    names, models = long_named(hub, tiny_files, 4)
    doc = run_json("neighbors", "cat", "-k", "3", *models)
    result = run_cli("neighbors", "cat", "-k", "3", *models)
    assert result.exit_code == 0
    found = tables(result.stdout)
    assert len(found) > 1 and max(len(line) for line in result.stdout.splitlines()) <= 80
    assert [h for header, _ in found for h in header[1:]] == names
    for header, rows in found:
        for n, name in enumerate(header[1:], 1):
            answers = doc["results"][names.index(name)]["items"][0]["neighbors"]
            assert [row[n] for row in rows] == [f'"{a["token"]}" * {a["score"]:.3f}' for a in answers]


def test_a_token_is_no_markup_and_no_emoji(hub: FakeHub, columns: Width) -> None:
    result = run_cli("similarity", "[b]", "[/b]", ":cat:")
    assert result.exit_code == 0, result.stderr
    headers = [h for header, _ in tables(result.stdout) for h in header[1:]]
    assert headers == ['" [b]"', '" [/b]"', '" :cat:"']


def test_sizes_of_models_side_by_side_come_in_parts(
    hub: FakeHub, tiny_files: dict[str, bytes], columns: Width
) -> None:
    names, models = long_named(
        hub, tiny_files, MAX_PARTS + 2
    )  # a part each: more parts than a matrix may have
    doc = run_json("sizes", *models)
    result = run_cli("sizes", *models)
    assert result.exit_code == 0
    found = tables(result.stdout)
    assert len(found) > 1 and max(len(line) for line in result.stdout.splitlines()) <= 80
    assert [h for header, _ in found for h in header] == names  # the row labels' header is empty
    for header, rows in found:
        sizes = [doc["models"][names.index(name)] for name in header]
        shown_rows = {row[0]: row[1:] for row in rows}
        assert shown_rows["vocab"] == [f"{m['vocab_size']:,}" for m in sizes]
        assert shown_rows["total params"] == [f"{m['total_params']:,}" for m in sizes]


def test_context_of_five_sentences_comes_in_parts(hub: FakeHub, columns: Width) -> None:
    sentences = ["the king", "a king is", "the king of France", "hello king", "the man and the king"]
    doc = run_json("context", "king", *sentences)
    result = run_cli("context", "king", *sentences)
    assert result.exit_code == 0
    [_, *found] = tables(result.stdout)  # the sentences, then the cosines in parts
    assert len(found) > 1 and max(len(line) for line in result.stdout.splitlines()) <= 80
    pairs = [f"{p['a'] + 1} vs {p['b'] + 1}" for p in doc["layers"][0]["pairs"]]
    assert [h for header, _ in found for h in header[1:]] == [*pairs, *(f"{n} vs wte" for n in range(1, 6))]
    for header, rows in found:
        for layer, row in zip(doc["layers"], rows, strict=True):
            values = [p["cosine"] for p in layer["pairs"]] + layer["static"]
            by_name = dict(zip([*pairs, *(f"{n} vs wte" for n in range(1, 6))], values, strict=True))
            assert row[1:] == ["-" if by_name[h] is None else shown(by_name[h], 4) for h in header[1:]]


def test_a_long_split_word_folds_its_label_rather_than_crowd_out_the_matrix(
    hub: FakeHub, columns: Width
) -> None:
    words = ["cat", "dog", "king", "queen", "man", "woman", "kitten and the dog", "the king of the cats"]
    doc = run_json("similarity", *words)
    result = run_cli("similarity", *words)
    assert result.exit_code == 0 and "not printed" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    found = tables(result.stdout)
    assert 1 < len(found) <= MAX_PARTS
    matrix = [[shown(x) for x in row] for row in doc["matrix"]]
    numbers = [
        cell for _, rows in found for row in rows for cell in row if re.fullmatch(r"-?[0-9]\.[0-9]{3}", cell)
    ]
    assert sorted(numbers) == sorted(x for j in range(len(words)) for x in (row[j] for row in matrix))
