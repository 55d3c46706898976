"""A uid of its own for each bot process (local) and each container (Docker), as contest
judges give each box its own.

When every bot is user nobody, per-user kernel counters (inotify instances, pipe buffer
pages, pending signals, message queue bytes) are common to every bot alive at once: one
process could signal to another what it saw, e.g. a bot's per-slot process of one seat
rotation to its twin of the other. Worse, a container's bot without a user namespace is
the host's uid 65534, so any host process of nobody (a daemon, an old build's leftover)
may ptrace it or read its memory through /proc/PID/mem. So, as root, each local bot
process (with namespaces), each local build, each Docker container (whose engine does not
remap users) and each Docker build takes the first uid of a range that no other running
bot holds, on this machine: a lease is an exclusive `flock` on `/run/arena-uids/UID.lock`,
held by the arena process that started the bot and given back when the bot is closed
(after every process of it is killed), or by the kernel when arena ends. A uid with an
account in the password database, or in a range of /etc/subuid or /etc/subgid, is never
taken; no host process runs as one (nothing but arena's bots: no account, no file).

The range: `ARENA_LOCAL_UIDS=FIRST-LAST`, else DEFAULT (65,536 uids from 1879048192,
0x70000000: above systemd's container range and below its foreign and dynamic ranges,
where no distribution makes accounts) as root where /run can hold the leases;
`ARENA_LOCAL_UIDS=nobody` makes every bot nobody, as before.
"""

from __future__ import annotations

import fcntl
import os
import pwd
from pathlib import Path

from arena.faults import SandboxError

VARIABLE = "ARENA_LOCAL_UIDS"
LEASES = Path("/run/arena-uids")
MAX_UID = 4_294_967_294  # (uid_t)-1 means "no change"


DEFAULT = range(1_879_048_192, 1_879_048_192 + 65_536)
NOBODY_WORD = "nobody"


def configured_range(text: str | None = None) -> range | None:
    """The range of uids bots take (`ARENA_LOCAL_UIDS`, else DEFAULT where leases can be
    held: as root with /run); None: every bot is nobody. SandboxError saying what is wrong."""
    text = os.environ.get(VARIABLE, "") if text is None else text
    if text.strip() == NOBODY_WORD:
        return None
    if not text.strip():
        return DEFAULT if _can_lease() else None
    first, dash, last = text.strip().partition("-")
    try:
        low, high = int(first), int(last)
    except ValueError:
        low = high = -1
    if not dash or not 1000 <= low <= high <= MAX_UID or high - low >= 1 << 20:
        raise SandboxError(
            f"{VARIABLE}={text!r} is not a range of uids FIRST-LAST (1000 <= FIRST <= LAST <= "
            f"{MAX_UID}, at most {1 << 20} uids), e.g. {VARIABLE}=200000-200255, or "
            f"{VARIABLE}={NOBODY_WORD}"
        )
    return range(low, high + 1)


def _can_lease() -> bool:
    """True where leases can be held: as root, with /run (or the folder of leases) writable."""
    if os.geteuid() != 0:
        return False
    return LEASES.is_dir() or os.access(LEASES.parent, os.W_OK)


def lease_range() -> range | None:
    """The configured range where a uid of it can be given to a bot (root), else None."""
    return configured_range() if os.geteuid() == 0 else None


class UidLease:
    """One uid of the range, held for one bot process (or container) until `release()`."""

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
