"""The paths gpt2emb writes: the one place that checks one (a regular file or a new one, never a device, FIFO,
socket or folder, nor a name Windows keeps for a device, nor anything gpt2emb reads: kept.py), follows its
symbolic links to the file they name, and writes there atomically: a temporary file in that file's own folder,
then os.replace onto it."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from gpt2emb import kept, limits
from gpt2emb.errors import UsageError

WINDOWS = os.name == "nt"  # read at each check, not import: a test plays Windows on Linux by setting it
# names Windows keeps for its devices, in every folder and with any extension (nul.txt is NUL, too);
# ¹²³ count as digits there, as Python's own ntpath.isreserved has it
DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {port + digit for port in ("COM", "LPT") for digit in "123456789\u00b9\u00b2\u00b3"}
)
WRITABLE = "choose a folder you can write to"
LOOP = "it is a symbolic link that leads round in a loop; give another path"


def windows_device(name: str) -> str | None:
    """The device a file name stands for on Windows (NUL for nul.txt, 'NUL .txt' or nul:), or None."""
    device = name.partition(".")[0].partition(":")[0].rstrip(" ").upper()
    return device if device in DEVICES else None


def kind(mode: int) -> str:
    """What a file of this st_mode is, in a message's words."""
    kinds = (
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (a named pipe)"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((said for test, said in kinds if test(mode)), "a special file")


@dataclass(frozen=True)
class Target:
    """A path to write and how a refusal names it: '{said} is a character device: {fix}'."""

    path: Path
    said: str  # the path as the caller gave it: "-o out.txt", "png='wpe.png'"
    fix: str  # what to give instead, said after what is there
    folder_fix: str | None = None  # the fix when a folder is there (the fix may suggest a file inside it)
    folder: bool = False  # a folder is what is made here (the projector's -o), not a file

    def real(self) -> Path:
        """The path to replace (or, for a folder, to write in): path with its symbolic links followed.
        Refused (UsageError) when what is there is not what is written, or a folder it needs cannot be
        made, or it is what gpt2emb reads (kept.py). No side effects: nothing is made or opened."""
        try:
            kept.check(self.path, self.said)
            return self._real()
        except ValueError as e:  # a NUL character in the name
            raise UsageError(f"cannot write {self.said}: {e}") from None

    def _real(self) -> Path:
        path = self.path
        real = Path(os.path.realpath(path))
        if WINDOWS:
            for name in (path.name, real.name):
                if (device := windows_device(name)) is not None:
                    raise UsageError(f"{self.said} names the Windows device {device}: {self.fix}")
        mode = self._mode(real)
        if mode is not None:
            if not (stat.S_ISDIR(mode) if self.folder else stat.S_ISREG(mode)):
                fix = self.folder_fix if stat.S_ISDIR(mode) and self.folder_fix else self.fix
                what = f"a symbolic link to {real}, {kind(mode)}" if path.is_symlink() else kind(mode)
                raise UsageError(f"{self.said} is {what}: {fix}")
            self._writable(real if self.folder else real.parent)
            return real
        # nothing there yet: the first thing up the path as given must be a folder to write in, or a
        # symbolic link whose target's folder is there (a dangling link's target is made, never its folders)
        above = path
        while not os.path.lexists(above) and above != above.parent:
            above = above.parent
        if above.is_symlink() and not above.exists():
            target = Path(os.path.realpath(above))
            self._mode(target)  # refuses a loop
            if not target.parent.is_dir():
                link = self.said if above == path else f"cannot write {self.said}: {above}"
                raise UsageError(
                    f"{link} is a symbolic link to {target}, in a folder that does not exist "
                    f"({target.parent}); make that folder, or give another path"
                )
            self._writable(target.parent)
        elif not above.is_dir():
            what = kind(os.stat(above).st_mode) if above.exists() else "not a folder"
            raise UsageError(
                f"cannot write {self.said}: {above} is {what}, not a folder; choose another path"
            )
        else:
            self._writable(above)
        return real

    def _mode(self, real: Path) -> int | None:
        """st_mode of what is at real (links already followed), None when nothing is; a loop is refused."""
        try:
            return os.stat(real).st_mode
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise UsageError(f"cannot write {self.said}: {LOOP}") from None
            return None  # absent, or a file where a folder should be: said when the folders are checked

    def _writable(self, folder: Path) -> None:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write {self.said}: {folder} is not writable; {WRITABLE}")


def user_file(given: str | os.PathLike[str], said: str, fix: str) -> Path:
    """A file's path as a user gives it (~ expanded: limits.user_path). One that ends in a slash names a
    folder, though Path drops the slash: no file of that name is what was meant."""
    text = os.fspath(given)
    if text.endswith(("/", os.sep)) and text.strip("/" + os.sep):
        raise UsageError(f"{said} ends with a slash, which names a folder: {fix}")
    return limits.user_path(text)


Fill = Callable[[BinaryIO], object]  # writes a file's bytes into the open file it is given


def write(files: Sequence[tuple[Target, Fill]]) -> None:
    """Each file written whole into a temporary file beside the file it replaces, then, once every one is,
    each checked again and renamed onto it: no reader sees a part-written file, nor one of a set without
    the others. OSError is the caller's to word."""
    reals = [target.real() for target, _ in files]
    temps: list[Path] = []
    try:
        for real, (_, fill) in zip(reals, files, strict=True):
            real.parent.mkdir(parents=True, exist_ok=True)  # folders are made by the code that writes in them
            temps.append(_temp(real, fill))
        for temp, real, (target, _) in zip(temps, reals, files, strict=True):
            # what is there now, not what was there when the writing began: the rename goes to the path
            # checked, and never replaces a device, FIFO or folder that appeared meanwhile
            if target.real() != real:
                raise UsageError(f"{target.said} changed while it was written; run the command again")
            os.replace(temp, real)
    finally:
        for temp in temps:
            temp.unlink(missing_ok=True)


def save(target: Target, fill: Fill) -> None:
    """One file written as write() writes it; an OSError refused (UsageError) in the words every file's
    refusal uses."""
    try:
        write([(target, fill)])
    except OSError as e:
        raise UsageError(f"cannot write {target.said}: {e.strerror or e}; {WRITABLE}") from None


def _temp(real: Path, fill: Fill) -> Path:
    """A new file beside real (same folder, so that os.replace is a rename), filled by fill."""
    fd, name = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        # mkstemp makes the file private (0600). A file replaced keeps its mode (a private 0600 stays so), as
        # install -C and editors keep it; a new one is made to be shared, as a new file is
        try:
            mode = stat.S_IMODE(real.stat().st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(fd if os.chmod in os.supports_fd else name, mode)
        with os.fdopen(fd, "wb") as f:
            fill(f)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp
