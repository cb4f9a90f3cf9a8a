"""Any stdout/stderr encoding works, losslessly (a Windows pipe writes cp1252; some consoles only ASCII).

Every word command runs in real processes under UTF-8, cp1252 and ascii, on GPT-2's real vocabulary (the
tiny fixture has no " 🙂"), from a model folder whose name is not ASCII either. JSON must parse to the same
document; tables, notes and messages must show the same text, each character the encoding lacks as \\uXXXX
or \\UXXXXXXXX (\\xNN stays what it was: a byte of a token that is not a whole character).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import GPT2_VOCAB, run_process
from tinymodel import real_vocab_folder

pytestmark = [
    pytest.mark.realvocab,
]

ENCODINGS = ("cp1252", "ascii")
FOLDER = "<folder>"  # where a case names the model
# über splits into " \xc3" + "\xbc" + "ber"; " 🙂" is id 32485; id:6184 is the byte piece " \xc3"
ANSWERED = {
    "vector": ["vector", "über", "🙂", "id:6184", "-m", FOLDER],
    "neighbors": ["neighbors", "über", "🙂", "id:6184", "-k", "5", "-m", FOLDER, "-m", FOLDER],  # a note
    "analogy": ["analogy", "über", "🙂", "id:6184", "-k", "5", "-m", FOLDER],
    "similarity": ["similarity", "über", "🙂", "id:6184", "-m", FOLDER],
}
REFUSED = {  # 東京 is only byte fragments for GPT-2's tokenizer
    "vector": (["vector", "東京", "-m", FOLDER], 2),
    "neighbors": (["neighbors", "東京", "-m", FOLDER], 2),
    "analogy": (["analogy", "東京", "king", "queen", "-m", FOLDER], 2),
    "similarity": (["similarity", "東京", "king", "-m", FOLDER], 2),
    "bad-option-value": (["vector", "über", "--pool", "🙂", "-m", FOLDER], 2),
    "click-unknown-option": (["vector", "king", "--über"], 2),
    "unknown-model": (["vector", "king", "-m", "modèle-🙂"], 3),
}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """A GPT-2-shaped folder with GPT-2's real tokenizer (random 8-wide rows), and a cache built once."""
    root = tmp_path_factory.mktemp("encodings")
    folder = root / "modèle-🙂"
    folder.mkdir()
    real_vocab_folder(folder, GPT2_VOCAB, seed=11)
    env = {"GPT2EMB_CACHE_DIR": str(root / "cache")}
    warm = run_process("vector", "king", "-m", str(folder), env=env)
    assert warm.returncode == 0, warm.stderr
    return str(folder), env


def runs(args: list[str], model: tuple[str, dict[str, str]]) -> dict[str, subprocess.CompletedProcess[str]]:
    """The same command under UTF-8 and each other encoding, each output decoded strictly in its encoding."""
    folder, env = model
    argv = [folder if a == FOLDER else a for a in args]
    with ThreadPoolExecutor(3) as pool:
        started = {
            # wide enough that no table is printed in parts in one encoding only (escapes are wider)
            enc: pool.submit(
                run_process, *argv, env={**env, "PYTHONIOENCODING": enc, "COLUMNS": "200"}, encoding=enc
            )
            for enc in ("utf-8", *ENCODINGS)
        }
        return {enc: future.result() for enc, future in started.items()}


def escaped(text: str, encoding: str) -> str:
    """UTF-8 output as it should read in another encoding: each character it lacks as a Python escape."""

    def one(ch: str) -> str:
        try:
            ch.encode(encoding)
            return ch
        except UnicodeEncodeError:
            return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"

    return "".join(map(one, text))


_RULE = re.compile(r"[─-]{3,}")  # a table's head rule: '─' where the encoding has it, '-' elsewhere


def shown(text: str, encoding: str = "utf-8") -> Counter[str]:
    """What a table shows, whatever its layout (escapes are wider, so columns and wraps move), as it should
    read in the encoding."""
    return Counter(escaped(w, encoding) for w in text.split() if not _RULE.fullmatch(w))


def table_widths(text: str) -> list[set[int]]:
    """The line lengths of each table's header and rows (the rule under the header aside: it spans the last
    column's padding, which a piped line leaves out): one each when the escapes were made before the layout
    (in a single-width encoding, a character is a column, and the last column is right-aligned)."""
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if line.strip() and not line.strip("- ")]
    widths = []
    for i in rules:
        end = next((j for j in range(i + 1, len(lines)) if not lines[j].strip()), len(lines))
        widths.append({len(line) for line in [lines[i - 1], *lines[i + 1 : end]]})
    return widths


def json_lines(text: str) -> list[object]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
@pytest.mark.parametrize("command", ANSWERED)
def test_answers_are_the_same_in_every_encoding(
    command: str, as_json: bool, model: tuple[str, dict[str, str]]
) -> None:
    found = runs(ANSWERED[command] + (["--json"] if as_json else []), model)
    utf8 = found["utf-8"]
    assert utf8.returncode == 0, utf8.stderr
    assert "🙂" in utf8.stdout and "über" in utf8.stdout  # the UTF-8 run carries the characters themselves
    for enc in ENCODINGS:
        run = found[enc]
        assert run.returncode == 0, (enc, run.stderr)
        if as_json:
            assert run.stdout.isascii()  # \u escapes: the same document whatever the reader's code page
            assert json.loads(run.stdout) == json.loads(utf8.stdout)
            assert json_lines(run.stderr) == json_lines(utf8.stderr)
        else:
            assert shown(run.stdout) == shown(utf8.stdout, enc)
            assert shown(run.stderr) == shown(utf8.stderr, enc)
            assert "\\U0001f642" in run.stdout and "🙂" not in run.stdout
            assert '" \\xc3"' in run.stdout  # the byte piece, as in UTF-8
            assert all(len(w) == 1 for w in table_widths(run.stdout)), run.stdout
    if not as_json:
        assert "über" in found["cp1252"].stdout and "\\u00fcber" in found["ascii"].stdout
    if command == "neighbors" and not as_json:  # the note on stderr names the folder
        assert "modèle-\\U0001f642 again" in found["cp1252"].stderr
        assert "mod\\u00e8le-\\U0001f642 again" in found["ascii"].stderr


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
@pytest.mark.parametrize("case", REFUSED)
def test_refusals_and_errors_are_the_same_in_every_encoding(
    case: str, as_json: bool, model: tuple[str, dict[str, str]]
) -> None:
    args, code = REFUSED[case]
    found = runs(args + (["--json"] if as_json else []), model)
    utf8 = found["utf-8"]
    assert utf8.returncode == code and utf8.stdout == ""
    message = json_lines(utf8.stderr)[0]["error"]["message"] if as_json else utf8.stderr  # type: ignore[index]
    assert not message.isascii()  # it names what was typed
    for enc in ENCODINGS:
        run = found[enc]
        assert (run.returncode, run.stdout) == (code, ""), (enc, run.stderr)
        if as_json:
            assert run.stderr.isascii() and json_lines(run.stderr) == json_lines(utf8.stderr)
        else:
            assert run.stderr == escaped(utf8.stderr, enc)  # one line, so exactly


def test_heatmap_shades_fall_back_to_ascii(model: tuple[str, dict[str, str]]) -> None:
    found = runs(["positions", "--heatmap", "--cells", "8", "-m", FOLDER], model)
    utf8 = found["utf-8"]
    assert utf8.returncode == 0 and "▓" in utf8.stdout
    ascii_shades = utf8.stdout.translate(str.maketrans("·░▒▓█", ".:-+#"))
    for enc in ENCODINGS:
        assert found[enc].returncode == 0 and "\\u2593" not in found[enc].stdout
        assert shown(found[enc].stdout) == shown(ascii_shades, enc)  # the same cells, shade for shade


def test_help_in_any_encoding() -> None:
    for enc in ENCODINGS:
        run = run_process("neighbors", "--help", env={"PYTHONIOENCODING": enc}, encoding=enc)
        assert run.returncode == 0 and "--keep-query" in run.stdout


def test_escape_is_registered_for_any_writer() -> None:
    from gpt2emb.output import ESCAPE

    assert "ü🙂\udcff".encode("ascii", ESCAPE) == b"\\u00fc\\U0001f642\\udcff"
