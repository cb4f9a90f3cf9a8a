"""`export`: word2vec text and binary files that gensim reads back equal to the rows stored, and the
Embedding Projector's vectors.tsv and metadata.tsv, every token of which reads back to its exact bytes.
Oracles: the tiny model's own arrays and its tokenizer's own vocabulary, gensim's reader, and a reading of the
metadata written here from the rule docs/commands/export.md states (not gpt2emb's code). In-process, but
on a terminal and piped, where the process is the point."""

from __future__ import annotations

import dataclasses
import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tokenizers import Tokenizer

from gpt2emb.core import export
from gpt2emb.quoting import quote
from gpt2emb.store import entries
from gpt2emb.tokens import display
from tiny_llama import TinyLlama
from tiny_llama import build as build_llama

from bigentry import BIG, POS, TWIN, flip_byte
from conftest import COMMIT, GPT2_VOCAB, run_cli, run_process
from fakehub import FakeHub, Repo
from tinymodel import Tiny, hub_files, save_local

FIELD = re.compile(r'"(?:[^"\\]|\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|["\\]))*"')
ESCAPE = re.compile(r'\\(?:x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8})|(["\\]))')
HEADER = "id\ttoken\tleading_space\twhole_word"


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, as its encoder.py defines it: the character that stands for each byte."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, n = list(kept), 0
    for b in range(256):
        if b not in kept:
            kept.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(kept, chars, strict=True)}


def entry(tok: Tokenizer, i: int) -> str:
    """The tokenizer's own vocabulary entry of token i."""
    piece = tok.id_to_token(i)
    assert piece is not None
    return piece


def piece_bytes(piece: str, decoder: dict[str, int]) -> bytes:
    return bytes(decoder[c] for c in piece)


def read_token(field: str) -> bytes:
    """The rule of docs/commands/export.md, read: \\xNN a byte, \\uNNNN and \\UNNNNNNNN a character, \\\\
    and \\" themselves."""
    assert FIELD.fullmatch(field), field
    body, out, at = field[1:-1], bytearray(), 0
    for m in ESCAPE.finditer(body):
        out += body[at : m.start()].encode("utf-8")
        x, u, wide, same = m.groups()
        out += bytes([int(x, 16)]) if x else (same or chr(int(u or wide, 16))).encode("utf-8")
        at = m.end()
    return bytes(out + body[at:].encode("utf-8"))


def exported(*args: str) -> Any:
    result = run_cli("export", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def refused(*args: str, code: int = 2) -> str:
    result = run_cli("export", *args)
    assert result.exit_code == code, result.stdout + result.stderr
    said: str = result.stderr
    assert result.stdout == "" and len(said.splitlines()) == 1 and "Traceback" not in said
    return said.strip()


def load_word2vec(path: Path, binary: bool) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors

    kv = KeyedVectors.load_word2vec_format(str(path), binary=binary)
    assert kv.vectors.dtype == np.float32
    return list(kv.index_to_key), kv.vectors


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to the bit (so -0.0 is not 0.0): the same numbers, written and read, not a new computation."""
    a, b = np.ascontiguousarray(a, dtype=np.float32), np.ascontiguousarray(b, dtype=np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def tsv_rows(path: Path) -> np.ndarray:
    """vectors.tsv as the Projector reads it: each number parsed as a double (JavaScript), then float32."""
    lines = path.read_text(encoding="ascii").split("\n")
    assert lines[-1] == ""
    return np.array([line.split("\t") for line in lines[:-1]], dtype=np.float64).astype(np.float32)


# ---------------------------------------------------------------- word2vec


@pytest.mark.parametrize("binary", [False, True])
def test_word2vec_reads_back_equal_in_gensim(hub: FakeHub, tiny: Tiny, tmp_path: Path, binary: bool) -> None:
    fmt = "word2vec-binary" if binary else "word2vec"
    out = tmp_path / "gpt2.w2v"
    doc = exported("--format", fmt, "-o", str(out))
    n, d = tiny.wte.shape
    assert {k: doc[k] for k in ("model", "format", "table", "rows", "dims", "files")} == {
        "model": "gpt2",
        "format": fmt,
        "table": "wte",
        "rows": n,
        "dims": d,
        "files": [{"path": str(out), "bytes": out.stat().st_size}],
    }
    assert doc["bytes"] == out.stat().st_size and doc["notes"] == []
    keys, vectors = load_word2vec(out, binary)
    assert keys == [entry(tiny.tokenizer, i) for i in range(n)]  # the tokenizer's own entries, in order
    assert keys[tiny.id("king")] == "Ġking"
    assert same_bits(vectors, tiny.wte)
    wpe = tmp_path / "wpe.w2v"
    exported("--format", fmt, "--table", "wpe", "-o", str(wpe))
    keys, vectors = load_word2vec(wpe, binary)
    assert keys == [f"pos{p}" for p in range(len(tiny.wpe))]
    assert same_bits(vectors, tiny.wpe)


def test_word2vec_binary_layout(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """The C tool's layout: the header line, then per row `key `, the float32s little-endian, a line break."""
    out = tmp_path / "gpt2.bin"
    exported("--format", "word2vec-binary", "--limit", "3", "-o", str(out))
    d = tiny.wte.shape[1]
    expected = f"3 {d}\n".encode()
    for i in range(3):
        key = entry(tiny.tokenizer, i).encode("utf-8")
        expected += key + b" " + tiny.wte[i].astype("<f4").tobytes() + b"\n"
    assert out.read_bytes() == expected


def test_text_numbers_come_back_as_the_same_float32() -> None:
    """Nine significant digits, read as a double then rounded to float32 (numpy's path in gensim, JavaScript's
    in the Projector), give every float32 back: all the awkward ones and a million random bit patterns."""
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    info = np.finfo(np.float32)
    special = [0.0, -0.0, info.max, -info.max, info.tiny, info.smallest_subnormal, 0.1, 1 / 3, 16777217.0]
    values = np.concatenate([values[np.isfinite(values)], np.array(special, dtype=np.float32)])
    text = [export.NUMBER % x for x in values.tolist()]
    assert same_bits(np.array(text, dtype=np.float64).astype(np.float32), values)
    assert same_bits(np.array(text).astype(np.float32), values)


# ---------------------------------------------------------------- projector


def test_projector_files(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    folder = tmp_path / "new" / "projector"  # made, with its parent
    doc = exported("--format", "projector", "-o", str(folder))
    files = [folder / "vectors.tsv", folder / "metadata.tsv"]
    assert doc["files"] == [{"path": str(f), "bytes": f.stat().st_size} for f in files]
    assert doc["bytes"] == sum(f.stat().st_size for f in files)
    umask = os.umask(0)
    os.umask(umask)
    assert all(f.stat().st_mode & 0o777 == 0o666 & ~umask for f in files)  # as new files are: to be shared
    assert same_bits(tsv_rows(folder / "vectors.tsv"), tiny.wte)  # no header: row i is token i
    lines = (folder / "metadata.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[0] == HEADER and lines[-1] == ""
    rows = [line.split("\t") for line in lines[1:-1]]
    assert len(rows) == len(tiny.wte) and all(len(r) == 4 for r in rows)
    decoder = byte_decoder()
    plain = 0
    for i, (ident, token, leading, whole) in enumerate(rows):
        raw = piece_bytes(entry(tiny.tokenizer, i), decoder)
        assert int(ident) == i
        assert read_token(token) == raw, (i, token)  # every token, byte pieces, tab, quote, backslash
        text = raw.decode("utf-8", errors="replace")
        assert leading == str(raw.startswith(b" ")).lower()
        is_whole = raw.startswith(b" ") and "\ufffd" not in text and bool(text[1:].strip())
        assert whole == str(is_whole).lower(), (i, token)
        if text.isprintable() and not {'"', "\\"} & set(text):
            assert token == quote(display(entry(tiny.tokenizer, i)))  # as the tables show it
            plain += 1
    assert rows[tiny.id("king")][1:] == ['" king"', "true", "true"]
    shown = {read_token(r[1]): r[1] for r in rows}
    assert shown[b"\t"] == '"\\x09"' and shown[b"\n"] == '"\\x0a"'
    assert shown[b'"'] == '"\\""' and shown[b"\\"] == '"\\\\"'
    assert shown[b"\xc3"] == '"\\xc3"'  # half of a UTF-8 character: the byte
    assert plain > len(rows) // 2


def test_projector_positions(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """wpe: one metadata column, the position, and so no header (the Projector reads one only above one)."""
    folder = tmp_path / "positions"
    exported("--format", "projector", "--table", "wpe", "--limit", "100", "-o", str(folder))
    assert same_bits(tsv_rows(folder / "vectors.tsv"), tiny.wpe[:100])
    assert (folder / "metadata.tsv").read_text() == "".join(f"{p}\n" for p in range(100))


def test_metadata_escapes_make_every_character_unambiguous() -> None:
    cases = {
        b" king": '" king"',
        b'say "hi"': '"say \\"hi\\""',
        b"a\\xc3": '"a\\\\xc3"',  # a backslash typed, not a byte
        b"\xc3": '"\\xc3"',
        "\u0085".encode(): '"\\u0085"',  # the character NEL, not the byte 0x85
        b"\x85": '"\\x85"',
        "\u2028".encode(): '"\\u2028"',
        "\U000e0001".encode(): '"\\U000e0001"',
        "é🙂".encode(): '"é🙂"',
    }
    for raw, field in cases.items():
        assert export.shown(raw) == field
        assert read_token(field) == raw


# ---------------------------------------------------------------- which rows


def test_whole_words_first_then_limit(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "words.txt"
    doc = exported("--format", "word2vec", "--whole-words", "--limit", "5", "-o", str(out))
    decoder = byte_decoder()
    words = []
    for i in range(len(tiny.wte)):
        piece = entry(tiny.tokenizer, i)
        text = piece_bytes(piece, decoder).decode("utf-8", errors="replace")
        if text.startswith(" ") and text[1:].strip() and "\ufffd" not in text:
            words.append((piece, i))
    assert words[0][1] > 5  # so that --limit before --whole-words would keep nothing
    keys, vectors = load_word2vec(out, binary=False)
    assert keys == [p for p, _ in words[:5]] and doc["rows"] == 5
    assert same_bits(vectors, tiny.wte[[i for _, i in words[:5]]])
    first = tmp_path / "first.txt"
    exported("--format", "word2vec", "--limit", "5", "-o", str(first))
    assert load_word2vec(first, binary=False)[0] == [entry(tiny.tokenizer, i) for i in range(5)]
    folder = tmp_path / "projector"
    exported("--format", "projector", "--whole-words", "--limit", "5", "-o", str(folder))
    rows = (folder / "metadata.tsv").read_text().splitlines()[1:]
    assert [int(r.split("\t")[0]) for r in rows] == [i for _, i in words[:5]]
    assert {r.split("\t")[3] for r in rows} == {"true"}
    assert same_bits(tsv_rows(folder / "vectors.tsv"), tiny.wte[[i for _, i in words[:5]]])


@pytest.fixture
def extended(hub: FakeHub, tiny: Tiny) -> Iterator[tuple[int, Tokenizer]]:
    """The tiny GPT-2 with two added tokens, one of them two words, and a row past its tokenizer."""
    n = len(tiny.wte)
    tok = Tokenizer.from_str(tiny.tokenizer.to_str())
    tok.add_tokens(["<sep>", "two words"])
    rows = np.vstack([tiny.wte, np.full((3, tiny.wte.shape[1]), 0.5, dtype=np.float32)])
    bigger = dataclasses.replace(tiny, tokenizer=tok, wte=rows, config={**tiny.config, "vocab_size": n + 3})
    hub.repos["test/extended"] = Repo(COMMIT, hub_files(bigger))
    yield n, tok


def test_keys_without_whitespace(extended: tuple[int, Tokenizer], tmp_path: Path) -> None:
    """An added token is keyed by its own text; one that holds a space, and a row past the tokenizer, by
    id."""
    n, tok = extended
    assert tok.token_to_id("<sep>") == n and tok.token_to_id("two words") == n + 1
    out = tmp_path / "extended.txt"
    doc = exported("-m", "test/extended", "--format", "word2vec", "-o", str(out))
    keys, _ = load_word2vec(out, binary=False)
    assert keys[n:] == ["<sep>", f"id:{n + 1}", f"id:{n + 2}"] and len(keys) == n + 3
    assert doc["notes"] == [
        f"2 rows keyed by id (id:{n + 1}, id:{n + 2}): no vocabulary entry without whitespace, "
        "or one that repeats another"
    ]
    folder = tmp_path / "projector"
    exported("-m", "test/extended", "--format", "projector", "-o", str(folder))
    tokens = [line.split("\t")[1] for line in (folder / "metadata.tsv").read_text().splitlines()[1:]]
    assert tokens[n:] == ['"<sep>"', '"two words"', f'"<id {n + 2}>"']


# ---------------------------------------------------------------- refusals


def test_wpe_of_a_model_without_positions_is_refused(hub: FakeHub, tmp_path: Path) -> None:
    llama: TinyLlama = build_llama(tmp_path / "llama")
    model = str(llama.folder)
    message = refused("-m", model, "--format", "word2vec", "--table", "wpe", "-o", str(tmp_path / "x.txt"))
    positions = run_cli("positions", "0", "1", "-m", model)
    assert positions.exit_code == 2 and "no position rows to compare;" in positions.stderr
    assert message == positions.stderr.strip().replace("to compare;", "to export;")  # the same but its verb
    assert "has no position table" in message and not (tmp_path / "x.txt").exists()
    words = refused("--format", "word2vec", "--table", "wpe", "--whole-words", "-o", str(tmp_path / "y"))
    assert words == "gpt2emb: --whole-words picks tokens that start a word: it is for --table wte, not wpe"


def test_bad_output_paths(hub: FakeHub, tmp_path: Path, caches: dict[str, Path]) -> None:
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("mine")
    assert refused("--format", "projector", "-o", str(a_file)) == (
        f"gpt2emb: -o {a_file} is a file: --format projector writes a folder (vectors.tsv and metadata.tsv); "
        "give the path of a folder, new or existing"
    )
    assert refused("--format", "word2vec", "-o", str(tmp_path)) == (
        f"gpt2emb: -o {tmp_path} is a folder: --format word2vec writes one file; give a file's path, such as "
        f"{tmp_path / 'vectors.txt'}"
    )
    inside = a_file / "sub" / "out.txt"
    assert refused("--format", "word2vec", "-o", str(inside)) == (
        f"gpt2emb: cannot write -o {inside}: {a_file} is a file, not a folder; choose another path"
    )
    assert refused("--format", "word2vec", "-o", "-") == (
        "gpt2emb: -o - is not stdout here: export writes files; give a path, such as vectors.txt"
    )
    assert not caches["cache"].exists() and hub.requests == []  # refused before anything is fetched
    assert a_file.read_text() == "mine"
    assert refused("--format", "word2vec", "--limit", "0", "-o", str(tmp_path / "z")).startswith(
        "gpt2emb: Invalid value for '--limit': 0 is less than 1."
    )


@pytest.mark.skipif(not os.access("/sys", os.F_OK) or sys.platform != "linux", reason="needs Linux's /sys")
def test_unwritable_output(hub: FakeHub, tmp_path: Path) -> None:
    """/sys refuses new files even to root (these tests may run as root, for whom chmod changes nothing): root
    is refused by the write itself, any other user (or a read-only /sys) by the check before it."""
    out = Path("/sys/gpt2emb-export.txt")
    why = "Permission denied" if os.access("/sys", os.W_OK | os.X_OK) else "/sys is not writable"
    assert refused("--format", "word2vec", "-o", str(out)) == (
        f"gpt2emb: cannot write -o {out}: {why}; choose a folder you can write to"
    )


@pytest.mark.parametrize(("table", "row"), [("wte", TWIN), ("wpe", POS)])
def test_a_damaged_row_is_refused_and_nothing_is_replaced(
    big: entries.OpenedEntry,  # conftest's fixture: rows outside the blocks sampled on open
    tmp_path: Path,
    table: str,
    row: int,
) -> None:
    out = tmp_path / "out" / "big.txt"
    out.parent.mkdir()
    out.write_text("an earlier export")
    flip_byte(big, table, row)
    message = refused("-m", BIG, "--format", "word2vec", "--table", table, "-o", str(out), code=6)
    assert f"row {row} of {table}.npy does not match its checksum" in message
    assert out.read_text() == "an earlier export" and os.listdir(out.parent) == ["big.txt"]  # no temporary


# ---------------------------------------------------------------- what a person sees


def test_table_and_progress_on_a_terminal(hub: FakeHub, tiny: Tiny, tmp_path: Path) -> None:
    """On a terminal: a progress bar on stderr while it writes, then a short table of the files."""
    out = tmp_path / "gpt2.txt"
    primary, secondary = pty.openpty()
    exe = Path(sys.executable).with_name("gpt2emb")
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen(
        [str(exe), "export", "--format", "word2vec", "-o", str(out)],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env=env,
    )
    os.close(secondary)
    seen = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    assert proc.wait(timeout=120) == 0
    text = seen.decode("utf-8", errors="replace")
    assert "exporting wte of gpt2" in text
    assert f"wte of gpt2: {len(tiny.wte)} rows of {tiny.wte.shape[1]} numbers, as word2vec" in text
    assert f"{out.stat().st_size:,}" in text
    piped = run_process("export", "--format", "word2vec", "-o", str(out), env={"COLUMNS": "200"})
    assert piped.returncode == 0 and piped.stderr == "" and "exporting" not in piped.stdout
    assert str(out) in piped.stdout


# ---------------------------------------------------------------- GPT-2's real vocabulary


@pytest.mark.realvocab
def test_real_gpt2_vocabulary(tiny: Tiny, tmp_path: Path) -> None:
    """All 50,257 of GPT-2's tokens: keys are its vocab.json entries, and every metadata token reads back to
    the exact bytes of its entry."""
    from tokenizers import decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(GPT2_VOCAB / "vocab.json"), str(GPT2_VOCAB / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    pieces = json.loads((GPT2_VOCAB / "vocab.json").read_text(encoding="utf-8"))
    by_id = [p for p, _ in sorted(pieces.items(), key=lambda kv: kv[1])]
    wte = np.random.default_rng(3).normal(0, 0.1, (len(by_id), 8)).astype(np.float32)
    real = dataclasses.replace(
        tiny,
        tokenizer=tok,
        wte=wte,
        wpe=tiny.wpe[:16, :8],
        blocks={},
        config={**tiny.config, "vocab_size": len(by_id), "n_embd": 8, "n_positions": 16, "n_ctx": 16}
        | {"bos_token_id": 50256, "eos_token_id": 50256},
    )
    model = str(save_local(real, tmp_path / "gpt2-real"))
    out = tmp_path / "real.bin"
    exported("-m", model, "--format", "word2vec-binary", "-o", str(out))
    keys, vectors = load_word2vec(out, binary=True)
    assert keys == by_id and same_bits(vectors, wte)
    folder = tmp_path / "projector"
    exported("-m", model, "--format", "projector", "-o", str(folder))
    rows = [line.split("\t") for line in (folder / "metadata.tsv").read_text(encoding="utf-8").splitlines()]
    assert rows[0] == HEADER.split("\t") and len(rows) == len(by_id) + 1
    decoder = byte_decoder()
    for i, row in enumerate(rows[1:]):
        assert int(row[0]) == i and read_token(row[1]) == piece_bytes(by_id[i], decoder), (i, row)
    assert rows[1 + 5822][1:] == ['" king"', "true", "true"]
    assert same_bits(tsv_rows(folder / "vectors.tsv"), wte)
