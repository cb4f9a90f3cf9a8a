"""Static word tables (issue 55) written here: bad files refused naming the line and nothing cached, words
seen twice, the cache entry (warm, a changed file read again, cache list, verify, clear), progress, the
options about tokens and the commands about a model's structure refused, the write guard, the handle and
stdin; and any table gensim writes read back as gensim reads it (property)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpt2emb
from gpt2emb.report import Task
from gpt2emb.store import static

from conftest import FUZZ, run_cli, run_json

gensim = pytest.importorskip("gensim")
pytestmark = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning"
)  # gensim's open file
from gensim.models import KeyedVectors  # noqa: E402

DATA = Path(os.path.dirname(gensim.__file__)) / "test" / "test_data"
ROWS = b"cat 1 0 0\ndog 0.5 0.5 0\nking 0 0 1\nqueen 0 0.1 1\n"


def entries(caches: dict[str, Path]) -> list[Path]:
    return sorted((caches["cache"] / "static").glob("*/*/manifest.json"))


def write(tmp_path: Path, data: bytes, name: str = "t.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


BAD = [
    (
        "few",
        b"4 3\n" + ROWS.replace(b"dog 0.5 0.5 0", b"dog 0.5 0.5"),
        "line 3, holds 2 numbers after its word, not 3",
    ),
    ("many", ROWS.replace(b"king 0 0 1", b"king 0 0 1 2"), "line 3, holds 4 numbers after its word, not 3"),
    ("count larger", b"5 3\n" + ROWS, "header (line 1) says 5 words, and the file ends after 4 (line 5)"),
    ("count smaller", b"3 3\n" + ROWS, "header (line 1) says 3 words, and the file holds 4"),
    ("nan", ROWS.replace(b"dog 0.5", b"dog nan"), "line 2, holds NaN"),
    ("inf", ROWS.replace(b"dog 0.5", b"dog -inf"), "line 2, holds an infinite value"),
    ("past float32", ROWS.replace(b"dog 0.5", b"dog 1e39"), "line 2, holds an infinite value"),
    (
        "past float32, then junk",
        ROWS.replace(b"dog 0.5", b"dog 1e39").replace(b"king 0", b"king zero"),
        "line 2, holds an infinite value",
    ),
    ("empty", b"", "is empty"),
    ("blank", ROWS.replace(b"\ndog", b"\n\ndog"), "line 2, is blank"),
    ("bom", b"\xef\xbb\xbf" + ROWS, "starts with a byte-order mark (line 1)"),
    ("tab", ROWS.replace(b"king 0", b"king\t0"), "line 3, holds a tab"),
    ("two spaces", ROWS.replace(b"king 0", b"king  0"), "line 3, has two spaces in a row"),
    ("not a number", ROWS.replace(b"king 0", b"king zero"), "line 3, holds 'zero', which is not a number"),
    ("latin-1", ROWS.replace(b"queen", b"reine\xe9"), "line 4, holds the byte 0xE9, which is not utf-8"),
    ("no numbers", b"hello\n", "line 1, holds a word and no numbers"),
    ("safetensors", b"\x10\x00\x00\x00\x00\x00\x00\x00" + b'{"a": 1}        ', "is a safetensors checkpoint"),
    ("gzip", b"\x1f\x8b\x08\x00rest", "is an archive or compressed"),
]


@pytest.mark.parametrize(("data", "said"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_file_is_exit_6_naming_its_line_and_nothing_is_cached(
    tmp_path: Path, caches: dict[str, Path], data: bytes, said: str
) -> None:
    path = write(tmp_path, data)
    done = run_cli("neighbors", "cat", "-m", str(path))
    assert done.exit_code == 6, done.stderr
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert entries(caches) == []


def binary(rows: list[tuple[bytes, list[float]]], count: int | None = None) -> bytes:
    dim = len(rows[0][1])
    body = b"".join(w + b" " + np.array(v, dtype=np.float32).tobytes() + b"\n" for w, v in rows)
    return f"{count if count is not None else len(rows)} {dim}\n".encode() + body


def test_a_binary_file_cut_short_or_longer_than_its_header(tmp_path: Path, caches: dict[str, Path]) -> None:
    rows = [(b"cat", [1.0, 0.0]), (b"dog", [0.5, 0.5]), (b"king", [0.0, 1.0])]
    whole = binary(rows)
    path = write(tmp_path, whole[:-6], "t.bin")
    done = run_cli("vector", "cat", "-m", str(path))
    assert done.exit_code == 6 and "ends inside word 3 of the 3 its header (line 1) says" in done.stderr
    write(tmp_path, binary(rows, count=2), "t.bin")
    done = run_cli("vector", "cat", "-m", str(path))
    assert done.exit_code == 6 and "holds more after them" in done.stderr
    write(tmp_path, binary([*rows[:1], (b"dog", [0.5, float("nan")]), *rows[2:]]), "t.bin")
    done = run_cli("vector", "cat", "-m", str(path))
    assert done.exit_code == 6 and "t.bin, word 2 ('dog'), holds NaN" in done.stderr
    assert entries(caches) == []
    write(tmp_path, whole, "t.bin")
    doc = run_json("vector", "dog", "-m", str(path))
    assert doc["items"][0]["vector"] == [0.5, 0.5]


@pytest.mark.parametrize("name", ["lee_fasttext.bin", "lee_fasttext_new.bin"])
def test_a_fasttext_model_is_refused_saying_how_to_get_its_vec(name: str, caches: dict[str, Path]) -> None:
    done = run_cli("neighbors", "night", "-m", str(DATA / name))
    assert done.exit_code == 6 and "use the .vec file it writes beside it" in done.stderr
    assert entries(caches) == []


def test_a_folder_is_no_static_file(tmp_path: Path) -> None:
    done = run_cli("neighbors", "cat", "-m", str(tmp_path))
    assert done.exit_code == 6 and "has no config.json" in done.stderr


def test_a_word_seen_twice_keeps_its_first_row_with_a_note_on_every_run(
    tmp_path: Path, caches: dict[str, Path]
) -> None:
    path = write(tmp_path, ROWS + b"cat 0 1 0\ndog 1 1 1\ndog 2 2 2\n")
    for run in ("first", "warm"):  # the warm run opens the entry the first built, and is told as well
        done = run_cli("vector", "cat", "-m", str(path), "--json")
        assert done.exit_code == 0
        said = "2 words appear more than once (the first: 'cat'); each keeps its first row"
        assert done.stderr.count(said) == 1, (run, done.stderr)
        assert json.loads(done.stdout)["items"][0]["vector"] == [1.0, 0.0, 0.0]
        assert len(entries(caches)) == 1
    one = write(tmp_path, ROWS + b"queen 0 1 0\n", "one.txt")
    assert (
        "1 word appears more than once (the first: 'queen')"
        in run_cli("vector", "cat", "-m", str(one)).stderr
    )
    assert "more than once" not in run_cli("vector", "cat", "-m", str(write(tmp_path, ROWS, "no.txt"))).stderr
    kv = KeyedVectors.load_word2vec_format(str(path), no_header=True)
    table = static.read_table(path, "utf-8", "t.txt")
    assert table.keys == [k for k in kv.index_to_key if k is not None]  # gensim adds a None key
    assert np.array_equal(table.rows, kv.vectors[: len(table.keys)])


class Recorder:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.bars: list[tuple[str, int, int]] = []

    def note(self, message: str) -> None:
        self.notes.append(message)

    @contextlib.contextmanager
    def progress(self, label: str, total: int) -> Iterator[Task]:
        done = [0]

        class Counted:
            def advance(self, n: int) -> None:
                done[0] += n

        yield Counted()
        self.bars.append((label, total, done[0]))


@pytest.mark.parametrize("kind", ["text", "text with a header", "binary"])
def test_reading_shows_progress_over_the_whole_file(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(static, "READ_BLOCK", 4096)  # the file is read in many blocks, joined in order
    rng = np.random.default_rng(5)
    words = [f"w{i}".encode() for i in range(static.BLOCK * 2 + 7)]
    vectors = rng.standard_normal((len(words), 4)).astype(np.float32)
    if kind.startswith("text"):
        data = (f"{len(words)} 4\n".encode() if kind != "text" else b"") + b"".join(
            w + b" " + " ".join(map(str, v)).encode() + b"\n" for w, v in zip(words, vectors, strict=True)
        )
    else:
        data = binary([(w, list(map(float, v))) for w, v in zip(words, vectors, strict=True)])
    path = write(tmp_path, data)
    reporter = Recorder()
    table = static.read_table(path, "utf-8", "t.txt", reporter)
    assert np.array_equal(table.rows, vectors) and len(table.keys) == len(words)
    # reading the file, then building from it: each bar runs over the whole file
    assert reporter.bars == [
        ("reading t.txt", len(data), len(data)),
        ("building the cache entry of t.txt", len(data), len(data)),
    ]


@pytest.mark.parametrize("width", [80, 120])
def test_the_bar_of_a_first_use_stays_on_one_line(tmp_path: Path, width: int) -> None:
    """At 80 columns rich wrapped the bytes' column ("MB" on a line of its own) under a long path."""
    import io
    import re

    from rich.console import Console

    from gpt2emb.output.progress import Reporter

    rows = b"".join(f"w{i} {i % 7} 0.5 {i % 3}\n".encode() for i in range(static.BLOCK * 3))
    folder = tmp_path / "a folder with a long name" / "and another below it"
    folder.mkdir(parents=True)
    path = write(folder, rows, "glove.6B.300d.txt")
    reporter = Reporter()
    out = io.StringIO()
    reporter._err = Console(file=out, width=width, height=24, force_terminal=True, color_system=None)
    static.read_table(path, "utf-8", str(path), reporter)
    lines = {line for line in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.getvalue()))}
    drawn = [line for line in lines if line.strip()]
    bytes_done = re.compile(r" [0-9.]+/[0-9.]+ [kM]B ")  # each line is whole: the bytes are on it
    assert drawn and all(bytes_done.search(line) and len(line) <= width for line in drawn), drawn
    bars = ("reading ", "building the cache")
    assert all(line.startswith(bars) and "glove.6B.300d.txt" in line for line in drawn), drawn
    assert {line.startswith(bars[0]) for line in drawn} == {True, False}, drawn  # both bars were drawn


def test_a_file_changed_while_read_is_refused_and_nothing_cached(
    tmp_path: Path, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, ROWS)
    read = static.read_table

    def read_then_change(*args: object, **kwargs: object) -> static.Table:
        table = read(*args, **kwargs)  # type: ignore[arg-type]
        path.write_bytes(ROWS + b"emu 1 1 1\n")  # another program writes the file meanwhile
        return table

    monkeypatch.setattr(static, "read_table", read_then_change)
    done = run_cli("vector", "cat", "-m", str(path))
    assert done.exit_code == 6 and "changed while being read; run the command again" in done.stderr
    assert entries(caches) == []


def test_a_build_that_cannot_write_leaves_no_temporary_folder(
    tmp_path: Path, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk in the cache: the answer comes from a temporary entry, and the cache keeps no part-built
    folder of it."""
    import errno

    from gpt2emb.store import writing

    path = write(tmp_path, ROWS)
    written = writing.write

    def full_in_cache(to: Path, content: bytes | np.ndarray) -> str:
        if to.is_relative_to(caches["cache"]) and to.name == "wte_norm.npy":
            raise OSError(errno.ENOSPC, "No space left on device")
        return written(to, content)

    monkeypatch.setattr(writing, "write", full_in_cache)
    done = run_cli("vector", "cat", "-m", str(path), "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["items"][0]["vector"] == [1.0, 0.0, 0.0]
    assert "working without it this time" in done.stderr
    left = [p.name for p in caches["cache"].rglob("*") if ".tmp-" in p.name]
    assert left == [] and entries(caches) == []


def test_the_entry_has_the_shape_of_a_static_table(tmp_path: Path) -> None:
    from gpt2emb.registry import Shape

    e = gpt2emb.open(write(tmp_path, ROWS))
    assert e.model.shape == Shape(4, 3, 0, 0, 0, "static") and e.model.static
    assert repr(e).endswith(": 4 keys x 3>")


def test_keys_a_refusal_and_a_text_are_looked_up_whole(tmp_path: Path) -> None:
    """A missing word names at most 5 nearest keys, and its lowercase only where that is a key; a text's rows
    are the key it is, or none."""
    path = write(tmp_path, b"".join(f"cat{i} {i} 1 0\n".encode() for i in range(8)) + ROWS)
    done = run_cli("vector", "cats", "-m", str(path))
    assert done.exit_code == 2 and "the nearest keys: " in done.stderr
    named = done.stderr.partition("the nearest keys: ")[2].strip().split(", ")
    assert len(named) == 5 and set(named) <= {"cat", *(f"cat{i}" for i in range(8))}, named
    done = run_cli("vector", "Cats", "-m", str(path))  # its lowercase is no key either: not said to be one
    assert done.exit_code == 2 and "its lowercase" not in done.stderr
    e = gpt2emb.open(path)
    assert e.vocab.tokenize("king") == (10,) and e.vocab.tokenize("kin") == ()


def test_the_entry_is_warm_and_a_changed_file_is_read_again(tmp_path: Path, caches: dict[str, Path]) -> None:
    path = write(tmp_path, ROWS)
    first = run_json("neighbors", "king", "-m", str(path), "-k", "1")["items"][0]["neighbors"][0]
    assert first["token"] == "queen"
    (manifest,) = entries(caches)
    built = manifest.stat().st_mtime_ns
    run_json("neighbors", "king", "-m", str(path), "-k", "1")
    assert entries(caches) == [manifest] and manifest.stat().st_mtime_ns == built  # opened, not built
    write(tmp_path, ROWS.replace(b"dog 0.5 0.5 0", b"dog 0 0.0 5.0"))  # the same size
    again = run_json("neighbors", "king", "-m", str(path), "-k", "1")["items"][0]["neighbors"][0]
    assert again["token"] == "dog"
    assert len(entries(caches)) == 2
    listed = run_json("cache", "list")
    assert [(e["name"], e["outdated"]) for e in sorted(listed["entries"], key=lambda e: e["outdated"])] == [
        (str(path), False),
        (str(path), True),
    ]
    assert [e["outdated"] for e in run_json("cache", "clear", "--outdated")["entries"]] == [True]
    verified = run_json("cache", "verify")
    assert [e["ok"] for e in verified["entries"]] == [True]
    wte = next((caches["cache"] / "static").glob("*/*/wte.npy"))
    wte.write_bytes(wte.read_bytes()[:-4] + b"\x00\x00\x80\x7f")
    assert run_cli("cache", "verify").exit_code != 0
    assert run_json("cache", "verify", "--repair")["entries"][0]["repaired"] == "rebuilt"
    assert run_json("vector", "cat", "-m", str(path))["items"][0]["vector"] == [1.0, 0.0, 0.0]
    assert run_json("cache", "clear", str(path))["entries"]
    assert entries(caches) == []


def test_an_unwritable_cache_answers_from_a_temporary_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a model does: a cache folder that cannot be made (a file in the way) is no internal error."""
    path = write(tmp_path, ROWS)
    blocker = write(tmp_path, b"not a folder", "a-file")
    monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(blocker / "cache"))
    for _ in range(2):  # nothing was kept: the second run reads the file again, and says so again
        done = run_cli("neighbors", "king", "-m", str(path), "-k", "1", "--json")
        assert done.exit_code == 0, done.stderr
        assert json.loads(done.stdout)["items"][0]["neighbors"][0]["token"] == "queen"
        assert done.stderr.count("working without it this time") == 1, done.stderr
    assert blocker.read_bytes() == b"not a folder"


@pytest.mark.parametrize(
    ("args", "headers"),
    [
        (["neighbors", "king", "-k", "3"], ["rank   key       id   cosine"]),
        (
            ["analogy", "cat", "dog", "king", "-k", "2"],
            ["rank   key", "(among all keys)", "word   key", "1 key is"],
        ),
        (["similarity", "cat", "dog"], ['key         "cat"']),
    ],
)
def test_the_tables_call_a_static_files_rows_keys(
    tmp_path: Path, args: list[str], headers: list[str]
) -> None:
    path = write(tmp_path, ROWS)
    done = run_cli(*args, "-m", str(path))
    assert done.exit_code == 0, done.stderr
    for header in headers:
        assert header in done.stdout, done.stdout
    assert "token" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert json.loads(run_cli(*args, "-m", str(path), "--json").stdout)["static"] is True


@pytest.mark.parametrize(
    "args",
    [
        ["neighbors", "cat", "--exact"],
        ["neighbors", "cat", "--pool", "first"],
        ["neighbors", "cat", "--whole-words"],
        ["neighbors", "cat", "--fold"],
        ["analogy", "cat", "dog", "king", "--pool", "strict"],
        ["vector", "cat", "--exact"],
        ["similarity", "cat", "dog", "--pool", "first"],
        ["export", "--format", "word2vec", "-o", "out.txt", "--whole-words"],
    ],
)
def test_the_options_about_tokens_are_refused(tmp_path: Path, args: list[str]) -> None:
    path = write(tmp_path, ROWS)
    done = run_cli(*args, "-m", str(path))
    assert done.exit_code == 2
    assert (
        "is about tokens, and" in done.stderr and "is a static word table: its words are keys" in done.stderr
    )


@pytest.mark.parametrize(
    ("args", "lacks"),
    [
        (["positions", "0", "1"], "it has no position table"),
        (["positions", "--heatmap"], "it has no position table"),
        (["sizes"], "it has no layers"),
        (["tying"], "it has no output layer"),
        (["input", "cat"], "it has no tokenizer and no position table"),
        (["context", "cat", "a cat sat"], "it has no layers"),
        (["logits", "cat"], "it has no layers and no output layer"),
    ],
)
def test_a_command_about_structure_refuses_a_static_file(
    tmp_path: Path, args: list[str], lacks: str, caches: dict[str, Path]
) -> None:
    path = write(tmp_path, ROWS, "glove.txt")
    done = run_cli(*args, "-m", str(path))
    assert done.exit_code == 2, done.stderr
    assert f"{path} is a static word table: " in done.stderr and lacks in done.stderr
    assert done.stderr.count("\n") == 1


def test_lab_runs_its_word_parts_and_refuses_parts_4_and_5(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    words = ["king", "man", "woman", "cat", *(f"w{i}" for i in range(12))]
    path = write(
        tmp_path, b"".join(f"{w} {' '.join(map(str, rng.standard_normal(3)))}\n".encode() for w in words)
    )
    done = run_cli("lab", "-m", str(path))
    assert done.exit_code == 2
    lacks = "it has no layers, so it has no sizes but its table's (gpt2emb vector shows them)"
    assert done.stderr == f"gpt2emb: part 4: {path} is a static word table: {lacks}\n"


def test_the_static_file_is_never_written_over(tmp_path: Path) -> None:
    path = write(tmp_path, ROWS)
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    for out in (path, link):
        done = run_cli("export", "-m", str(path), "--format", "word2vec", "-o", str(out))
        assert done.exit_code == 2 and "is the static word table given as -m" in done.stderr
    svg = write(tmp_path, ROWS, "table.svg")
    done = run_cli("neighbors", "cat", "-m", str(svg), "-k", "2", "--figure", str(svg))
    assert done.exit_code == 2 and "is the static word table given as -m" in done.stderr
    assert path.read_bytes() == ROWS and svg.read_bytes() == ROWS


def test_the_handle_stdin_and_encoding(tmp_path: Path, stdin: object) -> None:
    path = write(tmp_path, ROWS)
    e = gpt2emb.open(path)
    assert [n.token for n in e.neighbors("king", k=1).items[0].neighbors] == ["queen"]
    assert e.similarity(["cat", "dog"]).matrix[0][1] == pytest.approx(0.5**0.5, abs=1e-6)
    stdin(b"king\nnope\ncat\n")  # type: ignore[operator]
    done = run_cli("neighbors", "-", "-m", str(path), "-k", "1", "--jsonl")
    assert done.exit_code == 7 and 'nope\\" is not a key of' in done.stderr
    found = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(f["word"], f["neighbors"][0]["token"]) for f in found] == [("king", "queen"), ("cat", "dog")]
    latin = write(tmp_path, ROWS.replace(b"queen", b"reine\xe9"), "latin.txt")
    assert run_json("vector", "id:3", "-m", str(latin), "--encoding", "latin-1")["items"][0]["tokens"] == [
        {"id": 3, "token": "reine\u00e9"}
    ]
    done = run_cli("vector", "cat", "--encoding", "latin-1")
    assert done.exit_code == 2 and "--encoding is for a static word table's file" in done.stderr
    done = run_cli("vector", "cat", "-m", str(latin), "--encoding", "no-such")
    assert done.exit_code == 2 and "is not an encoding Python knows" in done.stderr
    done = run_cli("vector", "cat", "-m", str(latin), "--encoding", "utf-16")
    assert done.exit_code == 2 and "does not write spaces and digits as ASCII does" in done.stderr


WORDS = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=6)


@FUZZ
@given(
    words=st.lists(WORDS, min_size=1, max_size=6, unique=True),
    dim=st.integers(1, 4),
    data=st.data(),
    binary_format=st.booleans(),
    header=st.booleans(),
)
def test_any_table_gensim_writes_reads_back_as_gensim_reads_it(
    tmp_path: Path, words: list[str], dim: int, data: st.DataObject, binary_format: bool, header: bool
) -> None:
    floats = st.floats(-1e6, 1e6, allow_nan=False, width=32)
    rows = np.array(
        data.draw(
            st.lists(st.lists(floats, min_size=dim, max_size=dim), min_size=len(words), max_size=len(words))
        ),
        dtype=np.float32,
    )
    kv = KeyedVectors(dim)
    kv.add_vectors(words, rows)
    path = tmp_path / "t.vec"
    kv.save_word2vec_format(str(path), binary=binary_format, write_header=header or binary_format)
    back = KeyedVectors.load_word2vec_format(
        str(path), binary=binary_format, no_header=not (header or binary_format)
    )
    table = static.read_table(path, "utf-8", "t.vec")
    assert table.keys == list(back.index_to_key) and np.array_equal(table.rows, back.vectors)
