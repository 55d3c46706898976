"""What user nobody (uid and gid 65534) may reach in a bot's folder.

Both sandboxes run bots as nobody when they can: the Docker sandbox always (its
containers' user), the local sandbox when arena runs as root. These checks read the
mode bits the kernel would apply to nobody (owner bits when nobody owns the path, group
bits when its group is nogroup, else the bits for others); ACLs are not read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from arena.faults import SandboxError

NOBODY = 65534  # uid and gid: nobody and nogroup on Debian, Ubuntu and python:*-slim


def nobody_may(mode: int, owner: int, group: int, want: int) -> bool:
    """True if nobody gets every permission in `want` (a mask of 4 read, 2 write, 1 search)."""
    if owner == NOBODY:
        return (mode >> 6) & want == want
    if group == NOBODY:
        return (mode >> 3) & want == want
    return mode & want == want


def closed_ancestor(folder: Path) -> Path | None:
    """The highest folder above `folder` that nobody may not enter (search), or None.

    Nobody cannot reach a folder under `/root` (mode 700): the local sandbox covers such an
    ancestor and rebuilds the way to the bot's folder inside the cover.
    """
    folder = Path(os.path.abspath(folder))
    for ancestor in reversed(folder.parents):
        try:
            info = ancestor.stat()
        except OSError:
            return ancestor
        if not nobody_may(info.st_mode, info.st_uid, info.st_gid, 1):
            return ancestor
    return None


def unreadable_by_nobody(folder: Path) -> Path | None:
    """The first path in `folder` (itself included) that nobody could not read, or None.

    Folders need read and search, files read; a dangling link has nothing to read either
    way and is skipped.
    """
    for path in [folder, *folder.rglob("*")]:
        try:
            info = path.stat()
        except OSError:
            continue
        want = 5 if stat.S_ISDIR(info.st_mode) else 4
        if not nobody_may(info.st_mode, info.st_uid, info.st_gid, want):
            return path
    return None


def check_readable_by_nobody(folder: Path, why: str) -> None:
    """SandboxError naming the first path of `folder` nobody cannot read; `why` says why it must.

    `why` completes "... is not readable by user nobody (uid 65534), ...", e.g. "who
    runs the bots when arena runs as root".
    """
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise SandboxError(f"the bot folder {folder} does not exist")
    blocked = unreadable_by_nobody(folder)
    if blocked is not None:
        raise SandboxError(
            f"{blocked} is not readable by user nobody (uid {NOBODY}), {why}; "
            f"make the bot folder readable by everyone: chmod -R a+rX {folder}"
        )
