"""A warm slot's container: made once with arena's launcher as its main process, a fresh
bot process started in it for every game, and reset between two (see warm.py for the
whole design, and launcher.c for what the launcher does in the container).
"""

from __future__ import annotations

import errno
import os
import secrets
import select
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docker.errors

from arena.faults import SandboxError
from arena.sandbox.base import BotSpec, Limits
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.common import children_of
from arena.sandbox.copies import FolderCopy
from arena.sandbox.uids import UidLease
from arena.sandbox.docker.engine import (
    ENGINE_ERRORS,
    EXIT_WAIT_S,
    IO_MOUNT,
    IO_PREFIX,
    USER,
    _is_gone,
    _process_start_time,
    remove_quietly,
    _slug,
)
from arena.sandbox.docker.launcher import LauncherUnavailable, launcher_binary
from arena.sandbox.docker.transport import _remove_io_dir
from arena.sandbox.docker.warm_host import (
    _container_cgroup,
    _empty_folder,
    _pidfd,
    _renew,
    _tmpfs_mounts,
)
from arena.sandbox.docker.warm_process import WarmBotProcess
from arena.sandbox.stdio import milliseconds

if TYPE_CHECKING:
    from arena.sandbox.docker import DockerSandbox

LAUNCHER_USER = "0:0"  # the launcher's: it must become the bot's uid (with only the caps below)
# To become nobody and empty the bounding set; to make each game's namespaces and bring up
# their loopback. The bot's process has none of them (nor the filter's extra calls).
LAUNCHER_CAPS = ["SETUID", "SETGID", "SETPCAP", "SYS_ADMIN", "NET_ADMIN"]
LAUNCHER_NAME = "arena-launcher"  # the binary's name in the slot's folder (/arena-io)
SLOT_LABEL = "arena.slot"
LAUNCH_PIPE = "launch"  # arena writes "SERIAL TOKEN UID" here: the launcher starts a process
STATUS_PIPE = "status"  # the launcher says here what it started ("run N PID") and how it ended
WIPED = ("tmp", "dev/shm", "dev/mqueue")  # the container's writable places
KILL_WITHIN_S = 2.0  # a reset that cannot empty the container in this time replaces it
START_WITHIN_S = 5.0  # from `start` of a container to its launcher's "ready"


class _Broken(Exception):
    """The container cannot be reset: it is replaced (never the bot's fault)."""


def _make_slot_folder() -> Path:
    """The slot's folder of pipes (mounted read-only at /arena-io), with arena's launcher."""
    folder = Path(tempfile.mkdtemp(prefix=IO_PREFIX))
    folder.chmod(0o711)  # the container's users reach their pipes; nobody may list the folder
    try:
        binary = launcher_binary()
    except LauncherUnavailable as why:
        _remove_io_dir(folder)
        raise _Unsupported(str(why)) from None
    try:
        os.link(binary, folder / LAUNCHER_NAME)  # the same file system: no copy
    except OSError:
        shutil.copy2(binary, folder / LAUNCHER_NAME)
    return folder


class WarmContainer:
    """One slot's container: made once, reset between the processes it runs."""

    def __init__(
        self,
        sandbox: DockerSandbox,
        bot: BotSpec,
        limits: Limits,
        image: str,
        slot: str,
        released: Callable[[WarmBotProcess], None] | None = None,
    ):
        self.sandbox, self.bot, self.limits, self.image, self.slot = sandbox, bot, limits, image, slot
        self.released = released or (lambda process: None)  # called when a process closes
        self.folder = _make_slot_folder()
        self.copy: FolderCopy | None = None  # the bot folder's private copy, at /bot
        self.lease: UidLease | None = None  # the bots' uid in this container (else nobody)
        self.container: Any = None
        self.keepers: dict[int, str] = {}  # host pid -> start time: the init and the launcher
        self.cgroup: BotCgroup | None = None
        self.cpuacct: Path | None = None
        self.mounts: list[tuple[bytes, int, bytes]] = []
        self.serial = 0
        self.removed = False
        self._launch_fd: int | None = None
        self._status_fd: int | None = None
        self._status_lock = threading.Lock()
        self._status_text = ""
        self._ready = False
        self._runs: dict[int, int] = {}  # serial -> pid in the container's namespace
        self._ends: dict[int, int] = {}  # serial -> exit status
        try:
            self._create()
        except BaseException:
            self.remove(quietly=True)
            raise

    @property
    def id(self) -> str:
        """The container's id."""
        return self.container.id

    @property
    def name(self) -> str:
        """The container's name."""
        return self.container.name

    def _create(self) -> None:
        """Make and start the container, its keepers running: the init (the engine's
        docker-init, the host's static binary) and its child, arena's launcher."""
        # A private copy of the bot's folder, made afresh by every reset (arena.sandbox.copies):
        # no game reads the page cache of another's (a Dockerfile's image holds the folder).
        if not self.bot.dockerfile:
            self.copy = FolderCopy(self.bot.folder)
        # Its bots are a uid of their own, which no process of this host is (arena.sandbox.uids).
        self.lease = self.sandbox.lease_uid()
        source = self.copy.path if self.copy else None
        settings = self.sandbox.container_settings(self.bot, self.limits, self.image, self.folder, source)
        settings["name"] = f"arena-{_slug(self.bot.name)}-warm-{uuid.uuid4().hex[:12]}"
        facts = self.sandbox._image_facts(self.image)
        self.bot_command = facts["entrypoint"] + (list(self.bot.command) or facts["cmd"])
        settings["user"] = LAUNCHER_USER
        settings["cap_add"] = list(LAUNCHER_CAPS)
        # Nothing of the image runs but the bot's own command, as nobody: the launcher is
        # arena's static binary, and its argument the bot's command (the image's entrypoint
        # included), which it execs in each process.
        settings["entrypoint"] = [f"{IO_MOUNT}/{LAUNCHER_NAME}"]
        settings["command"] = self.bot_command
        self._open_launcher_pipes()
        settings["labels"][SLOT_LABEL] = self.slot
        self.workdir = settings.get("working_dir")
        try:
            self.container = self.sandbox.client.containers.create(**settings)
            self.container.start()
            self.container.reload()
        except ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine could not start a warm container for {self.bot.name}: {error}"
            ) from None
        self._await_launcher()
        init_pid = self.container.attrs["State"].get("Pid") or 0
        found = _container_cgroup(init_pid, self.container.id) if init_pid else None
        if found is None:
            raise _Unsupported(
                "the engine's containers are not visible in this host's /proc and cgroups"
            )
        self.cgroup, self.cpuacct = found
        # The init (docker-init) started the launcher, which said it is ready.
        deadline = time.monotonic() + START_WITHIN_S
        while True:
            children = children_of(init_pid)
            if children:
                break
            if time.monotonic() > deadline:
                raise SandboxError(f"the warm container {self.name} did not come up")
            time.sleep(0.002)
        for pid in (init_pid, *children):
            started = _process_start_time(pid)
            if started is None:
                raise SandboxError(f"the warm container {self.name} ended as it started")
            self.keepers[pid] = started
            # Under memory pressure the kernel should pick the bot, never the keepers. Lowering
            # needs CAP_SYS_RESOURCE; without it they keep the bot's 1000, and the kernel still
            # picks the largest process first: a keeper (a few hundred KiB) only once no
            # process of the bot is left, and that kill is counted as the bot's anyway.
            try:
                Path(f"/proc/{pid}/oom_score_adj").write_text("-1000")
            except PermissionError:
                pass
        self.mounts = _tmpfs_mounts(init_pid)
        try:
            _renew(init_pid, self.mounts)  # the first process starts as every later one will
        except OSError as error:
            raise _Unsupported(f"cannot renew the container's /tmp and pid counter: {error}") from None

    # -- the launcher's pipes ---------------------------------------------------------------------
    def _open_launcher_pipes(self) -> None:
        """The launch and status pipes (root's, 0600: the bot can open neither), with arena's
        ends open before the launcher starts, so that its opens never block."""
        for name in (LAUNCH_PIPE, STATUS_PIPE):
            os.mkfifo(self.folder / name, 0o600)
        self._launch_fd = os.open(self.folder / LAUNCH_PIPE, os.O_RDWR | os.O_NONBLOCK)
        self._status_fd = os.open(self.folder / STATUS_PIPE, os.O_RDONLY | os.O_NONBLOCK)

    def _close_launcher_pipes(self) -> None:
        for name in ("_launch_fd", "_status_fd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
        for name in (LAUNCH_PIPE, STATUS_PIPE):
            try:
                (self.folder / name).unlink()
            except FileNotFoundError:
                pass

    def _await_launcher(self) -> None:
        """Wait for the launcher's "ready"."""
        if not self._status_until(lambda: self._ready, START_WITHIN_S):
            raise SandboxError(f"the warm container {self.name} did not come up (its launcher)")

    def _status_until(self, done: Callable[[], bool], wait_s: float) -> bool:
        """Read the launcher's status lines until `done()` or `wait_s` passed; done()."""
        deadline = time.monotonic() + wait_s
        poller = select.poll()
        poller.register(self._status_fd, select.POLLIN)
        with self._status_lock:
            while not done():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                if not poller.poll(milliseconds(min(remaining, 0.05))):
                    continue
                try:
                    chunk = os.read(self._status_fd, 4096)
                except BlockingIOError:
                    continue
                if not chunk:  # no writer (the launcher ended, or has not opened it yet)
                    time.sleep(0.01)
                    continue
                self._status_text += chunk.decode("ascii", "replace")
                *lines, self._status_text = self._status_text.split("\n")
                for line in lines:
                    match line.split():
                        case ["ready"]:
                            self._ready = True
                        case ["unsupported", number, _]:
                            why = os.strerror(int(number)) if int(number) else "it failed"
                            raise _Unsupported(
                                "arena's launcher cannot make a game's network and IPC "
                                f"namespaces in this engine's containers ({why})"
                            )
                        case ["run", serial, pid]:
                            self._runs[int(serial)] = int(pid)
                        case ["fail", serial, number]:  # the namespaces or the fork failed
                            self._runs[int(serial)] = -max(1, int(number))
                        case ["end", serial, status]:
                            self._ends[int(serial)] = int(status)
            return True

    def launched_status(self, serial: int, wait_s: float) -> int | None:
        """The exit status of the launcher's process `serial` (as the shell says it: 128+N
        for signal N), waiting at most `wait_s`; None if not said by then."""
        self._status_until(lambda: serial in self._ends, wait_s)
        return self._ends.pop(serial, None)

    def _host_pid(self, namespace_pid: int) -> int:
        """The host pid of the container's process `namespace_pid` (0 if it is gone)."""
        assert self.cgroup is not None
        for pid in self.cgroup.pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("NSpid:"):
                    if int(line.split()[-1]) == namespace_pid:
                        return pid
                    break
        return 0

    def healthy(self) -> bool:
        """Its init and launcher still run (else it was killed from outside)."""
        return bool(self.keepers) and all(
            _process_start_time(pid) == started for pid, started in self.keepers.items()
        )

    def oom_kills(self) -> int:
        """Out-of-memory kills in the container so far (the kernel's count)."""
        return self.cgroup.oom_kills() if self.cgroup else 0

    # -- a process ------------------------------------------------------------------------------
    def run(self) -> WarmBotProcess:
        """Start a fresh bot process in the container, as nobody, through the launcher
        (see the module's docstring): no engine call at all."""
        self.serial += 1
        serial = self.serial
        # Its pipes' names are random: a process learns nothing from them (how many came
        # before it, say), and they are gone with it.
        token = secrets.token_hex(8)
        names = {part: f"{token}.{part}" for part in ("in", "out", "err")}
        uid, gid = (int(part) for part in USER.split(":"))
        if self.lease is not None:
            uid = gid = self.lease.uid
        for name in names.values():
            os.mkfifo(self.folder / name, 0o600)
            os.chown(self.folder / name, uid, gid)
        # Opened before the bot runs, so that its own opens never block (see DockerBotProcess).
        fds = {
            "in": os.open(self.folder / names["in"], os.O_RDWR | os.O_NONBLOCK),
            "out": os.open(self.folder / names["out"], os.O_RDONLY | os.O_NONBLOCK),
            "err": os.open(self.folder / names["err"], os.O_RDONLY | os.O_NONBLOCK),
        }
        oom_before = self.oom_kills()
        try:
            os.write(self._launch_fd, f"{serial} {token} {uid}\n".encode())
            started = self._status_until(lambda: serial in self._runs, START_WITHIN_S)
            failure = None if started else "did not start it"
        except OSError as error:
            failure = f"could not be told: {error}"
        if failure is None and self._runs[serial] < 0:
            failure = f"failed: {os.strerror(-self._runs.pop(serial))}"
        if failure is not None:
            for fd in fds.values():
                os.close(fd)
            raise _ExecFailed(f"the launcher of {self.name} {failure} ({self.bot.name})", names)
        pid = self._host_pid(self._runs.pop(serial))
        for older in [n for n in self._ends if n < serial]:  # the ends of processes arena killed
            del self._ends[older]
        pidfd = _pidfd(pid, self.container.id) if pid else None
        if pidfd is None and serial not in self._ends:
            self._status_until(lambda: serial in self._ends, EXIT_WAIT_S)  # it ended at once
        return WarmBotProcess(self, f"launch-{serial}", pid, pidfd, fds, oom_before, names)

    # -- between processes ---------------------------------------------------------------------
    def reset(self, names: dict[str, str] | None = None) -> None:
        """Leave nothing of the last process behind (see the module's docstring); _Broken if
        that cannot be done, and the container must go."""
        if not self.healthy():
            raise _Broken("its init or launcher is gone (killed from outside)")
        init_pid = next(iter(self.keepers))
        try:
            self._kill_all_but_keepers()
            _renew(init_pid, self.mounts)
            for place in WIPED:  # empty already, unless a mount could not be renewed
                _empty_folder(f"/proc/{init_pid}/root/{place}")
            if self.copy is not None:
                self.copy.refresh()  # the next game reads a copy no game has read
        except (OSError, RecursionError, SandboxError) as error:
            raise _Broken(f"could not reset it: {error}") from None
        self._reset_counters()
        if names:
            for name in names.values():
                try:
                    (self.folder / name).unlink()
                except FileNotFoundError:
                    pass
        if not self.healthy():
            raise _Broken("its init or launcher ended during the reset")

    def _kill_all_but_keepers(self) -> None:
        assert self.cgroup is not None
        deadline = time.monotonic() + KILL_WITHIN_S
        while True:
            alive = self.cgroup.pids() - set(self.keepers)
            if not alive:
                return
            if time.monotonic() > deadline:
                raise OSError(errno.EBUSY, f"{len(alive)} processes would not die")
            for pid in alive:
                fd = _pidfd(pid, self.container.id)
                if fd is None:
                    continue
                try:
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                finally:
                    os.close(fd)
            time.sleep(0.001)

    def _reset_counters(self) -> None:
        """Zero the cgroup's resettable counts (peak memory, limit hits, CPU used), which
        the bot can read; OOM detection counts kills from each process's start anyway."""
        files = []
        if self.cgroup and self.cgroup.memory_dir and not self.cgroup.v2:
            files += [self.cgroup.memory_dir / "memory.max_usage_in_bytes",
                      self.cgroup.memory_dir / "memory.failcnt"]
        if self.cpuacct is not None:
            files.append(self.cpuacct / "cpuacct.usage")
        for path in files:
            try:
                path.write_text("0")
            except OSError:
                pass

    def _kill_init(self) -> None:
        """SIGKILL the container's init from here (it takes everything with it), so that the
        engine's removal finds a stopped container: quicker than its own kill."""
        if not self.keepers:
            return
        init_pid = next(iter(self.keepers))
        fd = _pidfd(init_pid, self.container.id)
        if fd is None:
            return
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            poller.poll(500)  # ended: the engine only has to clean up
        except ProcessLookupError:
            pass
        finally:
            os.close(fd)

    def remove(self, quietly: bool = False) -> None:
        """Remove the container and its folder of pipes (idempotent)."""
        if self.removed:
            return
        self.removed = True
        try:
            if self.container is not None:
                self._kill_init()
                if quietly:
                    remove_quietly(self.container)
                else:
                    try:
                        self.container.remove(force=True)
                    except docker.errors.APIError as error:
                        if not _is_gone(error):
                            raise SandboxError(
                                f"the Docker engine failed while removing {self.name}: {error}"
                            ) from None
                    except ENGINE_ERRORS as error:
                        raise SandboxError(
                            f"the Docker engine failed while removing {self.name}: {error}"
                        ) from None
        finally:
            self._close_launcher_pipes()
            _remove_io_dir(self.folder)
            if self.copy is not None:
                self.copy.remove()
            if self.lease is not None:
                self.lease.release()  # the container and every process of the uid are gone


class _Unsupported(SandboxError):
    """Warm slots cannot work with this engine: slots start cold."""


class _ExecFailed(SandboxError):
    """The engine failed to start a process in a warm container (maybe half way)."""

    def __init__(self, message: str, names: dict[str, str]):
        super().__init__(message)
        self.names = names
