"""A full disk: how arena tells one, and how what runs for long waits for space.

A full disk is not a fault of arena's nor of a bot's, and it passes: a long-running part
(`arena run`, `arena league`, the validation queue of `arena serve --submissions`) says
one line and waits, looking again every `WAIT_S`, and goes on once there is space
(`wait_for_space`); a short command (`arena report`) stops with one line (`FULL_LINE`);
an upload is told so (HTTP 507). Nothing is lost meanwhile: a SQLite transaction that
could not be written is rolled back whole and written again once there is space.

A leaf module: the standard library only.
"""

from __future__ import annotations

import errno
import functools
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

WAIT_S = 2.0  # how often a part waiting for space looks again
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
FULL_LINE = "the disk is full; free some space and try again"
FULL_UPLOAD = "the server's disk is full; submit again later"  # HTTP 507

T = TypeVar("T")


def is_full(error: BaseException, where: str | os.PathLike | None = None) -> bool:
    """True when `error` says a disk (or a quota) is full: an OSError of ENOSPC or EDQUOT,
    SQLite's SQLITE_FULL ("database or disk is full") or its failure to grow the WAL's
    shared memory file (SQLITE_IOERR_SHMSIZE: "disk I/O error"); any other I/O error of
    SQLite's when the disk of `where` has no room left."""
    if isinstance(error, OSError) and error.errno in FULL_ERRNOS:
        return True
    name = getattr(error, "sqlite_errorname", "") if isinstance(error, sqlite3.OperationalError) else ""
    if name in ("SQLITE_FULL", "SQLITE_IOERR_SHMSIZE"):
        return True
    if name.startswith("SQLITE_IOERR") and where is not None:
        try:
            return os.statvfs(where).f_bavail == 0
        except OSError:
            return False
    return False


def say(line: str) -> None:
    """One line on stderr (the commands' own console is not imported down here)."""
    print(line, file=sys.stderr, flush=True)


class SpaceWaiter:
    """Runs an attempt again until it is not stopped by a full disk: one line when the disk
    fills, one when there is space again (not a line per try)."""

    def __init__(self, folder: str | os.PathLike, name: str | None = None, say: Callable[[str], None] = say):
        self.folder = str(folder)  # the folder whose disk it is
        self.where = name or self.folder  # as the lines name it
        self.say = say
        # Set (Ctrl-C: a runner's stop), a full disk is raised at once instead of waited out.
        self.stop: threading.Event | None = None
        self._lock = threading.Lock()
        self.waiting = False

    def run(self, attempt: Callable[[], T], stop: threading.Event | None = None) -> T:
        """`attempt()`, tried again every WAIT_S while a full disk stops it (Ctrl-C, or
        `stop` set, ends the wait: the error is raised)."""
        stop = stop or self.stop
        while True:
            try:
                result = attempt()
            except Exception as error:
                if not is_full(error, self.folder if os.path.isdir(self.folder) else None):
                    raise
                if stop is not None and stop.is_set():
                    raise
                self._full(error)
                if stop is not None:
                    if stop.wait(WAIT_S):
                        raise
                else:
                    time.sleep(WAIT_S)
                continue
            self._space()
            return result

    def _full(self, error: BaseException) -> None:
        with self._lock:
            if self.waiting:
                return
            self.waiting = True
        detail = error.strerror if isinstance(error, OSError) else str(error)
        self.say(f"arena: the disk of {self.where} is full ({detail}); waiting for space (Ctrl-C stops)")

    def _space(self) -> None:
        with self._lock:
            if not self.waiting:
                return
            self.waiting = False
        self.say(f"arena: {self.where} has space again; going on")


def waits_for_space(method: Callable[..., T]) -> Callable[..., T]:
    """A store's write (a method of an object with a `space` SpaceWaiter): its transaction
    tried again, whole, while a full disk stops it. Iterators among its arguments are read
    into lists first, so that a second try writes what the first would have."""

    @functools.wraps(method)
    def written(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        args = tuple(list(arg) if isinstance(arg, Iterator) else arg for arg in args)
        kwargs = {key: list(arg) if isinstance(arg, Iterator) else arg for key, arg in kwargs.items()}
        return self.space.run(lambda: method(self, *args, **kwargs))

    return written
