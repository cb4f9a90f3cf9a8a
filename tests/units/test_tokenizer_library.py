"""tokenizer_library.py: the tokenizers library's errors and panics made one fault, descriptor 2 silenced."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from gpt2emb.tokenizer_library import LibraryFault, library_faults


def test_library_faults_silences_descriptor_2_in_a_process_of_one_thread() -> None:
    # It runs in a process of its own, because this one runs the fake Hub's threads.
    code = (
        "import os\nfrom gpt2emb.tokenizer_library import library_faults\nwith library_faults():\n"
        "    os.write(2, b\"thread '<unnamed>' panicked at a Rust backtrace\\n\")\nos.write(2, b'after\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "after\n")


def test_library_faults_makes_one_fault(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(LibraryFault, match=r"^no such piece$"), library_faults():
        raise ValueError("no such piece")

    class PanicException(BaseException):  # what pyo3 raises for a Rust panic: no Exception
        pass

    with pytest.raises(LibraryFault, match=r"^it panicked$"), library_faults():
        raise PanicException("it panicked")
    with pytest.raises(KeyboardInterrupt), library_faults():
        raise KeyboardInterrupt  # an interrupt stays one
    os.write(2, b"after\n")  # descriptor 2 is itself again
    assert capfd.readouterr().err == "after\n"


def test_library_faults_leaves_descriptor_2_alone_while_another_thread_runs(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Descriptor 2 is the whole process's: pointed at /dev/null, what another thread prints (a batch's
    reader, a notebook's own threads) would be lost: it is left alone while one runs."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with library_faults():
            os.write(2, b"printed by another thread meanwhile\n")
        with pytest.raises(LibraryFault, match=r"^no such piece$"), library_faults():
            raise ValueError("no such piece")
    finally:
        stop.set()
        other.join()
    assert capfd.readouterr().err == "printed by another thread meanwhile\n"


def _in_a_process_of_one_thread(code: str) -> subprocess.CompletedProcess[str]:
    """code run by a Python of its own, since this process runs the fake Hub's threads."""
    head = "import os, sys\nfrom gpt2emb.tokenizer_library import library_faults\n"
    return subprocess.run([sys.executable, "-c", head + code], capture_output=True, text=True, timeout=60)


def test_what_python_printed_before_the_call_is_not_silenced_with_it() -> None:
    """Text that Python still holds in stderr's buffer goes out before descriptor 2 is pointed at /dev/null.
    Otherwise a flush during the call would send it to /dev/null too. CPython's own stderr writes through;
    one rewrapped to change its encoding, a common idiom, holds what it is given."""
    done = _in_a_process_of_one_thread(
        "import io\nsys.stderr = io.TextIOWrapper(sys.stderr.buffer, encoding='utf-8')\n"
        "sys.stderr.write('said before, ')\n"
        "with library_faults():\n    sys.stderr.write('during')\n    sys.stderr.flush()\n"
        "sys.stderr.write('after\\n')\n"
    )
    assert (done.returncode, done.stderr) == (0, "said before, after\n")


def test_the_call_leaves_no_descriptor_open() -> None:
    """Both descriptors it opens (its /dev/null and the saved descriptor 2) are closed again."""
    done = _in_a_process_of_one_thread(
        "def open_fds():\n"
        "    found = []\n"
        "    for fd in range(256):\n"
        "        try:\n"
        "            os.fstat(fd)\n"
        "        except OSError:\n"
        "            continue\n"
        "        found.append(fd)\n"
        "    return found\n"
        "before = open_fds()\n"
        "for _ in range(3):\n"
        "    with library_faults():\n"
        "        pass\n"
        "print(open_fds() == before, len(before))\n"
    )
    assert done.returncode == 0, done.stderr
    ok, count = done.stdout.split()
    assert ok == "True" and int(count) >= 3


def test_an_added_token_is_matched_as_the_normalizer_makes_it_only_if_it_is_normalized() -> None:
    """Under a lowercasing normalizer, a normalized added token is found as its lowercase text; one that is
    not normalized (as special tokens are by default) is found as it is written."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers

    from gpt2emb.tokenizer_library import added_tokens

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.add_tokens([AddedToken("Kitten", normalized=True), AddedToken("DOG", normalized=False)])
    tok.add_special_tokens([AddedToken("<S>", special=True)])
    as_written = [("Kitten", 2, False, "Kitten"), ("DOG", 3, False, "DOG"), ("<S>", 4, True, "<S>")]
    assert [tuple(t.values()) for t in added_tokens(tok)] == as_written  # no normalizer: all as written
    tok.normalizer = normalizers.Lowercase()
    got = [(t["content"], t["id"], t["special"], t["matched"]) for t in added_tokens(tok)]
    assert got == [("Kitten", 2, False, "kitten"), ("DOG", 3, False, "DOG"), ("<S>", 4, True, "<S>")]
