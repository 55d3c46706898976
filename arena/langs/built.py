"""What a build made: build/ of a bot with a `build` step, built once per content hash.

The mark, `build/.arena-built` (JSON, written by arena only after a build succeeded):

    {"source": the bot's content hash (build/ left out), "where": the sandbox and image
     it was built in, "output": sha256 of what build/ holds, "took_s": seconds}

A build is reused wherever its mark names the folder's content hash and the place asked
(`is_stale`): `arena match` and `arena run` on the author's folder, the league on the
registry's copy (built at validation), a cluster worker (the built folder travels with
the bot: arena.play.cluster). A source that changes changes the hash; a file only touched
does not; a build made locally is not reused in Docker, nor one made in another image.

`settle(build/)`, after the build and before the mark, makes build/ what a bot folder may
hold (arena.botcopy), so that arena's own build output never trips arena's own vetting:
a file with several names (cargo's hard links) becomes a file of its own (its times
kept: cargo's fingerprints read them), everything is made readable by everyone (the bot
runs as another user), and a symbolic link, device, fifo or socket fails the build.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import socket
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.botcopy import content_hash

BUILD_DIR = "build"
BUILT_MARK = ".arena-built"  # in build/: written by arena when a build succeeded


class BuildOutputRefused(Exception):
    """build/ holds what no bot folder may hold (one line naming the path)."""


def place_of(box: Any, image: str | None) -> str:
    """Where a build runs: the sandbox, the image (Docker) and the machine. A build is
    reused only where it was made: a local build may need this machine's libraries."""
    if getattr(box, "name", "local") == "docker":
        return f"docker {image} {platform.machine()}"
    return f"local {platform.machine()} {socket.gethostname()}"


def read_mark(folder: Path) -> dict[str, Any] | None:
    """The mark of folder's build/, or None (none, a link, not arena's JSON)."""
    mark = Path(folder) / BUILD_DIR / BUILT_MARK
    try:
        if mark.is_symlink() or not mark.is_file() or mark.stat().st_size > 4096:
            return None
        found = json.loads(mark.read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("source"), str) else None


def is_stale(folder: Path, where: str | None = None) -> bool:
    """True when build/ holds no build of the folder's sources as they are (its content
    hash), or (given `where`) none made there."""
    mark = read_mark(folder)
    if mark is None or mark["source"] != content_hash(folder):
        return True
    return where is not None and mark.get("where") != where


def output_hash(out: Path) -> str:
    """sha256 of build/'s files (paths, executable bits, bytes), its mark left out."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(out).rglob("*") if p.is_file() and not p.is_symlink()):
        relative = path.relative_to(out).as_posix()
        if relative == BUILT_MARK:
            continue
        digest.update(relative.encode() + b"\0" + (b"x" if path.stat().st_mode & 0o111 else b"-"))
        with path.open("rb") as content:
            while chunk := content.read(1 << 20):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def write_mark(folder: Path, where: str, took_s: float) -> None:
    """Say that build/ holds a build of the folder's sources as they are now, made `where`."""
    out = Path(folder) / BUILD_DIR
    mark = {"source": content_hash(folder), "where": where, "output": output_hash(out), "took_s": round(took_s, 1)}
    staging = out / f"{BUILT_MARK}.new"
    staging.write_text(json.dumps(mark) + "\n")
    os.chmod(staging, 0o644)
    os.replace(staging, out / BUILT_MARK)


def settle(out: Path) -> None:
    """Make build/ what a bot folder may hold (see the module docstring);
    BuildOutputRefused names what cannot be."""
    for root, folders, files in os.walk(out):
        for name in [*folders, *files]:
            path = Path(root) / name
            info = path.lstat()
            shown = f"{BUILD_DIR}/{path.relative_to(out).as_posix()}"
            if stat.S_ISLNK(info.st_mode):
                raise BuildOutputRefused(
                    f"its build made {shown}, a symbolic link: a bot folder holds files and folders only; "
                    "copy the file instead (cp -L)"
                )
            if stat.S_ISDIR(info.st_mode):
                os.chmod(path, stat.S_IMODE(info.st_mode) | 0o555)
            elif stat.S_ISREG(info.st_mode):
                if info.st_nlink > 1:
                    _own_copy(path, info)
                    info = path.lstat()
                mode = stat.S_IMODE(info.st_mode) | 0o444 | (0o111 if info.st_mode & 0o100 else 0)
                os.chmod(path, mode)
            else:
                raise BuildOutputRefused(
                    f"its build made {shown}, which is not a file or folder (a device, fifo or socket): "
                    "a bot folder holds files and folders only; remove it in the build"
                )


def _own_copy(path: Path, info: os.stat_result) -> None:
    """Replace one name of a file with several by a copy of its own (same mode, owner, times)."""
    staging = path.with_name(f".{path.name}.arena-copy")
    source = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        target = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            while chunk := os.read(source, 1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(target, view):]
            if os.geteuid() == 0:
                os.fchown(target, info.st_uid, info.st_gid)
            os.fchmod(target, stat.S_IMODE(info.st_mode))
        finally:
            os.close(target)
    finally:
        os.close(source)
    os.utime(staging, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
    os.replace(staging, path)


@contextmanager
def held(folder: Path) -> Iterator[None]:
    """One build of a folder at a time (two `arena match` of one bot, two worker processes
    of one machine): a lock on the folder, waited for; the second finds the first's build."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
