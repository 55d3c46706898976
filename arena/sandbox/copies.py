"""A private copy of a bot's folder for each bot process (local) or container (Docker).

Why: the page cache of a file is the kernel's, shared by every process that reads the
file. A bot that reads its own folder can set which pages of a file are cached
(posix_fadvise DONTNEED drops them, a read brings them back) and read that state
(preadv2 with RWF_NOWAIT fails on a page that is not cached): a store of bits that
outlives the process and is shared by all the bot's processes, its concurrent games and
every later one (issue 33; tests/bots/page-cache carried 192 bits a game through it).
A copy read by one process alone, removed when the process ends, carries nothing: its
pages are its own, and on a tmpfs they cannot even be dropped.

Where: COPIES, a folder of root's (0711) on /dev/shm when that is a tmpfs (else in the
temporary folder), one subfolder per copy named after the arena process that made it
("PID-START-RANDOM", START its start time), so that copies of a run that was killed are
found and removed by the next run's `remove_leftovers`. Nothing of the folder is followed:
folders and regular files are copied (mode, owner as root, times), links are made again as
links (a bot's view resolves them as before), fifos, sockets and devices are left out.
The copy is bounded by the bot folder limits (arena.botcopy.FolderLimits: 200 MB, 10,000
files and folders by default); a bigger folder is refused in one line.

Standard library (and arena.botcopy's limits) only.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from arena.botcopy import MAX_FILES_ENV, MAX_MB_ENV, FolderLimits, FolderLimitsError
from arena.faults import SandboxError

CHUNK = 1 << 20


def _copies_root() -> Path:
    shm = Path("/dev/shm")
    try:
        on_tmpfs = any(
            line.split()[1] == "/dev/shm" and line.split()[2] == "tmpfs"
            for line in Path("/proc/self/mounts").read_text().splitlines()
        )
    except OSError:
        on_tmpfs = False
    base = shm if on_tmpfs and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())
    return base / f"arena-copies-{os.geteuid()}"


COPIES = _copies_root()


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _owner_tag() -> str:
    pid = os.getpid()
    return f"{pid}-{_start_time(pid) or 0}"


def _make_root() -> Path:
    COPIES.mkdir(mode=0o711, exist_ok=True)
    info = COPIES.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise SandboxError(f"{COPIES} is not a folder of arena's user: remove it")
    COPIES.chmod(0o711)  # bots reach their copy through a mount; nobody may list the copies
    return COPIES


class FolderCopy:
    """One private copy of a bot folder (`path`), made now; `refresh()` makes it afresh,
    `remove()` removes it."""

    def __init__(self, folder: Path, limits: FolderLimits | None = None):
        self.folder = Path(folder).resolve()
        try:
            self.limits = limits or FolderLimits.from_env()
        except FolderLimitsError as error:
            raise SandboxError(str(error)) from None
        self.path = _make_root() / f"{_owner_tag()}-{secrets.token_hex(6)}"
        self.path.mkdir(mode=0o700)
        try:
            self._fill()
        except BaseException:
            self.remove()
            raise

    def refresh(self) -> None:
        """Empty the copy and copy the folder into it again (the same folder: a mount of it
        stays valid); nothing of what its last reader did to it is left."""
        _empty(self.path)
        self._fill()

    def remove(self) -> None:
        """Remove the copy (idempotent)."""
        shutil.rmtree(self.path, ignore_errors=True)

    release = remove  # what a container gives back when it is removed

    def _fill(self) -> None:
        source = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        target = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            counts = [0, 0]  # bytes, files and folders
            _copy_tree(source, target, counts, self.limits, self.folder)
            _copy_attributes(os.fstat(source), target)
        finally:
            os.close(source)
            os.close(target)


def _too_big(folder: Path, limits: FolderLimits) -> SandboxError:
    return SandboxError(
        f"the bot folder {folder} holds more than {limits.total_mb} MB or {limits.files} "
        f"files and folders, the limits of a bot folder ({MAX_MB_ENV}, {MAX_FILES_ENV}): "
        "each bot process reads a private copy of it; make it smaller"
    )


def _copy_tree(source: int, target: int, counts: list[int], limits: FolderLimits, folder: Path) -> None:
    with os.scandir(source) as entries:
        for entry in entries:
            info = entry.stat(follow_symlinks=False)
            counts[1] += 1
            counts[0] += info.st_size if stat.S_ISREG(info.st_mode) else 0
            if counts[1] > limits.files or counts[0] > limits.total_mb << 20:
                raise _too_big(folder, limits)
            name = entry.name
            if stat.S_ISDIR(info.st_mode):
                os.mkdir(name, 0o700, dir_fd=target)
                inner_source = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=source)
                inner_target = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=target)
                try:
                    _copy_tree(inner_source, inner_target, counts, limits, folder)
                    _copy_attributes(os.fstat(inner_source), inner_target)
                finally:
                    os.close(inner_source)
                    os.close(inner_target)
            elif stat.S_ISREG(info.st_mode):
                _copy_file(source, target, name)
            elif stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(name, dir_fd=source), name, dir_fd=target)
                if os.geteuid() == 0:
                    os.chown(name, info.st_uid, info.st_gid, dir_fd=target, follow_symlinks=False)
            # fifos, sockets and devices are not copied: one shared by two processes is a
            # channel between them


def _copy_file(source: int, target: int, name: str) -> None:
    read = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=source)
    try:
        write = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=target)
        try:
            info = os.fstat(read)
            if not stat.S_ISREG(info.st_mode):
                return  # swapped since it was listed: left out
            left = info.st_size
            while left > 0:
                sent = os.sendfile(write, read, None, min(left, CHUNK))
                if sent == 0:
                    break  # shorter than it was: copied as it is now
                left -= sent
            _copy_attributes(info, write)
        finally:
            os.close(write)
    finally:
        os.close(read)


def _copy_attributes(info: os.stat_result, fd: int) -> None:
    """Mode (without setuid and setgid), owner (as root) and times of `info`, onto `fd`."""
    if os.geteuid() == 0:
        os.fchown(fd, info.st_uid, info.st_gid)
    os.fchmod(fd, stat.S_IMODE(info.st_mode) & 0o1777)
    os.utime(fd, ns=(info.st_atime_ns, info.st_mtime_ns))


def _empty(path: Path) -> None:
    """Remove everything inside `path` (not the folder itself), never following a link."""
    folder = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name in os.listdir(folder):
            try:
                os.unlink(name, dir_fd=folder)
            except IsADirectoryError:
                shutil.rmtree(name, dir_fd=folder)
    finally:
        os.close(folder)


def remove_leftovers() -> int:
    """Remove the copies of arena processes that have ended (a run that was killed); how many."""
    try:
        names = os.listdir(COPIES)
    except OSError:
        return 0
    removed = 0
    for name in names:
        pid, _, rest = name.partition("-")
        started = rest.rpartition("-")[0]
        if pid.isdigit() and _start_time(int(pid)) == started:
            continue  # a live run's copy
        shutil.rmtree(COPIES / name, ignore_errors=True)
        removed += 1
    return removed
