"""One writer per folder, and one site render at a time.

`one_writer(dir, command)` is held by whatever plays games into a folder (`arena run`,
`arena league`) for as long as it runs: a second one on the same folder is refused at
once with `FolderBusy`, a line that says who holds it (command, pid, host, since), instead
of two writers that each believe they own the schedule. `rendering(dir)` is held while a
site is rendered from the folder (the league's renderer, `arena report`, the end of
`arena run`): a second render waits for the first, so that neither reads the site's state
while the other rebuilds it.

Both are `flock` locks on a file of the folder (`arena.lock`, `.site.lock`), never
deleted: the kernel lets go of a lock when its holder ends, whatever the way (kill -9
too), so there is nothing stale to clean up. A lock is held by an open file, not by a
process, so a second take in the same process (two leagues in two threads) is refused
too. Child processes never hold one: the file is opened close-on-exec, and the worker
processes are spawned, not forked.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from arena.store.db import StoreError

LOCK_FILE = "arena.lock"
RENDER_LOCK_FILE = ".site.lock"


class FolderBusy(StoreError):
    """Another arena writes to the folder (the message says which, and what to do)."""


def check_folder(out_dir: str | Path) -> None:
    """StoreError (one line) when the output folder cannot be one: it, or a folder it
    would be made in, is a file."""
    out_dir = Path(out_dir)
    for place in (out_dir, *out_dir.parents):
        if place.is_dir():
            return
        if place.exists() or place.is_symlink():
            what = "is a file" if place == out_dir else f"would be made in {place}, a file"
            raise StoreError(f"the output {out_dir} {what}, not a folder; name a folder (made if missing)")


def _open(path: Path) -> int:
    check_folder(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


@contextmanager
def one_writer(out_dir: str | Path, command: str) -> Iterator[None]:
    """Hold the folder's writer lock while the block runs; FolderBusy if another holds it."""
    out_dir = Path(out_dir)
    path = out_dir / LOCK_FILE
    descriptor = _open(path)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusy(_busy(out_dir, path)) from None
        holder = {
            "command": command, "pid": os.getpid(), "host": socket.gethostname(),
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        try:
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, (json.dumps(holder) + "\n").encode(), 0)
        except OSError:
            pass  # a full disk: the lock holds all the same; a second writer is told less
        yield
    finally:
        os.close(descriptor)  # lets go of the lock


def check_free(out_dir: str | Path) -> None:
    """FolderBusy if another arena holds the folder's writer lock now (said before
    anything is printed or started; the writer takes the lock itself)."""
    check_folder(out_dir)
    path = Path(out_dir) / LOCK_FILE
    if not path.is_file():
        return
    with one_writer(out_dir, "check"):
        pass


def _busy(out_dir: Path, path: Path) -> str:
    """Who holds the lock, as its holder wrote it (read again for a moment: a holder
    writes it just after it takes the lock)."""
    holder: dict = {}
    for _ in range(20):
        try:
            holder = json.loads(path.read_text() or "{}")
            break
        except (OSError, ValueError):
            time.sleep(0.05)
    if not holder.get("pid"):
        return f"{out_dir} is in use by another arena; stop that one first"
    return (
        f"{out_dir} is in use by {holder.get('command', 'arena')} (pid {holder['pid']} on "
        f"{holder.get('host', '?')} since {_when(holder.get('since', ''))}); stop that one first"
    )


def _when(since: str) -> str:
    """12:04 UTC today, else 2026-12-04 12:04 UTC."""
    try:
        moment = datetime.fromisoformat(since)
    except ValueError:
        return "?"
    today = moment.date() == datetime.now(UTC).date()
    return moment.strftime("%H:%M UTC" if today else "%Y-%m-%d %H:%M UTC")


@contextmanager
def rendering(out_dir: str | Path) -> Iterator[None]:
    """Hold the folder's site-render lock while the block runs (waits for another render)."""
    descriptor = _open(Path(out_dir) / RENDER_LOCK_FILE)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
