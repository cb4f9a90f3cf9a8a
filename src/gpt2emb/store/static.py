"""A static word table given as -m FILE (word2vec text or binary, GloVe, fastText's .vec): its format told
from its content, read and checked, and turned into a cache entry like a model's.

What is read equals gensim's load_word2vec_format of the same file (its words, their order, its float32
values: each number parsed as a double, then rounded to float32, as numpy's float32 of a string does), for
every file gensim reads without complaint and this module accepts. It refuses, naming the line, what gensim
takes silently or reads wrongly: a header whose count is not the number of rows (gensim takes a smaller one
as a limit, and a larger one as a file cut short), NaN or infinity (no cosine ranks them), a blank line,
tabs, a byte-order mark, and a text file read as binary (gensim's binary=True cannot tell). A word that
appears twice keeps its first row, as in gensim (which adds a None key too).

The entry is keyed by the file's path and fingerprint (size, times, inode: entries.stat_line) and its
encoding: a changed file is read again. wte.npy holds the rows, pieces.txt the keys in file order; wpe.npy
is empty (a static table has no positions).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gpt2emb import piece_lines
from gpt2emb.errors import BadModel
from gpt2emb.registry import ModelRef, Shape
from gpt2emb.report import BUILDING, QuietReporter, Reporter, Task
from gpt2emb.store.entries import (
    FORMAT,
    SELF_CHECK,
    STATIC,
    UNTRUSTED,
    OpenedEntry,
    checked_whole,
    file_fingerprint,
    generations,
    live_folder,
    live_folders,
    manifest_digest,
    open_entry,
    read_manifest,
    repo_dir,
    row_norms,
    stat_line,
)
from gpt2emb.store.entries import commit_of as entry_commit

KINDS = ("word2vec text", "GloVe text", "word2vec binary")
READ_BLOCK = 1 << 24  # 16 MB: a GloVe file's bar moves about every tenth of a second
BLOCK = 4096  # rows parsed at a time: progress moves, and a bad number is looked for in one block alone
_HEADER = re.compile(rb"\s*([0-9]+)[ \t]+([0-9]+)\s*")
_FASTTEXT_MAGIC = (793712314).to_bytes(4, "little")  # the first int32 of a fastText model (.bin)
_GET_VEC = (
    "a fastText model (.bin) is read by fastText itself: use the .vec file it writes beside it (or gensim's "
    "load_facebook_vectors(...).save_word2vec_format(...))"
)


class Table(NamedTuple):
    """A static file as read: its keys in file order (each once), their rows, and how it was written."""

    keys: list[str]
    rows: np.ndarray  # float32, one row per key
    kind: str  # one of KINDS
    repeated: int  # how many words appear more than once (each keeps its first row)
    first_repeated: str  # the first of them ("" for none)


def commit_of(file: Path, encoding: str) -> str:
    """What a static file's entry is keyed by: its fingerprint, and the encoding its words are read in."""
    import hashlib

    return hashlib.sha256(f"{stat_line(file)}|{encoding}".encode()).hexdigest()[:16]


def open_static(ref: ModelRef, reporter: Reporter | None = None) -> OpenedEntry:
    """A static file's cache entry, read from the file and built on first use (and when the file changed).
    A word that appears twice is told on every run, warm or not: the entry's manifest keeps how many."""
    reporter = reporter or QuietReporter()
    opened = _entry_of(ref, reporter)
    repeated, first = read_manifest(opened.path)["repeated"]
    if repeated:
        times = "word appears" if repeated == 1 else "words appear"
        reporter.note(
            f"{ref.name}: {repeated:,} {times} more than once (the first: {first!r}); each keeps its first "
            "row, as gensim does"
        )
    return opened


def _entry_of(ref: ModelRef, reporter: Reporter) -> OpenedEntry:
    """The entry opened, or built first (in a temporary folder where the cache cannot be written)."""
    assert ref.file is not None
    commit = commit_of(ref.file, ref.encoding)
    parent = repo_dir(ref)
    entry = live_folder(generations(parent).get(commit, []))
    if entry is not None:
        try:
            return open_entry(ref, entry)
        except PermissionError:
            raise
        except UNTRUSTED as e:
            reporter.note(f"the cache entry for {ref.name} cannot be trusted ({e}); reading the file again")
    from gpt2emb.store import install  # only a build takes the lock, so a warm open need not load it

    try:
        with install.locked(parent, commit):
            entry = live_folder(generations(parent).get(commit, []))
            if entry is not None:  # another process may have built it while we waited
                with contextlib.suppress(*UNTRUSTED):
                    return open_entry(ref, entry)
            built = build_static(ref, commit, parent, reporter)
    except OSError as e:  # a cache that cannot be written is answered from a temporary entry, as a model is
        return open_entry(
            ref, build_static(ref, commit, install.without_cache(e, parent, commit, reporter), reporter)
        )
    older = [f for f in live_folders(parent) if entry_commit(f) != commit]
    if older:
        what = "outdated entry stays" if len(older) == 1 else f"{len(older)} outdated entries stay"
        later = "until gpt2emb cache clear --outdated"
        reporter.note(f"{ref.name} changed and is cached anew; its {what} {later}")
    return open_entry(ref, built)


def build_static(ref: ModelRef, commit: str, parent: Path, reporter: Reporter) -> Path:
    """Read the file and write its entry (in a temporary folder, moved into place); returns where it went.
    Whoever calls this holds the commit's lock."""
    import tempfile

    from gpt2emb.store import install, writing

    assert ref.file is not None
    table = read_table(ref.file, ref.encoding, ref.name, reporter)
    if commit_of(ref.file, ref.encoding) != commit:
        raise BadModel(f"{ref.name} changed while being read; run the command again once it is whole")
    rows = table.rows
    n, d = rows.shape
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{commit}.tmp-"))
    try:
        contents: dict[str, bytes | np.ndarray] = {
            "wte.npy": rows,
            "wpe.npy": np.zeros((0, d), dtype=np.float32),
            "wte_norm.npy": row_norms(rows),
            "wte_crc.npy": writing.row_crcs(rows),
            "wpe_crc.npy": np.zeros(0, dtype=np.uint32),
            piece_lines.FILE: piece_lines.written({k: i for i, k in enumerate(table.keys)}),
        }
        sha256 = {f: writing.write(tmp / f, content) for f, content in contents.items()}
        manifest = {
            "format": FORMAT,
            "name": ref.name,
            "repo": None,
            "folder": None,
            "file": str(ref.file),
            "encoding": ref.encoding,
            "static": table.kind,
            "commit": commit,
            "shape": Shape(n, d, 0, 0, 0, STATIC)._asdict(),
            "tied": False,
            "norm_eps": 0.0,
            "words": "keys",
            "wraps": [[], []],
            "repeated": [table.repeated, table.first_repeated],
            "files": {f: file_fingerprint(tmp / f, whole=checked_whole(f, FORMAT)) for f in sha256},
            "sha256": sha256,
        }
        manifest[SELF_CHECK] = manifest_digest(manifest)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        return install.install(tmp, parent, commit)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- reading the file


def read_table(path: Path, encoding: str, name: str, reporter: Reporter | None = None) -> Table:
    """Read a static file, its format told from its content; BadModel (exit 6) names the line of a fault."""
    data = _read(path, name, reporter or QuietReporter())
    refuse_other(data, name)
    if encoding == "utf-8-sig" and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith(b"\xef\xbb\xbf"):
        raise BadModel(
            f"{name} starts with a byte-order mark (line 1): save it as UTF-8 without one, or give "
            "--encoding utf-8-sig"
        )
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)]
    header = _HEADER.fullmatch(first)
    if header is None and b"\x00" in data[:64]:
        raise BadModel(
            f"{name} is binary, and a word2vec binary file starts with a line 'count dim' that it lacks; "
            + _GET_VEC
        )
    with (reporter or QuietReporter()).progress(f"{BUILDING} of {name}", len(data)) as task:
        if header is None:
            keys, rows = _text(data, 0, None, encoding, name, task)
            kind = KINDS[1]
        else:
            count, dim = int(header.group(1)), int(header.group(2))
            if count == 0 or dim == 0:
                raise BadModel(f"{name}'s header (line 1) says {count} words of {dim} numbers: it holds none")
            start = end + 1 if end >= 0 else len(data)
            if _text_follows(data, start, dim):
                keys, rows = _text(data, start, (count, dim), encoding, name, task)
                kind = KINDS[0]
            else:
                keys, rows = _binary(data, start, count, dim, encoding, name, task)
                kind = KINDS[2]
    return _first_of_each(keys, rows, kind)


def _read(path: Path, name: str, reporter: Reporter) -> bytes:
    """The file's bytes, read in blocks under a bar of their own.

    GloVe's 400,000 x 300 file is about a gigabyte. Reading it whole before the building bar starts
    left the terminal silent for seconds, so the reading has its own bar."""
    blocks = []
    with path.open("rb") as f, reporter.progress(f"reading {name}", os.fstat(f.fileno()).st_size) as task:
        while block := f.read(READ_BLOCK):
            blocks.append(block)
            task.advance(len(block))
    return b"".join(blocks)


def refuse_other(data: bytes, name: str) -> None:
    """Refuse a file that is plainly something else (exit 6), saying what it is and what to give."""
    if not data:
        raise BadModel(f"{name} is empty: a word2vec or GloVe file holds a word and its numbers on each line")
    if data.startswith(_FASTTEXT_MAGIC):
        raise BadModel(f"{name} is a fastText model, not a table of word vectors: {_GET_VEC}")
    if len(data) > 9 and data[8:9] == b"{" and 2 <= int.from_bytes(data[:8], "little") <= len(data) - 8:
        raise BadModel(
            f"{name} is a safetensors checkpoint, not a static word table: give the folder that holds it "
            "with its config.json"
        )
    if data.startswith((b"PK\x03\x04", b"\x1f\x8b", b"BZh")):
        raise BadModel(
            f"{name} is an archive or compressed (zip, gzip or bzip2), or a PyTorch checkpoint: unpack the "
            "word2vec or GloVe file it holds and give that"
        )


def _text_follows(data: bytes, start: int, dim: int) -> bool:
    """Whether the row after a header is a line of text (a word and dim numbers), not binary."""
    end = data.find(b"\n", start)
    fields = data[start : end if end >= 0 else len(data)].rstrip().split(b" ")
    if len(fields) != dim + 1:
        return False
    try:
        [float(f) for f in fields[1:]]
    except ValueError:
        return False
    return True


def _text(
    data: bytes, start: int, header: tuple[int, int] | None, encoding: str, name: str, task: Task
) -> tuple[list[str], np.ndarray]:
    """The keys and rows of a text file from start; header: its (count, dim), None for GloVe's (dim is the
    first row's)."""
    tab = data.find(b"\t", start)
    if tab >= 0:
        at_line = data.count(b"\n", 0, tab) + 1
        raise BadModel(
            f"{name}, line {at_line:,}, holds a tab: a word2vec or GloVe file separates its word and numbers "
            "by single spaces; replace the tabs with spaces"
        )
    task.advance(start)  # the header
    lines = data[start:].split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the line feed that ends the last line
    first = 2 if header is not None else 1  # the line number of lines[0]
    dim = header[1] if header is not None else None
    keys: list[str] = []
    blocks: list[np.ndarray] = []
    for at in range(0, len(lines), BLOCK):
        block = lines[at : at + BLOCK]
        words, rests = [], []
        for j, line in enumerate(block):
            number = first + at + j
            raw = line.rstrip()
            space = raw.find(b" ")
            if space <= 0:
                raise BadModel(_bad_line(name, number, raw, dim))
            rest = raw[space + 1 :]
            if dim is None:
                dim = rest.count(b" ") + 1
            if rest.count(b" ") != dim - 1 or rest.startswith(b" ") or b"  " in rest:
                raise BadModel(_bad_line(name, number, raw, dim))
            words.append(raw[:space])
            rests.append(rest)
        keys += [_decoded(w, encoding, name, "line", first + at + j) for j, w in enumerate(words)]
        assert dim is not None
        blocks.append(_numbers(rests, dim, first + at, encoding, name))
        task.advance(sum(map(len, block)) + len(block))
    if header is not None and len(lines) != header[0]:
        count, held = header[0], len(lines)
        more = f"ends after {held:,} (line {held + 1:,})" if held < count else f"holds {held:,}"
        raise BadModel(
            f"{name}'s header (line 1) says {count:,} words, and the file {more}: "
            + ("it is cut short; get the whole file again" if held < count else "correct the header's count")
        )
    return keys, np.concatenate(blocks) if blocks else np.zeros((0, dim or 0), dtype=np.float32)


def _bad_line(name: str, number: int, raw: bytes, dim: int | None) -> str:
    """Why a line is no row: blank, no word, or not dim numbers."""
    where = f"{name}, line {number:,},"
    if not raw:
        return f"{where} is blank: each line of a word2vec or GloVe file holds a word and its numbers"
    if raw.startswith(b" "):
        return f"{where} starts with a space: its word is empty"
    fields = raw.split(b" ")
    if b"" in fields:
        return f"{where} has two spaces in a row: a word and its numbers are separated by single spaces"
    if dim is None:
        return f"{where} holds a word and no numbers: it is no word2vec or GloVe file"
    return f"{where} holds {len(fields) - 1:,} numbers after its word, not {dim:,} as every row must"


def _numbers(rests: list[bytes], dim: int, first: int, encoding: str, name: str) -> np.ndarray:
    """The rows of a block of lines' numbers (each dim of them, single spaces between), as gensim makes
    them: each a double rounded to float32. numpy's parser reads the block at once; where it stops at
    something it does not read (an underscore, a digit of another script: Python's float takes them), each
    line is read as gensim reads it, and the first that it cannot read is named."""
    joined = b" ".join(rests)
    values = None
    if not any(c in joined for c in (b"\x0b", b"\x0c", b"\r", b"\x1c", b"\x1d", b"\x1e", b"\x1f")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with contextlib.suppress(ValueError, DeprecationWarning):
                values = np.fromstring(joined, dtype=np.float64, sep=" ")
    if values is None or len(values) != len(rests) * dim:
        values = np.array([_line_values(r, first + i, encoding, name) for i, r in enumerate(rests)])
    with np.errstate(over="ignore"):
        rows = values.reshape(len(rests), dim).astype(np.float32)
    bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
    if len(bad):
        raise BadModel(_not_finite(name, f"line {first + int(bad[0]):,}", rows[bad[0]]))
    return rows


def _line_values(rest: bytes, number: int, encoding: str, name: str) -> list[float]:
    """One line's numbers as gensim reads them (np.float32 of each string), or BadModel naming the line."""
    text = _decoded(rest, encoding, name, "line", number)
    found = []
    for field in text.split(" "):
        try:
            with np.errstate(over="ignore"):  # past float32's range: infinite, refused by the caller
                found.append(np.float32(field).item())
        except ValueError:
            raise BadModel(f"{name}, line {number:,}, holds {field[:40]!r}, which is not a number") from None
    if not np.isfinite(found).all():  # the first line at fault is named, not a later one's junk
        raise BadModel(_not_finite(name, f"line {number:,}", np.array(found)))
    return found


def _not_finite(name: str, where: str, row: np.ndarray) -> str:
    what = "NaN" if np.isnan(row).any() else "an infinite value (or one past float32's range)"
    return (
        f"{name}, {where}, holds {what}: a row must be finite numbers to be ranked by cosine; fix or remove "
        "that row"
    )


def _decoded(word: bytes, encoding: str, name: str, what: str, number: int) -> str:
    """A word (or a line's numbers) as text; BadModel naming its line (or word) where it is not."""
    try:
        return word.decode(encoding)
    except UnicodeDecodeError as e:
        byte = word[e.start]
        raise BadModel(
            f"{name}, {what} {number:,}, holds the byte 0x{byte:02X}, which is not {encoding}: give the "
            "file's encoding with --encoding (such as cp1252 or latin-1)"
        ) from None


def _binary(
    data: bytes, start: int, count: int, dim: int, encoding: str, name: str, task: Task
) -> tuple[list[str], np.ndarray]:
    """The keys and rows of a word2vec binary file: each row a word, a space and dim float32s (a line feed
    before the next word, or not)."""
    width = 4 * dim
    rows = np.empty((count, dim), dtype=np.float32)
    keys: list[str] = []
    pos, done = start, 0
    for i in range(count):
        space = data.find(b" ", pos)
        if space < 0 or space + 1 + width > len(data):
            raise BadModel(
                f"{name} ends inside word {i + 1:,} of the {count:,} its header (line 1) says: it is cut "
                "short; get the whole file again"
            )
        word = data[pos:space].lstrip(b"\n")
        if not word:
            raise BadModel(f"{name}, word {i + 1:,} (byte {pos:,}), is empty: the file is damaged")
        keys.append(_decoded(word, encoding, name, "word", i + 1))
        rows[i] = np.frombuffer(data, dtype=np.float32, count=dim, offset=space + 1)
        pos = space + 1 + width
        if pos - done > 1 << 22:
            task.advance(pos - done)
            done = pos
    if data[pos:].strip(b"\n"):
        raise BadModel(
            f"{name}'s header (line 1) says {count:,} words, and the file holds more after them: correct the "
            "header's count"
        )
    bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
    if len(bad):
        raise BadModel(_not_finite(name, f"word {int(bad[0]) + 1:,} ({keys[bad[0]]!r})", rows[bad[0]]))
    task.advance(len(data) - done)
    return keys, rows


def _first_of_each(keys: list[str], rows: np.ndarray, kind: str) -> Table:
    """Each key once, with its first row (as gensim keeps it)."""
    index: dict[str, int] = {}
    for i, k in enumerate(keys):
        index.setdefault(k, i)
    if len(index) == len(keys):
        return Table(keys, np.ascontiguousarray(rows), kind, 0, "")
    kept = np.fromiter(index.values(), dtype=np.int64, count=len(index))
    again = [k for i, k in enumerate(keys) if index[k] != i]  # in file order: the first is named
    repeated = len(set(again))
    first = again[0]
    return Table(list(index), np.ascontiguousarray(rows[kept]), kind, repeated, first)
