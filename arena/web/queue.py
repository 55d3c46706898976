"""The validation queue: submissions checked N at a time, in the order they came.

A submission is a row of the door's book (`arena.web.authors`) and a quarantine folder,
`REGISTRY/.door/quarantine/<id>/` (the packed upload and its unpacked folder). Workers
take the oldest queued submission whose bot name no other worker holds (so two uploads of
one name are checked one after the other: two versions, or the second refused because
its version is there with other content; never a mix), and run `arena.web.validate` in a
child process. The registry gets the bot by one rename (done by `arena.registry.submit`); then the
quarantine folder goes.

Nothing lost: a restart (after kill -9, say) finds the submissions it was checking
(state checking, building or smoke match) and checks them again from the start; an
accepted bot already in the registry with the same content is recognised, not doubled.

A full disk stops no worker: the check that met it (a write of the book, a validation
refused or failed while the registry's disk had no room for the bot) says one line and is
made again, from the start, once there is space (`arena.diskfull`); nothing is refused
for it. Any other failure of arena's own refuses that submission with its line, and the
worker goes on to the next.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.botcopy import FolderLimits
from arena.diskfull import SpaceWaiter, say
from arena.registry.submit import abandoned_staging
from arena.sandbox import Limits
from arena.web.authors import DOOR, RUNNING, Book
from arena.web.intake import UNPACKED
from arena.web.validate import MARK

QUARANTINE = "quarantine"
VALIDATION_S = 900.0  # a validation that takes longer is stopped and refused
STOP_S = 10.0  # how long a validation told to stop may take to close its sandbox
ROOM_MB = 1  # room a disk keeps beside a bot's folder for its copy not to count as full


@dataclass
class QueueSettings:
    """How submissions are checked: workers, sandbox, the smoke match's limits."""

    jobs: int = 1
    sandbox: str = "docker"
    runtime: str | None = None  # docker's runc or runsc; None: its default
    limits: Limits = field(default_factory=Limits)
    folder_limits: FolderLimits = field(default_factory=FolderLimits)
    timeout_s: float = VALIDATION_S


def quarantine_dir(registry: Path) -> Path:
    return Path(registry) / DOOR / QUARANTINE


class ValidationQueue:
    """Worker threads that check queued submissions; `wake()` after adding one."""

    def __init__(self, book: Book, settings: QueueSettings, on_accepted: Callable[[str], None] | None = None):
        self.book = book
        self.registry = book.registry
        self.settings = settings
        self.on_accepted = on_accepted
        self._cond = threading.Condition()
        self._holding: set[str] = set()  # bot names being checked
        self._threads: list[threading.Thread] = []
        self._stop = False
        self._stopping = threading.Event()  # set with _stop: ends a wait for space
        self._children: set[subprocess.Popen] = set()
        self.space = SpaceWaiter(self.registry, f"the registry {self.registry}")

    def start(self) -> ValidationQueue:
        """Put back what a stopped server was checking, clear leftovers, start the workers."""
        waiting = self.book.waiting()
        for row in waiting:
            if row.state in RUNNING:
                self.book.set_state(row.id, "queued")
        root = quarantine_dir(self.registry)
        root.mkdir(parents=True, exist_ok=True)
        keep = {row.id for row in waiting}
        for leftover in root.iterdir():
            if leftover.name not in keep:  # an upload that never became a submission, or one finished
                shutil.rmtree(leftover, ignore_errors=True)
        # A validation killed with the server (-9) leaves arena.registry.submit's staging copy: never
        # seen as a bot (a dot name), removed here; a shell `arena submit` into this registry
        # that is running now keeps its copy (it holds a lock on it: arena.registry.submit).
        self._sweep()
        for number in range(self.settings.jobs):
            thread = threading.Thread(target=self._work, name=f"arena-validate-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def _sweep(self) -> None:
        for staging in abandoned_staging(self.registry):
            shutil.rmtree(staging, ignore_errors=True)

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the workers: a validation running is told to stop (SIGTERM: its smoke
        match's processes and containers go with it), killed if it has not within
        STOP_S; its submission is checked again when the queue starts next."""
        with self._cond:
            self._stop = True
            self._stopping.set()
            self._cond.notify_all()
            children = list(self._children)
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(STOP_S)
            except subprocess.TimeoutExpired:
                child.kill()
        for thread in self._threads:
            thread.join(timeout)

    def _next(self):  # noqa: ANN202
        """The oldest queued submission of a name nobody holds (holding it), or None."""
        for row in self.book.waiting():
            if row.state == "queued" and row.name not in self._holding:
                self._holding.add(row.name)
                return row
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                row = None
                while not self._stop and (row := self._next()) is None:
                    self._cond.wait(1.0)
                if self._stop:
                    if row is not None:
                        self._holding.discard(row.name)
                    return
            try:
                self.space.run(lambda: self._check(row), stop=self._stopping)
            except Exception as error:  # noqa: BLE001 - the worker lives; that submission is refused with the line
                if not self._stop:
                    self._failed(row, error)
            finally:
                self._sweep()  # a check killed with an earlier server may end only now
                with self._cond:
                    self._holding.discard(row.name)
                    self._cond.notify_all()

    def _check(self, row) -> None:  # noqa: ANN001
        folder = quarantine_dir(self.registry) / row.id
        # The upload's folder is renamed to its id just after its row is booked: a worker
        # woken in between waits for it (it was refused as lost, now and then, under load).
        for _ in range(200):
            if (folder / UNPACKED).is_dir() or self._stop:
                break
            threading.Event().wait(0.01)
        bot = _bot_folder(folder / UNPACKED)
        if bot is None:
            self.book.set_state(row.id, "refused", reasons=["the upload was lost before it was checked; submit again"])
            shutil.rmtree(folder, ignore_errors=True)
            return
        self.book.set_state(row.id, "checking")
        refusal = self.book.may_use(row.author, False, row.name) if not self._is_organiser(row.author) else None
        if refusal:
            self._refuse(row.id, folder, [refusal])
            return
        outcome = self._run_child(row.id, bot)
        if outcome is None:
            return  # the server stops: the submission is checked again when it starts
        if "accepted" not in outcome and ("full" in outcome or _short_of_room(self.registry, bot)):
            # Not the bot's doing: checked again, from the start, once there is space.
            raise OSError(errno.ENOSPC, outcome.get("full") or "No space left on device")
        if "accepted" in outcome:
            accepted = outcome["accepted"]
            if not self._is_organiser(row.author):
                self.book.claim(row.author, row.name)
            self.book.set_state(row.id, "accepted", content_hash=accepted["content_hash"], note=accepted.get("note", ""))
            shutil.rmtree(folder, ignore_errors=True)
            if self.on_accepted:
                self.on_accepted(f"{row.name}@{row.version}")
            return
        reasons = outcome.get("refused") or [f"arena could not check it: {outcome.get('failed', 'no answer')}"]
        self._refuse(row.id, folder, [without_server_paths(reason, self.registry, bot) for reason in reasons])

    def _failed(self, row, error: Exception) -> None:  # noqa: ANN001
        """arena's own failure while checking a submission: said, and the submission refused
        with the line (the worker goes on to the next)."""
        line = f"arena could not check it ({type(error).__name__}: {error}); submit it again"
        say(f"arena: submission {row.id} ({row.name}): {line}")
        try:
            self._refuse(row.id, quarantine_dir(self.registry) / row.id, [line])
        except Exception as again:  # noqa: BLE001 - the book itself fails: the next start checks it again
            say(f"arena: submission {row.id} stays queued ({type(again).__name__}: {again})")

    def _refuse(self, sub_id: str, folder: Path, reasons: list[str]) -> None:
        self.book.set_state(sub_id, "refused", reasons=reasons, stderr=_stderr_of(reasons))
        shutil.rmtree(folder, ignore_errors=True)

    def _is_organiser(self, author: str) -> bool:
        return any(a.name == author and a.organiser for a in self.book.authors())

    def _run_child(self, sub_id: str, bot: Path) -> dict | None:
        spec = {
            "parent": os.getpid(), "folder": str(bot), "registry": str(self.registry), "sandbox": self.settings.sandbox,
            "runtime": self.settings.runtime, "limits": dataclasses.asdict(self.settings.limits),
            "folder_limits": dataclasses.asdict(self.settings.folder_limits),
        }
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        child = subprocess.Popen(
            [sys.executable, "-m", "arena.web.validate", json.dumps(spec)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, env=env,
        )
        with self._cond:
            self._children.add(child)
        timer = threading.Timer(self.settings.timeout_s, child.kill)
        timer.start()
        outcome: dict = {}
        try:
            for line in child.stdout:
                if not line.startswith(MARK):
                    continue
                message = json.loads(line[len(MARK):])
                if "stage" in message:
                    self.book.set_state(sub_id, message["stage"])
                else:
                    outcome = message
            child.wait()
        finally:
            timer.cancel()
            with self._cond:
                self._children.discard(child)
        if not outcome and self._stop:
            return None
        if not outcome and child.returncode and child.returncode < 0:
            return {"refused": [f"checking it took longer than {self.settings.timeout_s:.0f} s (the limit)"]}
        return outcome


def _short_of_room(registry: Path, bot: Path) -> bool:
    """True when the registry's disk has no room for a copy of the bot's folder (and
    ROOM_MB more): a refusal or failure of its validation was then the disk's."""
    try:
        free = os.statvfs(registry)
        size = sum(path.stat().st_size for path in bot.rglob("*") if path.is_file())
    except OSError:
        return False
    return free.f_bavail * free.f_frsize < size + ROOM_MB * (1 << 20)


def _bot_folder(unpacked: Path) -> Path | None:
    """The bot in an unpacked upload (the folder, or its one top folder)."""
    if not unpacked.is_dir():
        return None
    entries = list(unpacked.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not (unpacked / "bot.toml").exists():
        return entries[0]
    return unpacked


def without_server_paths(reason: str, registry: Path, bot: Path) -> str:
    """A refusal's reason as its author may read it: a path inside the bot (its staging
    copy `REGISTRY/.incoming-*/bot/`, or its quarantine folder) becomes the path in the
    author's own folder, and the registry's place on the server is "the registry"."""
    roots = sorted({str(registry), os.path.realpath(registry)}, key=len, reverse=True)
    folders = [re.escape(root) + r"/\.incoming-[^/\s'\"]*/bot" for root in roots]
    folders += [re.escape(inside) for inside in sorted({str(bot), os.path.realpath(bot)}, key=len, reverse=True)]
    for folder in folders:
        reason = re.sub(folder + "/", "", reason)
        reason = re.sub(folder + r"(?![\w-]|\.\w)", "its folder", reason)
    for root in roots:
        reason = reason.replace(root, "the registry")
    return reason


def _stderr_of(reasons: list[str]) -> str:
    """The end of the bot's stderr, as the refusal's reasons quote it ('| line')."""
    return "\n".join(re.sub(r"^\s*\| ?", "", line) for reason in reasons for line in reason.splitlines()
                     if line.lstrip().startswith("|"))
