"""What gpt2emb writes never replaces what is not a regular file (issue 23): export's -o (and projector's two
files) and positions --png refuse a device, FIFO, socket or folder before anything is fetched, follow a
symbolic link to the file it names (the link stays a link) and refuse Windows' device names."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpt2emb.errors import UsageError

from conftest import run_cli
from fakehub import FakeHub

KINDS = {"device": "a character device", "fifo": "a FIFO (a named pipe)", "socket": "a socket"}
W2V = ("export", "--format", "word2vec", "--limit", "2")
PNG_FIX = "positions --png writes a regular file; give a file's path, such as --png wpe.png"


def w2v_fix(example: str = "vectors.txt") -> str:
    return f"--format word2vec writes a regular file; give a file's path, such as {example}"


class Specials:
    """Devices, FIFOs and sockets made for a test. Each FIFO has a reader that drains it, so that a writer
    that opened it (the bug) finishes instead of hanging, and what it wrote can be shown."""

    def __init__(self) -> None:
        self.received = bytearray()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._fds: list[int] = []

    def make(self, kind: str, path: Path) -> os.stat_result:
        if kind == "device":
            try:  # /dev/null's numbers: harmless if a regression writes into it
                os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            except PermissionError:
                pytest.skip("making a device node needs root (CAP_MKNOD), which this run does not have")
        elif kind == "fifo":
            os.mkfifo(path)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            self._fds.append(fd)
            thread = threading.Thread(target=self._drain, args=(fd,), daemon=True)
            thread.start()
            self._threads.append(thread)
        elif kind == "socket":
            with socket.socket(socket.AF_UNIX) as s:
                s.bind(str(path))  # the socket's file stays when the socket is closed
        else:
            path.mkdir()
        return os.lstat(path)

    def _drain(self, fd: int) -> None:
        while not self._stop.wait(0.01):
            with contextlib.suppress(BlockingIOError):  # nothing written yet
                self.received += os.read(fd, 1 << 16)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        for fd in self._fds:
            os.close(fd)


@pytest.fixture
def specials() -> Iterator[Specials]:
    made = Specials()
    yield made
    made.close()


def same_node(before: os.stat_result, path: Path) -> bool:
    """path is still the very file it was: same type, device numbers and inode."""
    after = os.lstat(path)
    return (after.st_mode, after.st_rdev, after.st_ino) == (before.st_mode, before.st_rdev, before.st_ino)


def refused(*args: str) -> str:
    result = run_cli(*args)
    assert result.exit_code == 2, result.output + result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    message: str = result.stderr.strip()
    assert message.startswith("gpt2emb: ") and len(message.splitlines()) == 1
    return message.removeprefix("gpt2emb: ")


def wrote(*args: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 0, result.output + result.stderr


def fetched_nothing(hub: FakeHub, caches: dict[str, Path]) -> bool:
    return hub.requests == [] and not caches["cache"].exists()


def temporaries(*folders: Path) -> list[str]:
    return [name for folder in folders for name in os.listdir(folder) if name.endswith(".tmp")]


def new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# ---------------------------------------------------------------- export -o


@pytest.mark.parametrize("kind", KINDS)
def test_export_refuses_what_is_not_a_file(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path], specials: Specials, kind: str
) -> None:
    target = tmp_path / "d"
    before = specials.make(kind, target)
    assert refused(*W2V, "-o", str(target)) == f"-o {target} is {KINDS[kind]}: {w2v_fix()}"
    assert refused("export", "--format", "word2vec-binary", "-o", str(target)) == (
        f"-o {target} is {KINDS[kind]}: --format word2vec-binary writes a regular file; give a file's path, "
        "such as vectors.bin"
    )
    assert same_node(before, target) and specials.received == b""
    assert fetched_nothing(hub, caches) and temporaries(tmp_path) == []


def restore_dev_null(before: os.stat_result) -> None:
    """If a regression replaced /dev/null with a file, put the device back: the machine needs it."""
    if not stat.S_ISCHR(os.lstat("/dev/null").st_mode):
        os.unlink("/dev/null")
        os.mknod("/dev/null", stat.S_IFCHR | 0o666, before.st_rdev)
        os.chmod("/dev/null", 0o666)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_dev_null_stays_a_device(hub: FakeHub, caches: dict[str, Path]) -> None:
    before = os.lstat("/dev/null")
    assert stat.S_ISCHR(before.st_mode)
    try:
        assert refused(*W2V, "-o", "/dev/null") == f"-o /dev/null is a character device: {w2v_fix()}"
        assert (
            refused("positions", "--png", "/dev/null") == f"--png /dev/null is a character device: {PNG_FIX}"
        )
        assert same_node(before, Path("/dev/null")) and fetched_nothing(hub, caches)
    finally:
        restore_dev_null(before)


def test_a_folder_or_a_link_to_one_is_refused_for_word2vec(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path]
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    link = tmp_path / "link"
    link.symlink_to("folder")
    assert refused(*W2V, "-o", str(folder)) == (
        f"-o {folder} is a folder: --format word2vec writes one file; give a file's path, such as "
        f"{folder / 'vectors.txt'}"
    )
    assert refused(*W2V, "-o", str(link)) == (
        f"-o {link} is a symbolic link to {folder}, a folder: --format word2vec writes one file; give a "
        f"file's path, such as {link / 'vectors.txt'}"
    )
    assert link.is_symlink() and os.listdir(folder) == [] and fetched_nothing(hub, caches)


def test_a_symlink_is_followed_and_stays_a_link(hub: FakeHub, tmp_path: Path) -> None:
    real = tmp_path / "real" / "vectors.txt"
    real.parent.mkdir()
    real.write_text("an earlier export")
    os.chmod(real, 0o600)
    inode = real.stat().st_ino
    link = tmp_path / "link.txt"
    link.symlink_to(Path("real") / "vectors.txt")  # relative: read from the link's own folder
    wrote(*W2V, "-o", str(link))
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "vectors.txt")
    assert real.read_text().startswith("2 ") and len(real.read_text().splitlines()) == 3
    assert real.stat().st_ino != inode  # replaced whole by a rename, not written over in place
    assert stat.S_IMODE(real.stat().st_mode) == 0o600  # the replaced file's mode is kept
    assert temporaries(tmp_path, real.parent) == []


def test_a_replaced_file_keeps_its_mode_and_a_hard_link_the_old_contents(
    hub: FakeHub, tmp_path: Path
) -> None:
    """Issue 37, item 11: `chmod 600 out.txt; ln out.txt h.txt; export -o out.txt` leaves out.txt at 0600
    (as install -C and editors do), on a new inode; h.txt keeps the old contents, as docs/commands/export.md
    says."""
    out, hard = tmp_path / "out.txt", tmp_path / "h.txt"
    out.write_text("an earlier export")
    os.chmod(out, 0o600)
    os.link(out, hard)
    wrote(*W2V, "-o", str(out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text().startswith("2 ") and hard.read_text() == "an earlier export"
    assert out.stat().st_ino != hard.stat().st_ino
    fresh = tmp_path / "new.txt"
    wrote(*W2V, "-o", str(fresh))
    assert stat.S_IMODE(fresh.stat().st_mode) == new_file_mode()  # a new file: the umask's mode


@pytest.mark.parametrize("kind", KINDS)
def test_a_symlink_to_a_special_file_is_refused(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path], specials: Specials, kind: str
) -> None:
    special = tmp_path / "special"
    before = specials.make(kind, special)
    link = tmp_path / "link.txt"
    link.symlink_to(special)
    assert (
        refused(*W2V, "-o", str(link))
        == f"-o {link} is a symbolic link to {special}, {KINDS[kind]}: {w2v_fix()}"
    )
    assert link.is_symlink() and same_node(before, special) and fetched_nothing(hub, caches)


def test_a_symlink_to_dev_null_is_refused(hub: FakeHub, tmp_path: Path, caches: dict[str, Path]) -> None:
    before = os.lstat("/dev/null")
    link = tmp_path / "null.txt"
    link.symlink_to("/dev/null")
    try:
        said = "is a symbolic link to /dev/null, a character device"
        assert refused(*W2V, "-o", str(link)) == f"-o {link} {said}: {w2v_fix()}"
        assert refused("positions", "--png", str(link)) == f"--png {link} {said}: {PNG_FIX}"
        assert link.is_symlink() and same_node(before, Path("/dev/null")) and fetched_nothing(hub, caches)
    finally:
        restore_dev_null(before)


def test_a_dangling_symlink(hub: FakeHub, tmp_path: Path) -> None:
    """Its target is written if the target's folder is there; else refused, and no folder is made."""
    (tmp_path / "made").mkdir()
    link = tmp_path / "link.txt"
    link.symlink_to(Path("made") / "vectors.txt")
    wrote(*W2V, "-o", str(link))
    assert link.is_symlink() and (tmp_path / "made" / "vectors.txt").read_text().startswith("2 ")
    assert stat.S_IMODE((tmp_path / "made" / "vectors.txt").stat().st_mode) == new_file_mode()
    nowhere = tmp_path / "nowhere.txt"
    absent = tmp_path / "absent" / "vectors.txt"
    nowhere.symlink_to(absent)
    assert refused(*W2V, "-o", str(nowhere)) == (
        f"-o {nowhere} is a symbolic link to {absent}, in a folder that does not exist ({absent.parent}); "
        "make that folder, or give another path"
    )
    assert nowhere.is_symlink() and not absent.parent.exists()
    loop = tmp_path / "loop.txt"
    loop.symlink_to("loop.txt")
    assert refused(*W2V, "-o", str(loop)) == (
        f"cannot write -o {loop}: it is a symbolic link that leads round in a loop; give another path"
    )
    assert loop.is_symlink()


# ---------------------------------------------------------------- projector's folder and its two files


def test_projector_checks_each_of_its_files(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path], specials: Specials
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    vectors, metadata = folder / "vectors.tsv", folder / "metadata.tsv"
    projector = ("export", "--format", "projector", "--limit", "2", "-o", str(folder))
    fix = (
        "--format projector writes vectors.tsv and metadata.tsv there as regular files; remove it, or give "
        "another folder"
    )
    before = specials.make("fifo", vectors)
    assert refused(*projector) == f"{vectors} in -o {folder} is a FIFO (a named pipe): {fix}"
    assert same_node(before, vectors) and not metadata.exists() and specials.received == b""
    vectors.unlink()
    before = specials.make("socket", metadata)
    assert refused(*projector) == f"{metadata} in -o {folder} is a socket: {fix}"
    assert same_node(before, metadata) and not vectors.exists() and fetched_nothing(hub, caches)
    metadata.unlink()
    # a link there is followed: the file it names is written, in its own folder, and the link stays
    elsewhere = tmp_path / "kept" / "meta.tsv"
    elsewhere.parent.mkdir()
    metadata.symlink_to(elsewhere)
    wrote(*projector)
    assert metadata.is_symlink() and elsewhere.read_text().startswith(
        "id\ttoken\tleading_space\twhole_word\n"
    )
    assert stat.S_ISREG(os.lstat(vectors).st_mode) and len(vectors.read_text().splitlines()) == 2
    assert temporaries(folder, elsewhere.parent) == []


def test_projector_folder_itself(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path], specials: Specials
) -> None:
    device = tmp_path / "d"
    before = specials.make("device", device)
    assert refused("export", "--format", "projector", "-o", str(device)) == (
        f"-o {device} is a character device: --format projector writes a folder (vectors.tsv and "
        "metadata.tsv); give the path of a folder, new or existing"
    )
    assert same_node(before, device) and fetched_nothing(hub, caches)
    # a link to a folder, or a dangling link whose target's folder is there, is followed
    real = tmp_path / "real"
    real.mkdir()
    to_folder, to_new = tmp_path / "to-folder", tmp_path / "to-new"
    to_folder.symlink_to("real")
    wrote("export", "--format", "projector", "--limit", "2", "-o", str(to_folder))
    assert to_folder.is_symlink() and sorted(os.listdir(real)) == ["metadata.tsv", "vectors.tsv"]
    to_new.symlink_to(Path("real") / "new")
    wrote("export", "--format", "projector", "--limit", "2", "-o", str(to_new))
    assert to_new.is_symlink() and sorted(os.listdir(real / "new")) == ["metadata.tsv", "vectors.tsv"]


# ---------------------------------------------------------------- positions --png


@pytest.mark.parametrize("kind", [*KINDS, "folder"])
def test_png_refuses_what_is_not_a_file(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path], specials: Specials, kind: str
) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "wpe.png"
    before = specials.make(kind, target)
    if kind == "folder":
        expected = (
            f"--png {target} is a folder: positions --png writes a regular file; give a file's path, such as "
            f"--png {target / 'wpe.png'}"
        )
    else:
        expected = f"--png {target} is {KINDS[kind]}: {PNG_FIX}"
    assert refused("positions", "--png", str(target)) == expected
    assert same_node(before, target) and specials.received == b""
    assert fetched_nothing(hub, caches) and temporaries(tmp_path) == []


def test_png_through_symlinks(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path], specials: Specials
) -> None:
    pytest.importorskip("matplotlib")
    real = tmp_path / "figs" / "wpe.png"
    real.parent.mkdir()
    real.write_bytes(b"an earlier figure")
    inode = real.stat().st_ino
    link = tmp_path / "link.png"
    link.symlink_to(real)
    wrote("positions", "--png", str(link))
    assert link.is_symlink() and real.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert real.stat().st_ino != inode  # a new file renamed onto it: never a half-written figure
    assert stat.S_IMODE(real.stat().st_mode) == new_file_mode() and temporaries(tmp_path, real.parent) == []
    # dangling: made if its folder is there, else refused before the model is opened
    new = tmp_path / "new.png"
    new.symlink_to(Path("figs") / "new.png")
    wrote("positions", "--png", str(new))
    assert new.is_symlink() and (tmp_path / "figs" / "new.png").read_bytes()[:4] == b"\x89PNG"
    hub.requests.clear()
    nowhere = tmp_path / "nowhere.png"
    nowhere.symlink_to(tmp_path / "absent" / "wpe.png")
    assert refused("positions", "--png", str(nowhere)) == (
        f"--png {nowhere} is a symbolic link to {tmp_path / 'absent' / 'wpe.png'}, in a folder that does not "
        f"exist ({tmp_path / 'absent'}); make that folder, or give another path"
    )
    fifo = tmp_path / "pipe"
    before = specials.make("fifo", fifo)
    to_fifo = tmp_path / "pipe.png"
    to_fifo.symlink_to(fifo)
    assert refused("positions", "--png", str(to_fifo)) == (
        f"--png {to_fifo} is a symbolic link to {fifo}, a FIFO (a named pipe): {PNG_FIX}"
    )
    assert same_node(before, fifo) and specials.received == b"" and hub.requests == []


def test_png_is_written_as_named(hub: FakeHub, tmp_path: Path) -> None:
    """The file named is the file written (matplotlib alone would write wpe.png for --png wpe), in the format
    its extension names."""
    pytest.importorskip("matplotlib")
    figs = tmp_path / "figs"
    figs.mkdir()
    wrote("positions", "--png", str(figs / "wpe"))
    wrote("positions", "--png", str(figs / "wpe.SVG"))
    assert sorted(os.listdir(figs)) == ["wpe", "wpe.SVG"]
    assert (figs / "wpe").read_bytes()[:4] == b"\x89PNG" and b"<svg" in (figs / "wpe.SVG").read_bytes()
    odd = figs / "wpe.xyz"
    assert refused("positions", "--png", str(odd)).startswith(
        f"cannot write --png {odd}: matplotlib writes no .xyz file; name it .png, .svg or .pdf"
    )
    assert sorted(os.listdir(figs)) == ["wpe", "wpe.SVG"]  # no file, and no temporary left


# ---------------------------------------------------------------- the Python handle, in its own words


def test_the_handle_refuses_in_its_words(hub: FakeHub, tmp_path: Path, specials: Specials) -> None:
    pytest.importorskip("matplotlib")
    import gpt2emb

    m = gpt2emb.open("gpt2")
    fifo = tmp_path / "pipe"
    before = specials.make("fifo", fifo)
    with pytest.raises(UsageError) as png:
        m.position_map(png=fifo)
    assert str(png.value) == (
        f"png='{fifo}' is a FIFO (a named pipe): position_map writes a regular file; give a file's path, "
        "such as png='wpe.png'"
    )
    with pytest.raises(UsageError) as out:
        m.export("word2vec", fifo, limit=2)
    assert str(out.value) == (
        f"out='{fifo}' is a FIFO (a named pipe): fmt='word2vec' writes a regular file; give a file's path, "
        "such as vectors.txt"
    )
    assert same_node(before, fifo) and specials.received == b""


# ---------------------------------------------------------------- Windows' device names


def test_windows_device_names() -> None:
    from gpt2emb import targets

    for name, device in (
        ("NUL", "NUL"),
        ("nul", "NUL"),
        ("NUL.txt", "NUL"),
        ("nul:", "NUL"),
        ("con.png", "CON"),
        ("Com1", "COM1"),
        ("lpt9.tar.gz", "LPT9"),
        ("aux ", "AUX"),
        ("PRN .txt", "PRN"),
    ):
        assert targets.windows_device(name) == device, name
    for name in ("NULL", "nul_", "COM0", "COM10", "LPT", "console.txt", "vectors.txt", "xNUL", ".nul"):
        assert targets.windows_device(name) is None, name


def test_windows_device_names_are_refused(
    hub: FakeHub, tmp_path: Path, caches: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Windows a file named NUL (or nul.txt, COM1.png, ...) is the device, in any folder: the platform
    check is switched here, since these tests run on Linux."""
    from gpt2emb import targets

    monkeypatch.setattr(targets, "WINDOWS", True)
    out = tmp_path / "NUL.txt"
    assert refused(*W2V, "-o", str(out)) == f"-o {out} names the Windows device NUL: {w2v_fix()}"
    png = tmp_path / "com1.PNG"
    assert refused("positions", "--png", str(png)) == f"--png {png} names the Windows device COM1: {PNG_FIX}"
    link = tmp_path / "link.txt"
    link.symlink_to("Lpt3.txt")  # the name the link leads to counts too
    assert refused(*W2V, "-o", str(link)).startswith(f"-o {link} names the Windows device LPT3: ")
    folder = tmp_path / "aux"
    assert refused("export", "--format", "projector", "-o", str(folder)).startswith(
        f"-o {folder} names the Windows device AUX: "
    )
    assert not out.exists() and not png.exists() and not folder.exists() and fetched_nothing(hub, caches)
    monkeypatch.setattr(targets, "WINDOWS", False)  # on Linux they are names like any other
    wrote(*W2V, "-o", str(out))
    assert out.read_text().startswith("2 ")


# ---------------------------------------------------------------- the check made again before the rename


def test_the_target_is_checked_again_before_the_rename(tmp_path: Path) -> None:
    from gpt2emb import targets

    out = tmp_path / "out.txt"
    target = targets.Target(out, f"-o {out}", "give a file's path")

    def fill(f: Any) -> None:
        f.write(b"rows")
        os.mkfifo(out)  # made while the rows are written

    with pytest.raises(UsageError) as raised:
        targets.write([(target, fill)])
    assert str(raised.value) == f"-o {out} is a FIFO (a named pipe): give a file's path"
    assert stat.S_ISFIFO(os.lstat(out).st_mode) and os.listdir(tmp_path) == ["out.txt"]  # no temporary left
