"""Property (issue 55): a static word table damaged in any of the ways files are (cut short, a byte flipped, a
line twice, a number made junk, NaN or infinity, a byte-order mark, a tab) is read as gensim reads it, or
refused with exit 6 in one line naming where; never an internal error, and nothing cached on a refusal."""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpt2emb.store import static

from conftest import FUZZ, run_cli

gensim = pytest.importorskip("gensim")
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
from gensim.models import KeyedVectors  # noqa: E402

WORDS = ["cat", "dog", "king", "queen", "Straße"]
ROWS = np.array([[1, 0, 0.25], [0.5, 0.5, 0], [0, -2.5, 1], [0, 0.125, 1e-3], [3, 2, 1]], dtype=np.float32)
JUNK = [b"nan", b"NaN", b"inf", b"-inf", b"1e39", b"zero", b"", b"1_0", b"0x10", b"--1", b"1e", b"\xd9\xa3"]
# where a refusal points: a line or a word, or the whole file where no line is at fault
WHERE = re.compile(r"line [0-9,]+|word [0-9,]+|is empty|is a fastText model|is binary|is an archive")


def sound(kind: str) -> bytes:
    """A valid file of the table, as gensim writes it (text with a header, GloVe's text, or binary)."""
    if kind == "binary":
        body = b"".join(w.encode() + b" " + r.tobytes() + b"\n" for w, r in zip(WORDS, ROWS, strict=True))
        return f"{len(WORDS)} {ROWS.shape[1]}\n".encode() + body
    lines = [
        f"{w} {' '.join(repr(float(x)) for x in r)}\n".encode() for w, r in zip(WORDS, ROWS, strict=True)
    ]
    head = [f"{len(WORDS)} {ROWS.shape[1]}\n".encode()] if kind == "word2vec" else []
    return b"".join(head + lines)


@dataclass(frozen=True)
class Damage:
    kind: str  # cut, flip, twice, junk, bom, tab
    at: float  # where, as a share of the file (or of its lines, or of its numbers)
    bit: int = 0
    junk: bytes = b""

    def apply(self, data: bytes) -> bytes:
        if self.kind == "bom":
            return b"\xef\xbb\xbf" + data
        if not data or (self.kind not in ("cut", "flip") and b"\n" not in data):
            return data  # nothing left to damage that way
        if self.kind == "cut":
            return data[: int(self.at * len(data))]
        if self.kind == "flip":
            i = min(int(self.at * len(data)), len(data) - 1)
            return data[:i] + bytes([data[i] ^ (1 << self.bit)]) + data[i + 1 :]
        lines = data.split(b"\n")
        i = min(int(self.at * (len(lines) - 1)), len(lines) - 2)  # the last is what follows the last \n
        if self.kind == "twice":
            return b"\n".join(lines[: i + 1] + lines[i:])
        fields = lines[i].split(b" ")
        j = 1 + self.bit % max(len(fields) - 1, 1)
        if self.kind == "tab":
            return b"\n".join([*lines[:i], b"\t".join([b" ".join(fields[:j]), *fields[j:]]), *lines[i + 1 :]])
        fields[min(j, len(fields) - 1)] = self.junk  # junk
        return b"\n".join([*lines[:i], b" ".join(fields), *lines[i + 1 :]])


DAMAGES = st.builds(
    Damage,
    kind=st.sampled_from(["cut", "flip", "twice", "junk", "bom", "tab"]),
    at=st.floats(0, 1),
    bit=st.integers(0, 7),
    junk=st.sampled_from(JUNK),
)


def gensim_reads(path: Path, kind: str) -> tuple[list[str], np.ndarray] | None:
    """What gensim reads of the file told as kind (gensim cannot tell), its None key for a word seen twice
    left out; None where it complains."""
    binary, no_header = kind == "word2vec binary", kind == "GloVe text"
    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=binary, no_header=no_header)
    except Exception:
        return None
    keys = [k for k in kv.index_to_key if k is not None]
    return keys, kv.vectors[: len(keys)]


@FUZZ
@given(
    kind=st.sampled_from(["word2vec", "glove", "binary"]), damages=st.lists(DAMAGES, min_size=1, max_size=2)
)
def test_a_damaged_file_is_read_as_gensim_reads_it_or_refused_naming_where(
    monkeypatch: pytest.MonkeyPatch, kind: str, damages: list[Damage]
) -> None:
    data = sound(kind)
    for damage in damages:
        data = damage.apply(data)
    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / "t.vec"
        path.write_bytes(data)
        cache = Path(where) / "cache"
        monkeypatch.setenv("GPT2EMB_CACHE_DIR", str(cache))
        done = run_cli("vector", "id:0", "-m", str(path), "--json")
        assert done.exit_code in (0, 6), done.stderr
        if done.exit_code == 6:
            message = json.loads(done.stderr)["error"]["message"]
            assert WHERE.search(message), message
            assert "Traceback" not in done.stderr and done.stdout == ""
            assert not list(cache.glob("static/*/*/manifest.json"))  # nothing cached
            return
        table = static.read_table(path, "utf-8", "t.vec")
        read = gensim_reads(path, table.kind)
        assert read is not None, f"gensim refuses what gpt2emb reads: {data!r}"
        assert table.keys == read[0] and np.array_equal(table.rows, read[1]), data
        assert json.loads(done.stdout)["items"][0]["vector"] == pytest.approx(table.rows[0].tolist(), abs=0)
