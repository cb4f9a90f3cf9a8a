"""batch.py: words from stdin (`-`), --jsonl and --strict, and the Python handle.

Real processes and pipes are used where the process is the point: a reader that leaves early, a producer
still writing, Ctrl-C. Elsewhere the tests run in-process, with stdin a file descriptor, as
`gpt2emb neighbors - < words.txt` has it.

The promise: each line gets the answer its word gets alone, bit for bit. A batch is a different matrix
product, but the figures shown are scored exactly, row by row. A bad line is reported with its number while
the others are still answered (exit 7). A reader that leaves early (`| head`) ends the run quietly.

The stream's failures are named by line number and byte offset: a last line without its end, a line too
long to keep, a byte that is not UTF-8. These are counted here from the stream as written. each() splits a
block at its first failed line and lets a damaged cache entry through; this is watched through its own
prepare and answer."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpt2emb import batch, limits
from gpt2emb.errors import DamagedEntry, UsageError
from gpt2emb.report import QuietReporter

from conftest import run_cli, run_json
from fakehub import FakeHub

EXE = str(Path(sys.executable).with_name("gpt2emb"))
WORDS = ["cat", "king", "queen", "Paris", "hello", "kitten", "dog"]
# more lines than a block (batch.BLOCK = 512): every id of the tiny vocabulary, twice, then the words
MANY = [f"id:{i}" for i in range(343)] * 2 + WORDS


@dataclass(frozen=True)
class Fed:
    """A run's exit code and output, as subprocess.run(capture_output=True) gives them."""

    returncode: int
    stdout: bytes
    stderr: bytes


Feed = Callable[[list[str], bytes | str], Fed]


@pytest.fixture
def feed(stdin: Callable[[bytes], None]) -> Feed:
    """Run a command in-process with the given stdin."""

    def run(args: list[str], data: bytes | str) -> Fed:
        stdin(data.encode("utf-8") if isinstance(data, str) else data)
        result = run_cli(*args)
        return Fed(result.exit_code, result.stdout_bytes, result.stderr_bytes)

    return run


def lines_of(proc: Fed) -> list[Any]:
    return [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]


def test_each_line_gets_the_answer_its_word_gets_alone(hub: FakeHub, feed: Feed) -> None:
    proc = feed(["neighbors", "-", "-k", "5", "--jsonl"], "\n".join(MANY) + "\n")
    assert proc.returncode == 0, proc.stderr
    got = lines_of(proc)
    assert [g["word"] for g in got] == MANY
    for word, answer in zip(MANY, got, strict=True):
        if word in WORDS or word.endswith(("0", "7")):  # a sample of the ids, every word
            (alone,) = run_json("neighbors", word, "-k", "5")["items"]
            assert answer == alone, word  # the same exact computation per row, whatever the batch
    whole = feed(["neighbors", "-", "-k", "5", "--json"], "\n".join(MANY))
    assert json.loads(whole.stdout)["items"] == got  # --json: the same objects in one document


def test_vector_and_analogy_and_similarity_read_stdin(hub: FakeHub, feed: Feed) -> None:
    vector = feed(["vector", "-", "--jsonl"], "king\nqueen\n")
    assert lines_of(vector) == run_json("vector", "king", "queen")["items"]
    analogy = feed(["analogy", "-", "-k", "3", "--jsonl"], "king man woman\nParis France cat\n")
    assert lines_of(analogy) == [
        run_json("analogy", "king", "man", "woman", "-k", "3"),
        run_json("analogy", "Paris", "France", "cat", "-k", "3"),
    ]
    assert lines_of(analogy)[0]["results"][0]["token"] == " queen"
    batch = json.loads(feed(["analogy", "-", "-k", "3", "--json"], "king man woman\n").stdout)
    assert batch["items"] == lines_of(analogy)[:1]
    similarity = feed(["similarity", "-", "--json"], "cat\ncats\ndog\n")
    assert json.loads(similarity.stdout) == run_json("similarity", "cat", "cats", "dog")


def test_comments_blank_lines_and_a_byte_order_mark(hub: FakeHub, feed: Feed) -> None:
    proc = feed(["vector", "-", "--jsonl"], b"\xef\xbb\xbfking\n\n# a comment\n  \r\nqueen\r\n\t cat \n")
    assert proc.returncode == 0, proc.stderr
    assert [d["word"] for d in lines_of(proc)] == ["king", "queen", "cat"]  # the spaces around a word dropped
    utf16 = feed(["vector", "-"], "king\nqueen\n".encode("utf-16"))
    assert utf16.returncode == 2
    assert utf16.stderr.decode().startswith("gpt2emb: stdin is UTF-16 text, and gpt2emb reads UTF-8")


def test_a_bad_line_is_reported_with_its_number_and_the_others_answered(hub: FakeHub, feed: Feed) -> None:
    stdin = b"cat\n# skipped\nid:99999\n\xff\xfeking\nking\n"
    proc = feed(["neighbors", "-", "-k", "3", "--jsonl"], stdin)
    assert proc.returncode == 7  # some lines failed; not 1, which is a bug
    assert [d["word"] for d in lines_of(proc)] == ["cat", "king"]
    errors = [json.loads(line)["error"] for line in proc.stderr.decode().splitlines()]
    assert [(e["line"], e["code"]) for e in errors] == [(3, 2), (4, 2)]
    assert errors[0]["message"].startswith("line 3: id:99999 does not exist")
    assert "line 4: it is not UTF-8 text" in errors[1]["message"]
    table = feed(["neighbors", "-", "-k", "3"], stdin)
    assert table.returncode == 7
    assert table.stderr.decode().splitlines()[0].startswith("gpt2emb: line 3: id:99999 does not exist")
    assert table.stdout.decode().count("nearest to") == 2


def test_strict_stops_at_the_first_bad_line(hub: FakeHub, feed: Feed) -> None:
    proc = feed(["analogy", "-", "--strict", "--jsonl"], "king man woman\nking man\nParis France cat\n")
    assert proc.returncode == 2
    assert len(lines_of(proc)) == 1  # the line before it was answered, none after
    (error,) = [json.loads(line)["error"] for line in proc.stderr.decode().splitlines()]
    assert error["message"].startswith('line 2: "king man" is not three words A B C')
    assert error["line"] == 2


@pytest.mark.parametrize("form", [["--jsonl"], []])
def test_a_reader_that_leaves_early_ends_the_run_quietly(
    hub: FakeHub, tmp_path: Path, form: list[str]
) -> None:
    words = tmp_path / "words.txt"
    words.write_text("\n".join(MANY * 30) + "\n", encoding="utf-8")  # 10,500 lines
    with words.open("rb") as stdin:
        producer = subprocess.Popen([EXE, "neighbors", "-", *form], stdin=stdin, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)  # fmt: skip
        assert producer.stdout is not None
        head = subprocess.run(["head", "-n", "2"], stdin=producer.stdout, capture_output=True, timeout=300)
        producer.stdout.close()
        _, err = producer.communicate(timeout=300)
    shown = head.stdout.decode().splitlines()
    if form:
        assert [json.loads(line)["word"] for line in shown] == MANY[:2]
    else:
        assert shown[0].startswith("nearest to")
    assert producer.returncode == 0
    assert err == b""  # no traceback, no "Exception ignored" at exit


def test_a_producer_still_writing_does_not_hold_the_run(hub: FakeHub) -> None:
    """The run ends (--strict, Ctrl-C) while the reader thread still waits for more input: quietly, with its
    own exit code, and without waiting for the producer."""
    producer = [sys.executable, "-c", "import sys, time; print(sys.argv[1], flush=True); time.sleep(60)"]
    with subprocess.Popen([*producer, "id:99999"], stdout=subprocess.PIPE) as source:
        strict = subprocess.run([EXE, "neighbors", "-", "--strict", "--json"], stdin=source.stdout,
                                capture_output=True, timeout=30, env=os.environ)  # fmt: skip
        source.kill()
    assert strict.returncode == 2, strict.stderr
    assert json.loads(strict.stderr)["error"]["line"] == 1  # one line on stderr: no "Fatal Python error"
    with (
        subprocess.Popen([*producer, "cat"], stdout=subprocess.PIPE) as source,
        subprocess.Popen(
            [EXE, "neighbors", "-", "--jsonl"],
            # Ctrl-C's default, as a shell gives its foreground job: a suite started in the background
            # (cmd &) hands its processes SIGINT ignored, and gpt2emb rightly keeps it so
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            stdin=source.stdout,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ,
        ) as run,  # fmt: skip
    ):
        assert run.stdout is not None and run.stderr is not None
        assert json.loads(run.stdout.readline())["word"] == "cat"  # answered while the producer still runs
        run.send_signal(signal.SIGINT)  # Ctrl-C
        assert run.wait(timeout=30) == 130
        assert run.stderr.read() == b""
        source.kill()


def test_questions_from_stdin_as_tables(hub: FakeHub, feed: Feed) -> None:
    proc = feed(["analogy", "-", "-k", "2"], "king man woman\n")
    assert proc.returncode == 0, proc.stderr
    assert "king - man + woman in gpt2" in proc.stdout.decode()
    assert '" queen"' in proc.stdout.decode()


def test_what_can_be_checked_before_opening_is(
    hub: FakeHub, feed: Feed, offline: None, tmp_path: Path
) -> None:
    # offline with an empty cache: a bad -k or --restrict is exit 2, not 4 (never fetch for bad input)
    for bad in (["-k", "0"], ["--restrict", "0"], ["--among", str(tmp_path / "none.txt")]):
        proc = feed(["neighbors", "-", *bad], "cat\n")
        assert proc.returncode == 2, (bad, proc.stderr)


def test_one_matrix_has_a_size_limit(hub: FakeHub, feed: Feed) -> None:
    proc = feed(["similarity", "-"], "cat\n" * 1001)
    assert proc.returncode == 2
    assert b"at most 1,000 words" in proc.stderr


def test_the_handle_refuses_bad_arguments_with_project_errors(hub: FakeHub, tmp_path: Path) -> None:
    import gpt2emb
    from gpt2emb.errors import Gpt2embError

    m = gpt2emb.open("gpt2")
    assert "open" in dir(gpt2emb) and repr(m) == "<gpt2emb gpt2: 343 tokens x 32>"
    for call, said in (
        (
            lambda: m.neighbors("cat", pool="max"),
            "'max' is not a pool: choose one of 'mean', 'first', 'strict'",
        ),
        (lambda: m.analogy("king", "man", "woman", method="cosmul"), "'cosmul' is not a method"),
        (lambda: m.neighbors(5), "words are given as a str or a list of str"),  # type: ignore[arg-type]
        (lambda: m.neighbors([]), "give at least one word"),
        (lambda: m.neighbors("cat", k=2.5), "k must be a whole number"),  # type: ignore[arg-type]
    ):
        with pytest.raises(Gpt2embError) as refused:
            call()
        assert str(refused.value).startswith(said)
    assert m.positions("0-2").positions == m.positions([0, 1, 2]).positions == (0, 1, 2)
    assert m.positions(3).positions == (3,)
    # the heatmap of positions --heatmap, and its refusals in Python's words
    assert m.position_map(cells=4).to_dict() == run_json("positions", "--heatmap", "--cells", "4")
    drawn = m.position_map(cells=4, png=tmp_path / "wpe.png")  # a Path, as a notebook gives it
    assert drawn.png == str(tmp_path / "wpe.png") and (tmp_path / "wpe.png").read_bytes()[:4] == b"\x89PNG"
    refusals: list[tuple[Any, str]] = [
        (lambda: m.position_map(cells=1), "cells must be from 2 to 256, not 1"),
        (lambda: m.position_map(png=" "), "png needs a file name, such as png='wpe.png'"),
    ]
    for call, said in refusals:
        with pytest.raises(Gpt2embError, match=re.escape(said)):
            call()


def test_the_handle_says_what_it_fetches_and_notes(
    hub: FakeHub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import gpt2emb

    m = gpt2emb.open()  # stderr is not a terminal here: each fetch is named in a line, with its size
    fetched = r"gpt2emb: fetching gpt2 embeddings \([0-9]+\.[0-9] kB\)"
    assert re.fullmatch(fetched + "\n", capsys.readouterr().err)
    wte = m.model.path / "wte.npy"
    wte.write_bytes(wte.read_bytes()[:-100] + b"\0" * 100)
    gpt2emb.open("gpt2")  # a damaged entry: the note, then the fetch again
    err = capsys.readouterr().err.splitlines()
    assert (
        err[0].startswith("gpt2emb: note: the cache entry for gpt2 cannot be trusted") and "damaged" in err[0]
    )
    assert len(err) == 2 and re.fullmatch(fetched, err[1])
    gpt2emb.open("gpt2").export("word2vec", tmp_path / "out.txt", limit=3)  # outside the cache: kept.py
    assert capsys.readouterr().err == "gpt2emb: exporting wte of gpt2 (0.4 kB)\n"  # cached: only the export
    quiet = gpt2emb.open("gpt2", reporter=QuietReporter())
    quiet.export("word2vec", tmp_path / "out.txt", limit=3)
    assert capsys.readouterr().err == ""


def test_dash_is_alone_and_for_one_model(hub: FakeHub, feed: Feed) -> None:
    mixed = run_cli("neighbors", "cat", "-")
    assert mixed.exit_code == 2
    assert '--exact " -"' in mixed.stderr
    two = feed(["neighbors", "-", "-m", "gpt2", "-m", "roberta"], "cat\n")
    assert two.returncode == 2
    assert b"takes one model" in two.stderr
    assert run_cli("neighbors", "cat", "--strict").exit_code == 2
    assert run_cli("neighbors", "-", "--json", "--jsonl").exit_code == 2
    several = run_cli("neighbors", "cat", "--jsonl", "-m", "gpt2", "-m", "roberta")
    assert several.exit_code == 2
    assert "--jsonl takes one model" in several.stderr
    # the token " -" itself stays reachable
    (item,) = run_json("vector", "--exact", " -")["items"]
    assert "".join(t["token"] for t in item["tokens"]) == " -"


def test_jsonl_with_words_on_the_command_line(hub: FakeHub, feed: Feed) -> None:
    proc = feed(["neighbors", "cat", "king", "-k", "3", "--jsonl"], "")
    assert lines_of(proc) == run_json("neighbors", "cat", "king", "-k", "3")["items"]


def test_the_handle_answers_as_the_commands_do(hub: FakeHub, caches: dict[str, Path], tmp_path: Path) -> None:
    import gpt2emb

    m = gpt2emb.open("gpt2")
    assert m.neighbors("cat", k=5).to_dict() == run_json("neighbors", "cat", "-k", "5")
    assert m.vector(["king", "queen"]).to_dict() == run_json("vector", "king", "queen")
    assert m.analogy("king", "man", "woman", k=3, method="3cosmul").to_dict() == run_json(
        "analogy", "king", "man", "woman", "-k", "3", "--method", "3cosmul"
    )
    assert m.similarity(["cat", "dog"]).to_dict() == run_json("similarity", "cat", "dog")
    assert m.positions([0, 1, "2-3"]).to_dict() == run_json("positions", "0", "1", "2-3")
    assert m.input("hello king").to_dict() == run_json("input", "hello king")
    mine, theirs = tmp_path / "handle.txt", tmp_path / "cli.txt"
    assert m.export("word2vec", mine, limit=20).rows == 20
    assert run_json("export", "--format", "word2vec", "--limit", "20", "-o", str(theirs))["rows"] == 20
    assert mine.read_bytes() == theirs.read_bytes()
    # opened once: with its cache entry gone and the Hub empty, the handle still answers from what it holds
    shutil.rmtree(caches["cache"])
    hub.reset()
    assert m.neighbors("queen", k=2, pool="first").items[0].neighbors[0].token == " woman"


def test_the_handle_streams_words_as_stdin_does(hub: FakeHub, tmp_path: Path) -> None:
    """each_* take words as stdin's lines are read (a file opened as text is one): an answer each, in order,
    the answer its word gets alone; a word that fails in its place."""
    import gpt2emb
    from gpt2emb.batch import FailedLine

    m = gpt2emb.open("gpt2")
    listed = tmp_path / "words.txt"
    listed.write_text("cat\n\n# a comment\n  dog \nid:99999\nking\n", encoding="utf-8")
    with listed.open(encoding="utf-8") as words:
        answers = list(m.each_neighbors(words, k=3))
    assert [a.word if not isinstance(a, FailedLine) else a.line.number for a in answers] == [
        "cat",
        "dog",
        5,
        "king",
    ]
    alone = run_json("neighbors", "cat", "dog", "king", "-k", "3")["items"]
    assert [a.to_dict() for a in answers if not isinstance(a, FailedLine)] == alone
    failing = answers[2]
    assert isinstance(failing, FailedLine) and failing.message.startswith("line 5: id:99999 does not exist")
    vectors = list(m.each_vector(w for w in ["king", "queen"]))
    assert [v.to_dict() for v in vectors if not isinstance(v, FailedLine)] == run_json(
        "vector", "king", "queen"
    )["items"]
    (question,) = m.each_analogy(["king man woman"], k=2)
    assert not isinstance(question, FailedLine)
    assert question.to_dict() == run_json("analogy", "king", "man", "woman", "-k", "2")
    matrix, failed = m.each_similarity(["cat", "dog", "id:99999"])
    assert matrix is not None and matrix.to_dict() == run_json("similarity", "cat", "dog")
    assert [f.line.number for f in failed] == [3]
    for bad, said in (("cat", "not 'cat'"), ([b"cat"], "word 1 is not a str")):
        with pytest.raises(gpt2emb.Gpt2embError, match=said):
            list(m.each_vector(bad))  # type: ignore[arg-type]


def test_importing_the_package_loads_no_numpy() -> None:
    code = "import sys, gpt2emb; gpt2emb.Embeddings; print('numpy' in sys.modules)"
    lazy = subprocess.run([sys.executable, "-c", "import sys, gpt2emb; print('numpy' in sys.modules)"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert lazy.stdout.strip() == "False"
    reached = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert reached.stdout.strip() == "True"  # reaching Embeddings loads the core (open does, when called)


@pytest.mark.parametrize("bad", ["cat\n\n", "id:1\n"])
def test_similarity_needs_two_words(hub: FakeHub, feed: Feed, bad: str) -> None:
    proc = feed(["similarity", "-"], bad)
    assert proc.returncode == 2
    assert b"fewer than two words" in proc.stderr


def test_failed_is_the_older_name_of_failed_line() -> None:
    """Failed, the name the docs once showed for a line without an answer, still is that class."""
    from gpt2emb import batch

    assert batch.Failed is batch.FailedLine  # its older name, kept working


def test_the_python_page_example_runs(hub: FakeHub) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"```python\n(.+?)\n```", page, re.DOTALL)
    scope: dict[str, Any] = {}
    exec(compile(example, "docs/python.md", "exec"), scope)  # the example as a reader pastes it
    assert [n.token for n in scope["r"].items[0].neighbors] == [
        n["token"] for n in run_json("neighbors", "cat", "-k", "5")["items"][0]["neighbors"]
    ]
    nearest = [
        item["neighbors"][0]["token"] for item in run_json("neighbors", "cat", "dog", "-k", "3")["items"]
    ]
    assert scope["tops"][:2] == nearest and scope["tops"][2].startswith("line 3: id:99999 does not exist")
    assert scope["problem"] == "<|endoftext|> is a special token, not a word: ask for its row by id (id:0)"


@pytest.mark.parametrize(
    "options", [["--whole-words"], ["--restrict", "300"], ["--fold"], ["--among", "LIST"]]
)
def test_candidates_and_forms_from_stdin(
    hub: FakeHub, feed: Feed, tmp_path: Path, options: list[str]
) -> None:
    listed = tmp_path / "animals.txt"
    listed.write_text("cat\ncats\nkitten\ndog\nking\n", encoding="utf-8")
    options = [str(listed) if o == "LIST" else o for o in options]
    words = ["cat", "king", "id:300", "queen"]
    proc = feed(["neighbors", "-", "-k", "3", "--jsonl", *options], "\n".join(words))
    assert proc.returncode == 0, proc.stderr
    assert lines_of(proc) == run_json("neighbors", *words, "-k", "3", *options)["items"]
    whole = json.loads(feed(["neighbors", "-", "-k", "3", "--json", *options], "\n".join(words)).stdout)
    alone = run_json("neighbors", *words, "-k", "3", *options)
    assert whole == alone  # the document: candidates, fold and notes too
    analogy = feed(["analogy", "-", "-k", "2", "--jsonl", *options], "king man woman\n")
    if "--fold" in options:
        assert analogy.returncode == 2  # --fold is for neighbors
    else:
        assert lines_of(analogy) == [run_json("analogy", "king", "man", "woman", "-k", "2", *options)]


def test_an_among_list_from_a_pipe_is_read_once(hub: FakeHub, feed: Feed, tmp_path: Path) -> None:
    fifo = tmp_path / "animals"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("w", encoding="utf-8") as f:
            f.write("cat\ndog\nkitten\n")

    writer = threading.Thread(target=write)
    writer.start()
    proc = feed(["neighbors", "-", "-k", "2", "--among", str(fifo), "--jsonl"], "cat\n")
    writer.join(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert [n["token"] for n in lines_of(proc)[0]["neighbors"]] == [" kitten", " dog"]


def test_what_is_said_of_all_lines_is_said_once(hub: FakeHub, feed: Feed, tmp_path: Path) -> None:
    listed = tmp_path / "few.txt"
    listed.write_text("cat\ndog\nkitten\n", encoding="utf-8")
    tables = feed(["neighbors", "-", "-k", "5", "--among", str(listed)], "cat\nking\n")
    assert tables.returncode == 0, tables.stderr
    shown = tables.stdout.decode()
    assert shown.count("nearest to") == 2 and shown.count("candidates:") == 1
    assert "cat: only 2 tokens are left to rank, fewer than the 5 asked for (-k)" in shown
    lines = feed(["neighbors", "cat", "-k", "5", "--among", str(listed), "--jsonl"], "")
    notes = [json.loads(line)["note"] for line in lines.stderr.decode().splitlines()]
    assert notes == ["cat: only 2 tokens are left to rank, fewer than the 5 asked for (-k)"]
    assert len(lines_of(lines)) == 1


def test_a_line_too_long_fails_alone(hub: FakeHub, feed: Feed) -> None:
    proc = feed(["vector", "-", "--jsonl"], "a" * 200_000 + "\ncat\n")
    assert proc.returncode == 7
    assert [d["word"] for d in lines_of(proc)] == ["cat"]
    assert json.loads(proc.stderr)["error"]["message"].startswith(
        "line 1: the line is longer than 65,536 bytes"
    )


def test_eval_takes_no_stream_options(hub: FakeHub, tmp_path: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text(": s\nking man queen woman\n", encoding="utf-8")
    for options in (["--jsonl"], ["--strict"], ["--json", "--jsonl"]):
        assert run_cli("analogy", "--eval", str(questions), *options).exit_code == 2, options
    pairs = tmp_path / "p.tsv"
    pairs.write_text("cat\tdog\t5\n", encoding="utf-8")
    assert run_cli("similarity", "--eval", str(pairs), "--strict").exit_code == 2


def test_a_message_names_an_option_as_its_caller_gave_it(hub: FakeHub, tmp_path: Path) -> None:
    """The same refusal names -k/--top on the command line and k from Python (errors.option), even when
    both run in one process, one after the other."""
    import gpt2emb

    m = gpt2emb.open("gpt2")
    cases: list[tuple[Any, list[str], str, str]] = [
        (
            lambda: m.neighbors("cat", k=0),
            ["neighbors", "cat", "-k", "0"],
            "k must be 1",
            "-k/--top must be 1",
        ),
        (
            lambda: m.neighbors("cat", restrict=0),
            ["neighbors", "cat", "--restrict", "0"],
            "restrict",
            "--restrict",
        ),
        (lambda: m.vector(""), ["vector", ""], "or use exact=True to look", "or use --exact to look"),
        (
            lambda: m.neighbors("gato", pool="strict"),
            ["neighbors", "gato", "--pool", "strict"],
            "use pool='mean' or pool='first', or",
            "use --pool mean or --pool first, or",
        ),
        (
            lambda: m.export("word2vec", tmp_path),
            ["export", "--format", "word2vec", "-o", str(tmp_path)],
            f"out='{tmp_path}' is a folder: fmt='word2vec' writes one file",
            f"-o {tmp_path} is a folder: --format word2vec writes one file",
        ),
    ]
    cases.append(
        (
            lambda: m.similarity(["cat"]),
            ["similarity", "cat"],
            "as in: similarity(['cat', 'cats', 'dog'])",
            "as in: similarity cat cats dog",
        )
    )
    for call, command, in_python, typed in cases:
        with pytest.raises(gpt2emb.Gpt2embError) as refused:
            call()
        assert in_python in str(refused.value) and typed not in str(refused.value)
        shown = run_cli(*command).stderr
        assert typed in shown and (in_python in typed or in_python not in shown)
    assert "(pool)" in str(m.vector("gato").items[0].note)  # a note names it as well
    assert "(--pool)" in run_json("vector", "gato")["items"][0]["note"]
    # a count computed with numpy is a count
    counted = m.neighbors("cat", k=np.int64(3), restrict=np.int32(300))  # type: ignore[arg-type]
    assert type(counted.k) is int and json.dumps(counted.to_dict())
    assert counted.to_dict() == run_json("neighbors", "cat", "-k", "3", "--restrict", "300")


def test_the_handle_takes_paths_and_refuses_the_rest(hub: FakeHub, tmp_path: Path) -> None:
    import gpt2emb
    from gpt2emb.errors import Gpt2embError

    listed = tmp_path / "few.txt"
    listed.write_text("cat\ndog\nkitten\n", encoding="utf-8")
    m = gpt2emb.open("gpt2")
    assert m.neighbors("cat", k=2, among=listed).to_dict() == run_json(
        "neighbors", "cat", "-k", "2", "--among", str(listed)
    )
    for call in (
        lambda: m.neighbors("cat", restrict="10"),  # type: ignore[arg-type]
        lambda: m.analogy(1, 2, 3),  # type: ignore[arg-type]
        lambda: m.positions(None),  # type: ignore[arg-type]
        lambda: m.export("word2vec", tmp_path / "v.txt", limit="3"),  # type: ignore[arg-type]
        lambda: gpt2emb.open(None),  # type: ignore[arg-type]
    ):
        with pytest.raises(Gpt2embError):
            call()


def read(*chunks: bytes) -> list[tuple[int, str, str]]:
    return [(line.number, line.text, line.problem) for line in batch.lines(iter(chunks))]


def test_a_last_line_without_its_end_is_numbered_after_the_others() -> None:
    assert read(b"cat\n# a comment\n\ndog") == [(1, "cat", ""), (4, "dog", "")]
    assert read(b"cat\n", b"d", b"og") == [(1, "cat", ""), (2, "dog", "")]


def test_a_last_line_too_long_to_keep_fails_with_its_number() -> None:
    long = b"x" * (batch.MAX_LINE + 1)
    too_long = f"the line is longer than {batch.MAX_LINE:,} bytes; a word is far shorter"
    assert read(b"cat\ndog\n", long) == [(1, "cat", ""), (2, "dog", ""), (3, "", too_long)]
    assert read(b"cat\n", long, b"\nking\n") == [(1, "cat", ""), (2, "", too_long), (3, "king", "")]


def test_a_line_past_the_stream_limit_is_refused_with_its_number() -> None:
    def endless() -> Iterator[bytes]:
        yield b"cat\ndog\n"
        while True:
            yield b"x" * (1 << 16)

    with pytest.raises(UsageError) as raised:
        for _ in batch.lines(endless()):
            pass
    assert str(raised.value) == (
        f"stdin's line 3 is longer than {limits.size(limits.MAX_LINE)}: - reads a word (or a question) a "
        "line, and this is no list of them"
    )


@pytest.mark.parametrize(("raw", "byte"), [(b"\xffcat", 1), (b"ca\xfft", 3), (b"caf\xc3", 4)])
def test_a_line_that_is_not_utf8_names_its_first_bad_byte(raw: bytes, byte: int) -> None:
    ((number, _, problem),) = read(b"# words\n" + raw + b"\n")
    assert number == 2
    assert problem == f"it is not UTF-8 text (byte {byte}); convert the input to UTF-8 (iconv -t UTF-8)"


def test_the_bad_byte_is_named_through_the_cli(hub: FakeHub, stdin: Callable[[bytes], None]) -> None:
    stdin(b"cat\nki\xffng\n")
    result = run_cli("vector", "-", "--json")
    assert "line 2: it is not UTF-8 text (byte 3)" in result.stderr + result.stdout


def test_a_block_is_answered_up_to_its_first_failed_line_before_the_rest_is_looked_at() -> None:
    events: list[str] = []

    def prepare(word: str) -> str:
        events.append(f"prepare {word}")
        if word.startswith("bad"):
            raise UsageError(f"{word} is refused")
        return word

    def answer(words: list[str]) -> list[str]:
        events.append(f"answer {' '.join(words)}")
        return [w.upper() for w in words]

    block = [batch.Line(n, w) for n, w in enumerate(["a", "b", "bad1", "c", "bad2", "d"], 1)]
    out = batch.each([block], prepare, answer)
    got = [next(out) for _ in range(3)]
    assert got[:2] == ["A", "B"] and isinstance(got[2], batch.FailedLine)
    assert got[2].message == "line 3: bad1 is refused"
    # nothing after the first failed line was looked at before it was handed out
    assert events == ["prepare a", "prepare b", "prepare bad1", "answer a b"]
    rest = list(out)
    assert rest[0] == "C" and isinstance(rest[1], batch.FailedLine) and rest[2] == "D"
    assert events[4:] == ["prepare c", "prepare bad2", "prepare d", "answer c d"]  # one pass for the rest


def test_a_damaged_cache_entry_ends_the_stream() -> None:
    def prepare(word: str) -> str:
        if word == "b":
            raise DamagedEntry("the cache entry is damaged")
        return word

    block = [batch.Line(1, "a"), batch.Line(2, "b"), batch.Line(3, "c")]
    with pytest.raises(DamagedEntry, match="the cache entry is damaged"):
        list(batch.each([block], prepare, lambda words: words))
