"""A uid of its own for each local bot process (`ARENA_LOCAL_UIDS`), as contest judges
give each box its own.

Every local bot is user nobody when arena runs as root, and per-user kernel counters
(inotify instances, pipe buffer pages, pending signals, message queue bytes) are then
common to every bot alive at once: one process could signal to another what it saw,
e.g. a bot's per-slot process of one seat rotation to its twin of the other. With
`ARENA_LOCAL_UIDS=FIRST-LAST` (uids that belong to nobody on the machine: no file, no
account), each bot process takes the first uid of the range no other running bot holds,
on this machine: a lease is an exclusive `flock` on `/run/arena-uids/UID.lock`, held by
the arena process that started the bot and given back when the bot is closed (after every
process of it is killed), or by the kernel when arena ends. A uid with an account in the
password database, or in a range of /etc/subuid or /etc/subgid, is never taken. Unset:
every bot is nobody, as before (no range is safe on every machine, so none is assumed).
"""

from __future__ import annotations

import fcntl
import os
import pwd
from pathlib import Path

from arena.sandbox.base import SandboxError

VARIABLE = "ARENA_LOCAL_UIDS"
LEASES = Path("/run/arena-uids")
MAX_UID = 4_294_967_294  # (uid_t)-1 means "no change"


def configured_range(text: str | None = None) -> range | None:
    """The range `ARENA_LOCAL_UIDS` names (None: unset); SandboxError saying what is wrong."""
    text = os.environ.get(VARIABLE, "") if text is None else text
    if not text.strip():
        return None
    first, dash, last = text.strip().partition("-")
    try:
        low, high = int(first), int(last)
    except ValueError:
        low = high = -1
    if not dash or not 1000 <= low <= high <= MAX_UID or high - low >= 1 << 20:
        raise SandboxError(
            f"{VARIABLE}={text!r} is not a range of uids FIRST-LAST (1000 <= FIRST <= LAST <= "
            f"{MAX_UID}, at most {1 << 20} uids), e.g. {VARIABLE}=200000-200255"
        )
    return range(low, high + 1)


class UidLease:
    """One uid of the range, held for one bot process until `release()`."""

    def __init__(self, uids: range):
        LEASES.mkdir(mode=0o700, exist_ok=True)
        for uid in uids:
            if _has_account(uid):
                continue
            fd = os.open(LEASES / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise SandboxError(
            f"every uid of {VARIABLE} ({uids.start}-{uids.stop - 1}) is held by a running bot: "
            "widen the range (it needs one uid per bot process alive at once)"
        )

    def release(self) -> None:
        """Give the uid back (its processes are gone)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the file drops the lock
            self._fd = None


def _has_account(uid: int) -> bool:
    """True if `uid` is someone's: an account, or inside a range of /etc/subuid (a user's
    containers own files with those uids)."""
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        pass
    for table in ("/etc/subuid", "/etc/subgid"):
        try:
            lines = Path(table).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split(":")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                if int(parts[1]) <= uid < int(parts[1]) + int(parts[2]):
                    return True
    return False
