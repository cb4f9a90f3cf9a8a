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
