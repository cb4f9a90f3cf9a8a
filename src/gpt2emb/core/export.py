"""Exports of one table to files other tools read: word2vec text and binary (gensim, the C tool) and the
Embedding Projector's vectors.tsv + metadata.tsv, for the export command over an opened model. Rows go out
in blocks read from the memory-mapped table, each block checked against its checksums first; targets.py checks
each file's place and writes it there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from gpt2emb import limits, registry, targets
from gpt2emb.choices import Format, Table
from gpt2emb.core.open import (
    Opened,
    check_position_table,
    open_ref,
    refuse_token_options,
)
from gpt2emb.errors import (
    BadModel,
    UsageError,
    option,
)
from gpt2emb.report import Reporter
from gpt2emb.results.export import ExportedFile, ExportResult
from gpt2emb.store.entries import OpenedEntry
from gpt2emb.tokens import Vocab

BLOCK_BYTES = 1 << 22  # rows read, checked and formatted at a time: memory stays flat whatever the table
# nine significant digits tell every float32 from its neighbours (IEEE 754), with margin enough that a reader
# parsing to float64 first and then rounding to float32 (numpy in gensim, JavaScript in the Projector) gets
# the same float32 back: the one rounding that reaches 9 digits moves a value by under a fifth of its ulp
NUMBER = "%.9g"
VECTORS, METADATA = "vectors.tsv", "metadata.tsv"
FILES = (VECTORS, METADATA)
METADATA_COLUMNS = ("id", "token", "leading_space", "whole_word")
SHOW_IDS = 5  # rows named in a note about keys


def check_target(path: Path, fmt: Format) -> None:
    """Refuse an -o that cannot be written, before any model is opened: the folder of a projector export, then
    each file an export writes (a device, FIFO, socket or folder there is never replaced)."""
    if fmt is Format.projector:
        targets.Target(
            path,
            option("out", path),
            f"{option('fmt', 'projector')} writes a folder (vectors.tsv and metadata.tsv); "
            "give the path of a folder, new or existing",
            folder=True,
        ).real()
    for target in _targets(path, fmt):
        target.real()


def _targets(path: Path, fmt: Format) -> list[targets.Target]:
    """The files an export writes, each with how a refusal names it."""
    if fmt is Format.projector:
        fix = (
            f"{option('fmt', 'projector')} writes {VECTORS} and {METADATA} there as regular files; "
            "remove it, or give another folder"
        )
        return [targets.Target(path / name, f"{path / name} in {option('out', path)}", fix) for name in FILES]
    writes, example = (
        option("fmt", fmt.value),
        "vectors.bin" if fmt is Format.word2vec_binary else "vectors.txt",
    )
    return [
        targets.Target(
            path,
            option("out", path),
            f"{writes} writes a regular file; give a file's path, such as {example}",
            # a folder: a file inside it is what was meant, most likely
            folder_fix=f"{writes} writes one file; give a file's path, such as {path / example}",
        )
    ]


def write(
    m: OpenedEntry,
    vocab: Vocab,
    fmt: Format,
    table: Table,
    path: Path,
    limit: int | None,
    whole_words: bool,
    reporter: Reporter,
) -> ExportResult:
    """Write the chosen rows of one table in token-id (or position) order: --whole-words first, then the
    first `limit` of what is left."""
    if m.static and whole_words:
        refuse_token_options(m.name, whole_words=True)
    rows = m.wte if table is Table.wte else m.wpe
    ids = np.arange(len(rows))
    if whole_words:
        ids = np.flatnonzero(vocab.word_starts[1][: len(rows)])
    ids = ids[:limit]
    notes: list[str] = []
    blocks = _blocks(m, table, ids, reporter)
    outputs: list[tuple[Path, Iterator[bytes]]]
    if fmt is Format.projector:
        outputs = [(path / VECTORS, _tsv(blocks)), (path / METADATA, _metadata(vocab, table, ids))]
    else:
        keys = _keys(vocab, ids, notes) if table is Table.wte else [f"pos{p}" for p in ids.tolist()]
        header = f"{len(ids)} {rows.shape[1]}\n".encode()
        lines = _binary(blocks, keys) if fmt is Format.word2vec_binary else _text(blocks, keys)
        outputs = [(path, _chain(header, lines))]
    files = [file for file, _ in outputs]
    try:  # each file checked again, then written beside the file it replaces, symbolic links followed
        targets.write(
            [
                (target, _filler(parts))
                for target, (_, parts) in zip(_targets(path, fmt), outputs, strict=True)
            ]
        )
    except OSError as e:
        raise UsageError(f"cannot write {option('out', path)}: {e.strerror or e}; {targets.WRITABLE}") from e
    written = [ExportedFile(str(f), f.stat().st_size) for f in files]
    return ExportResult(
        m.name,
        fmt.value,
        table.value,
        str(path),
        len(ids),
        rows.shape[1],
        tuple(written),
        sum(f.bytes for f in written),
        whole_words,
        limit,
        tuple(notes),
    )


Block = tuple[np.ndarray, np.ndarray]  # (ids, their rows as float32)


def _blocks(m: OpenedEntry, table: Table, ids: np.ndarray, reporter: Reporter) -> Iterator[Block]:
    """The rows, a bounded block at a time, each block checked against its checksums before it is given."""
    rows = m.wte if table is Table.wte else m.wpe
    width = rows.shape[1]
    step = max(1, BLOCK_BYTES // (4 * max(width, 1)))
    with reporter.progress(f"exporting {table.value} of {m.name}", 4 * width * len(ids)) as task:
        for start in range(0, len(ids), step):
            chunk = ids[start : start + step]
            if table is Table.wte:
                m.check_rows(tokens=chunk.tolist())
            else:
                m.check_rows(positions=chunk.tolist())
            yield chunk, np.asarray(rows[chunk], dtype="<f4")
            task.advance(4 * width * len(chunk))


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _filler(parts: Iterator[bytes]) -> targets.Fill:
    def fill(f: BinaryIO) -> None:
        for part in parts:
            f.write(part)

    return fill


def _formatter(width: int, sep: str) -> Callable[[list[float]], str]:
    line = sep.join([NUMBER] * width)
    return lambda row: line % tuple(row)


def _text(blocks: Iterator[Block], keys: list[str]) -> Iterator[bytes]:
    """word2vec's text format after the header: `key v1 v2 ...` per row."""
    done = 0
    for chunk, values in blocks:
        fmt = _formatter(values.shape[1], " ")
        lines = [f"{keys[done + j]} {fmt(row)}\n" for j, row in enumerate(values.tolist())]
        done += len(chunk)
        yield "".join(lines).encode("utf-8")


def _binary(blocks: Iterator[Block], keys: list[str]) -> Iterator[bytes]:
    """word2vec's binary format after the header: `key ` then the row's float32s, little-endian, then a line
    break, as the C tool writes it (gensim 4 leaves the break out, and its reader skips it)."""
    done = 0
    for chunk, values in blocks:
        parts = []
        for j, row in enumerate(values):
            parts += [keys[done + j].encode("utf-8"), b" ", row.tobytes(), b"\n"]
        done += len(chunk)
        yield b"".join(parts)


def _tsv(blocks: Iterator[Block]) -> Iterator[bytes]:
    """The Projector's vectors.tsv: one row per line, tab-separated, no header."""
    for _, values in blocks:
        fmt = _formatter(values.shape[1], "\t")
        yield "".join(fmt(row) + "\n" for row in values.tolist()).encode("ascii")


_SPACE = re.compile(r"\s")


def _keys(vocab: Vocab, ids: np.ndarray, notes: list[str]) -> list[str]:
    """word2vec keys: the tokenizer's own vocabulary entry (Ġking), or an added token's own text. A key must
    be one word to a word2vec reader: a row whose entry is empty or holds whitespace (anything str.isspace
    counts), or repeats an earlier key, is keyed id:N instead, as gpt2emb itself names a token by id."""
    pieces, _ = vocab.texts()
    keys, seen, by_id = [], set(), []
    for i in ids.tolist():
        key = pieces[i] or vocab.token(i)  # an added token's content, or "<id N>" past the tokenizer
        if not key or _SPACE.search(key) or key in seen:
            key = f"id:{i}"
            by_id.append(key)
        if key in seen:
            raise BadModel(f"two rows of the vocabulary are both keyed {key}: word2vec keys must be unique")
        seen.add(key)
        keys.append(key)
    if by_id:
        shown = ", ".join(by_id[:SHOW_IDS]) + (", ..." if len(by_id) > SHOW_IDS else "")
        notes.append(
            f"{len(by_id):,} row{'s' if len(by_id) > 1 else ''} keyed by id ({shown}): no vocabulary entry "
            "without whitespace, or one that repeats another"
        )
    return keys


def _metadata(vocab: Vocab, table: Table, ids: np.ndarray) -> Iterator[bytes]:
    """The Projector's metadata.tsv. With one column the Projector reads no header, so wpe's is the position
    alone, one per line; wte's has a header and id, token, leading_space, whole_word."""
    if table is Table.wpe:
        yield "".join(f"{p}\n" for p in ids.tolist()).encode("ascii")
        return
    pieces, _ = vocab.texts()
    leading, whole = vocab.word_starts
    lines = ["\t".join(METADATA_COLUMNS) + "\n"]
    for i in ids.tolist():
        raw = vocab.words.raw(pieces[i]) if pieces[i] else None
        if raw is None:
            raw = (vocab.words.text(pieces[i]) if pieces[i] else vocab.token(i)).encode("utf-8")
        lines.append(f"{i}\t{shown(raw)}\t{str(leading[i]).lower()}\t{str(whole[i]).lower()}\n")
    yield "".join(lines).encode("utf-8")


def shown(raw: bytes) -> str:
    """A token's bytes in double quotes, as the tables show tokens, escaped so that the text gives the bytes
    back: \\xNN is the byte NN (a byte of no whole UTF-8 character, or a control character below 0x80),
    \\uNNNN and \\UNNNNNNNN a character that is not printable, \\\\ a backslash and \\" a double quote. No
    tab or line break is left in it."""
    out = []
    for ch in raw.decode("utf-8", errors="surrogateescape"):
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for a byte that did not decode
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in '\\"':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def export(
    model: str,
    fmt: Format,
    out: str,
    table: Table = Table.wte,
    limit: int | None = None,
    whole_words: bool = False,
    reporter: Reporter | None = None,
    revision: str | None = None,
    encoding: str | None = None,
) -> ExportResult:
    """One table's rows to word2vec files or the Embedding Projector's, in token-id (or position) order:
    whole words only with whole_words, then the first `limit`."""
    export_target(fmt, out, table, limit, whole_words)  # before the model is opened: a bad -o fetches nothing
    opened = open_ref(registry.resolve(model, revision, encoding), reporter)
    return export_in(opened, fmt, out, table, limit, whole_words, reporter)


def export_target(fmt: Format, out: str | Path, table: Table, limit: int | None, whole_words: bool) -> Path:
    """What an export can check before it reads a row; the path to write."""
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise UsageError(f"{option('limit')} must be a whole number, 1 or more, not {limit!r:.40}")
    if whole_words and table is Table.wpe:
        raise UsageError(
            f"{option('whole_words', True)} picks tokens that start a word: it is for "
            f"{option('table', 'wte')}, not wpe"
        )
    if not os.fspath(out).strip():
        raise UsageError(f"{option('out')} needs a path, such as vectors.txt (or a folder, for projector)")
    if str(out) == "-":  # elsewhere - is stdin: here it would be a file named "-"
        raise UsageError(
            f"{option('out', '-')} is not stdout here: export writes files; give a path, such as vectors.txt"
        )
    if fmt is Format.projector:
        path = limits.user_path(out)
    else:
        given = _targets(Path(out), fmt)[0]
        path = targets.user_file(out, option("out", out), given.folder_fix or given.fix)
    check_target(path, fmt)
    return path


def export_in(
    o: Opened,
    fmt: Format,
    out: str | Path,
    table: Table = Table.wte,
    limit: int | None = None,
    whole_words: bool = False,
    reporter: Reporter | None = None,
) -> ExportResult:
    """One table's rows to word2vec files (fmt "word2vec", "word2vec-binary") or to a folder of the
    Embedding Projector's files ("projector"), in token-id (or position) order: whole words only with
    whole_words, then the first `limit` (each checked at the edge: the command line's, the handle's)."""
    path = export_target(fmt, out, table, limit, whole_words)
    if table is Table.wpe:
        check_position_table(o.model, "export")
    return write(o.model, o.vocab, fmt, table, path, limit, whole_words, reporter or o.reporter)
