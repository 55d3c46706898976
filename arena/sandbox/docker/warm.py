"""Warm slots of the docker sandbox: one container per slot, kept for the run, and a fresh
bot process in it for every `start`, the container reset in between.

How a process starts: through the container's own launcher (below), or by `docker exec`
in an image without `setpriv` (util-linux) and in every image built from a bot's
Dockerfile: the launcher runs the image's /bin/sh and setpriv as root, so the image must
be one no bot made (the sandbox's base image, or the organiser's). Both give the bot's
process what a cold container's bot has, read from inside by
tests/test_sandbox_docker_warm.py for both: uid, gid and group nobody (65534), every
capability set empty (the bounding set too), no-new-privileges, the engine's seccomp
filter, the container's rlimits, cgroup (memory, CPU, pids), read-only root, no network,
the same environment and working folder.

The launcher is the container's main process, a shell run as root (uid 0, no user
namespace) with only the capabilities SETUID, SETGID and SETPCAP, under the container's
no-new-privileges and seccomp filter like everything in it. arena writes a serial number N
to its launch pipe; the launcher forks a monitor (root too) that runs
`setpriv --reuid/--regid/--groups 65534 --inh-caps=-all --bounding-set=-all` into a
shell that opens the process's three pipes (in-N, out-N, err-N) and execs the bot, says
"run N PID" on its status pipe, waits for it and says "end N STATUS". The two pipes are
root's (0600) and closed in the bot's process; the bot, of another uid and without
capabilities, can neither open them, nor signal, ptrace or read the launcher or its
monitor (the tests try). So a start costs a fork and three execs (about 10 ms) and no
engine call: the engine's CPU per game, most of a warm game's cost with `docker exec`
(about 0.17 CPU-s for four seats), is gone. Why not a launcher of the bot's own uid: a
bot may ptrace or signal a process of its own uid, so it could plant itself in the
launcher and reach its next game.

In docker exec's design the engine builds the exec'd process from the container's own
process spec (runc applies the container's seccomp filter, capability sets,
no-new-privileges, rlimits, cgroups and namespaces), with the user overridden to nobody.

The container's own processes, its two keepers (its init, docker-init, and the launcher,
or with docker exec a shell blocked forever opening a pipe), run as another uid (root with
the launcher; else 65533, `KEEPER_USER`), which a bot of uid 65534 without capabilities
can neither signal, nor ptrace, nor read; their oom_score_adj is -1000 where the host
allows it, so an out-of-memory kill picks the bot. Nothing else of the container is
long-lived.

Between two processes of a slot the host resets the container (`WarmContainer.reset`,
on a worker thread, while other games play; `start` waits only if it is not done yet):
1. every process in the container's cgroup but the two keepers (a monitor too) gets
   SIGKILL (through a pidfd, so a reused pid is never hit), until none is left;
2. SysV shared memory, semaphores and message queues are removed, /tmp and /dev/shm are
   replaced by fresh tmpfs mounts (same options; not even their inode numbers tell how
   many files were made), and the pid namespace's counter is set back, so that the next
   process gets the same pid as the first did (`_renew`: a short-lived thread enters the
   container's namespaces with setns);
3. /dev/mqueue is emptied, through /proc/PID/root of the init, with descriptor-relative
   removal that never follows a link;
4. the memory accounting is re-baselined: each process counts the cgroup's oom_kill
   events from its own start, so an out-of-memory kill is charged to the process (and
   game) it happened in; peak memory, limit hits and the CPU count are zeroed.
The environment, open files, sockets, ptys and locks of a process end with it, and the
container keeps no TIME_WAIT connections (whose ports a successor could read). If any
step fails, or the keepers are gone (the container was killed from outside), the
container is removed and a new one made for the slot, off the game's path too.

After the reset the same worker starts the slot's next process (`WarmSlots._exec_spare`),
so that the next game's start waits neither for it nor, with docker exec, for the engine:
that process has been sent nothing (its stdin is a pipe arena holds, empty) until the
game's first line, and its start-up limit counts from when the game asks for it, as for
any start. If that start fails, nothing is said then: the next start tries again in the
foreground and meets the failure there. A slot's last spare is killed by `close()`.

What a successor can still read: the cgroup's cumulative statistics that cannot be reset
(memory.stat's event counts, cpu.stat's throttling counts). A bot that means to could
signal a number to its next process through them (say, by how many page faults it
causes): no state is left, but these counts are; only a fresh container (the cold design,
`warm=False`) has none. What every container on the host shares (load, free memory) is
readable in both designs.

stdin, stdout and stderr are three named pipes per process in the slot's folder, mounted
read-only at /arena-io (as cold containers' two); no byte passes through the engine. A
process's end is seen through a pidfd of its host pid (the one whose NSpid is the pid the
launcher said, or exec inspect's); its exit code comes from the launcher's monitor (or
exec inspect) only when a bot ended on its own. OUT_OF_MEMORY is the bot's, and so is a
container that ended while its bot ran only when the kernel's OOM count says so; any
other breakage of the container, and every engine failure, is a SandboxError.

Warm slots need what the pipes need (/bin/sh in the image, arena as root with an engine
that does not remap users), and the engine on this host, whose container processes arena
can see in /proc. Where that is not so, a slot starts cold, as `slot=None` does.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import os
import select
import shutil
import signal
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docker.errors

from arena.sandbox.base import (
    BotFault,
    BotProcess,
    BotSpec,
    Limits,
    Reason,
    SandboxError,
)
from arena.sandbox.cgroups import CGROUP_ROOT, BotCgroup
from arena.sandbox.common import (
    CLOSED_STDOUT,
    STOPPED_READING,
    LineBuffer,
    StderrLog,
    fault_for_exit,
    input_wait_s,
)
from arena.sandbox.docker.engine import (
    _ENGINE_ERRORS,
    EXIT_WAIT_S,
    IO_MOUNT,
    IO_PREFIX,
    SETTLE_S,
    USER,
    _is_gone,
    _process_start_time,
    _remove_quietly,
    _slug,
)
from arena.sandbox.docker.transport import (
    LOG_DRAIN_S,
    _as_returncode,
    _milliseconds,
    _remove_io_dir,
)

if TYPE_CHECKING:
    from arena.sandbox.docker import DockerSandbox

KEEPER_USER = "65533:65533"  # the container's init and idle shell: not the bot's uid
LAUNCHER_USER = "0:0"  # the launcher's: it must become the bot's uid (with only the caps below)
LAUNCHER_CAPS = ["SETUID", "SETGID", "SETPCAP"]  # to setuid/setgid, and drop the bounding set
SLOT_LABEL = "arena.slot"
KEEP_PIPE = "keep"  # the idle shell blocks opening it; nobody ever writes it
LAUNCH_PIPE = "launch"  # arena writes a process's serial number here: the launcher starts it
STATUS_PIPE = "status"  # the launcher says here what it started ("run N PID") and how it ended
NO_LAUNCHER = 97  # the launcher's exit code when the image has no setpriv: exec instead
# The launcher, the container's main process (the init's child), as root with only
# LAUNCHER_CAPS, in the container's seccomp filter, no-new-privileges, rlimits and cgroup.
# For each serial number N arena writes, a monitor subshell (root) starts the bot's process
# through setpriv (nobody's uid, gid and group, every capability set emptied, bounding set
# included, so that its status reads as a cold container's bot), says its pid in the
# container's namespace, waits for it and says its exit status. The bot's process keeps
# nothing of the launcher's: the launch and status pipes (3, 4) are closed for it, and its
# stdin, stdout and stderr are its own three pipes, opened by a shell that then execs the bot.
_LAUNCHER = r"""
setpriv=$(PATH=/usr/bin:/bin:/usr/sbin:/sbin command -v setpriv) ||
  { echo no-setpriv >/arena-io/status; exit NO_LAUNCHER; }
exec 3<>/arena-io/launch 4>/arena-io/status </dev/null
echo ready >&4
while read -r n <&3; do
  (
    "$setpriv" --reuid=UID --regid=GID --groups=GID --inh-caps=-all --bounding-set=-all \
      -- /bin/sh -c 'i=$1 o=$2 e=$3; shift 3; exec "$@" <"$i" >"$o" 2>"$e"' arena-stdio \
      "/arena-io/in-$n" "/arena-io/out-$n" "/arena-io/err-$n" "$@" 3<&- 4>&- &
    echo "run $n $!" >&4
    wait $!
    echo "end $n $?" >&4
  ) 3<&- &
done
"""
LAUNCHER = (
    _LAUNCHER.replace("NO_LAUNCHER", str(NO_LAUNCHER))
    .replace("UID", USER.split(":")[0])
    .replace("GID", USER.split(":")[1])
)
WIPED = ("tmp", "dev/shm", "dev/mqueue")  # the container's writable places
KILL_WITHIN_S = 2.0  # a reset that cannot empty the container in this time replaces it
START_WITHIN_S = 5.0  # from `start` of a container to its idle shell running
MAKE_WORKERS = 2  # containers made ahead of need at once
REMOVE_WORKERS = 8  # containers removed side by side at close
RESET_WORKERS = 2  # resets take ~10 ms; a second worker keeps one slow replacement from stalling them

_READY = select.POLLIN | select.POLLHUP | select.POLLERR
_CLONE_NEWIPC = 0x08000000
_IPC_RMID = 0
_libc = ctypes.CDLL(None, use_errno=True)


class _Broken(Exception):
    """The container cannot be reset: it is replaced (never the bot's fault)."""


# -- the container's parts on this host -------------------------------------------------------
def _container_cgroup(pid: int, container_id: str) -> tuple[BotCgroup, Path | None] | None:
    """The container's cgroup directories (v1: pids and memory; else v2), from its init's
    pid, and the v1 cpuacct directory (whose CPU count a reset zeroes) if there is one."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    v1: dict[str, Path] = {}
    unified: Path | None = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if container_id not in path:
            continue
        if not controllers:
            unified = CGROUP_ROOT / path.lstrip("/")
        for controller in controllers.split(","):
            if controller in ("pids", "memory", "cpuacct"):
                v1[controller] = CGROUP_ROOT / controller / path.lstrip("/")
    v1 = {name: folder for name, folder in v1.items() if (folder / "cgroup.procs").exists()}
    cpuacct = v1.pop("cpuacct", None)
    if v1:
        return BotCgroup(list(v1.values()), v1.get("memory"), v2=False), cpuacct
    if unified is not None and (unified / "memory.events").exists():
        return BotCgroup([unified], unified, v2=True), None
    return None


def _pidfd(pid: int, container_id: str) -> int | None:
    """A pidfd of `pid` if it is (still) a process of the container, else None.

    Opened first and checked after: a pid the container let go of and the host reused is
    then never signalled or taken for the bot.
    """
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    try:
        if container_id in Path(f"/proc/{pid}/cgroup").read_text():
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _empty_folder(path: str) -> None:
    """Remove everything inside the folder `path` (not the folder), never following a link."""
    try:
        folder = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return  # the image has no such place
    try:
        for name in os.listdir(folder):
            try:
                os.unlink(name, dir_fd=folder)
            except IsADirectoryError:
                shutil.rmtree(name, dir_fd=folder)  # descriptor-based: links are removed, not followed
        left = os.listdir(folder)
        if left:
            raise OSError(errno.ENOTEMPTY, f"{len(left)} entries left in {path}")
    finally:
        os.close(folder)


_MOUNT_FLAGS = {"ro": 1, "nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1 << 10,
                "nodiratime": 1 << 11, "relatime": 1 << 21, "strictatime": 1 << 24}
_MNT_DETACH = 2
_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_CLONE_FS = 0x00000200
LAST_PID = 100  # after a reset the container's next process gets pid 101 (or the next free)


def _tmpfs_mounts(init_pid: int) -> list[tuple[bytes, int, bytes]]:
    """(mount point, flags, options) of the container's /tmp and /dev/shm, from mountinfo."""
    found = []
    for line in Path(f"/proc/{init_pid}/mountinfo").read_text().splitlines():
        mount, _, source = line.partition(" - ")
        fields, (fstype, _, options) = mount.split(), source.split()[:3]
        if fields[4] in ("/tmp", "/dev/shm") and fstype == "tmpfs":
            flags = sum(_MOUNT_FLAGS.get(option, 0) for option in fields[5].split(","))
            data = ",".join(o for o in options.split(",") if o not in ("rw", "ro"))
            found.append((fields[4].encode(), flags, data.encode()))
    return found


def _renew(init_pid: int, mounts: list[tuple[bytes, int, bytes]]) -> int:
    """Renew what the container's namespaces hold; how many SysV IPC objects were removed.

    - IPC: every SysV shared memory segment, semaphore set and message queue is removed
      (/proc/sysvipc lists those of the IPC namespace of whoever opens it);
    - pid: the counter is set back to LAST_PID, so that the next process gets the same pid
      as the first did (the kernel applies ns_last_pid to the writer's own namespace: the
      writer is a host shell spawned into the container's pid namespace);
    - mount: `mounts` (/tmp, /dev/shm) are replaced by fresh tmpfs mounts with the same
      options: empty, and their inode numbers start again.
    What a process could count up (files made, processes started) tells its successor
    nothing. Everything runs in a thread of its own that ends after: setns moves only the
    calling thread, which for a mount namespace must first stop sharing its file-system
    context with the other threads (unshare CLONE_FS). No program of the container's
    image ever runs with arena's rights.
    """
    outcome: list[Any] = []

    def enter(kind: str, flag: int) -> None:
        fd = os.open(f"/proc/{init_pid}/ns/{kind}", os.O_RDONLY)
        try:
            if _libc.setns(fd, flag) != 0:
                raise OSError(ctypes.get_errno(), f"entering the container's {kind} namespace")
        finally:
            os.close(fd)

    def work() -> None:
        try:
            if _libc.unshare(_CLONE_FS) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_FS)")
            enter("ipc", _CLONE_NEWIPC)
            removed = 0
            for kind in ("shm", "sem", "msg"):
                for row in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]:
                    ident = int(row.split()[1])
                    if kind == "shm":
                        result = _libc.shmctl(ident, _IPC_RMID, None)
                    elif kind == "sem":
                        result = _libc.semctl(ident, 0, _IPC_RMID)
                    else:
                        result = _libc.msgctl(ident, _IPC_RMID, None)
                    if result != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.EIDRM):
                        raise OSError(ctypes.get_errno(), f"removing SysV {kind} {ident}")
                    removed += 1
            if os.path.exists("/proc/sys/kernel/ns_last_pid"):  # a kernel with checkpoint/restore
                set_pid_counter()
            enter("mnt", _CLONE_NEWNS)
            for point, flags, options in mounts:
                if _libc.umount2(point, _MNT_DETACH) != 0:
                    raise OSError(ctypes.get_errno(), f"unmounting {point.decode()}")
                if _libc.mount(b"tmpfs", point, b"tmpfs", flags, options) != 0:
                    raise OSError(ctypes.get_errno(), f"mounting a fresh {point.decode()}")
            outcome.append(removed)
        except Exception as error:  # noqa: BLE001 - handed to the caller
            outcome.append(error)

    def set_pid_counter() -> None:
        enter("pid", _CLONE_NEWPID)  # for the children of this thread only
        writer = os.posix_spawn(
            "/bin/sh",
            ["/bin/sh", "-c", f"echo {LAST_PID} > /proc/sys/kernel/ns_last_pid"],
            {},
        )
        if os.waitstatus_to_exitcode(os.waitpid(writer, 0)[1]) != 0:
            raise OSError(errno.EIO, "setting the container's pid counter")

    thread = threading.Thread(target=work, name="arena-warm-renew", daemon=True)
    thread.start()
    thread.join()
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


def _make_slot_folder() -> Path:
    """The slot's folder of pipes (mounted read-only at /arena-io), with the keeper's pipe."""
    folder = Path(tempfile.mkdtemp(prefix=IO_PREFIX))
    folder.chmod(0o711)  # the container's users reach their pipes; nobody may list the folder
    uid, gid = (int(part) for part in KEEPER_USER.split(":"))
    os.mkfifo(folder / KEEP_PIPE, 0o600)
    os.chown(folder / KEEP_PIPE, uid, gid)  # the bot (another uid) cannot open it
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
        self.container: Any = None
        self.keepers: dict[int, str] = {}  # host pid -> start time: the init and the idle shell
        self.cgroup: BotCgroup | None = None
        self.cpuacct: Path | None = None
        self.mounts: list[tuple[bytes, int, bytes]] = []
        self.serial = 0
        self.removed = False
        self.launcher = False  # processes start through the launcher (else docker exec)
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
        # The launcher runs the image's /bin/sh and setpriv as root: only in an image no bot
        # made (the sandbox's own, the organiser's), never one built from a bot's Dockerfile,
        # whose author could make them keep a process (and its memory) from game to game.
        trusted = not self.bot.dockerfile
        if self.sandbox.warm_launcher and trusted and self.image not in self.sandbox._no_launcher:
            try:
                self._create_with(launcher=True)
                return
            except _NoLauncher:
                self.sandbox._no_launcher.add(self.image)  # from now on: docker exec
                _remove_quietly(self.container)
                self.container = None
                self._close_launcher_pipes()
        self._create_with(launcher=False)

    def _create_with(self, launcher: bool) -> None:
        """Make and start the container, its keepers running: the launcher (or the idle
        shell of docker exec's design) as the init's child."""
        self.launcher = launcher
        settings = self.sandbox.container_settings(self.bot, self.limits, self.image, self.folder)
        settings["name"] = f"arena-{_slug(self.bot.name)}-warm-{uuid.uuid4().hex[:12]}"
        facts = self.sandbox._image_facts(self.image)
        self.bot_command = facts["entrypoint"] + (list(self.bot.command) or facts["cmd"])
        if launcher:
            settings["user"] = LAUNCHER_USER
            settings["cap_add"] = list(LAUNCHER_CAPS)
            settings["entrypoint"] = ["/bin/sh", "-c", LAUNCHER, "arena-launcher"]
            settings["command"] = self.bot_command
            self._open_launcher_pipes()
        else:
            settings["user"] = KEEPER_USER
            settings["entrypoint"] = ["/bin/sh", "-c", f"exec <{IO_MOUNT}/{KEEP_PIPE}"]
            settings["command"] = []
        settings["labels"][SLOT_LABEL] = self.slot
        # A closed TCP connection would linger (TIME_WAIT, 60 s) in the container's network
        # namespace, where the next process could read its ports: keep none.
        settings["sysctls"] = {"net.ipv4.tcp_max_tw_buckets": "0"}
        self.workdir = settings.get("working_dir")
        try:
            self.container = self.sandbox.client.containers.create(**settings)
            self.container.start()
            self.container.reload()
        except _ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine could not start a warm container for {self.bot.name}: {error}"
            ) from None
        if launcher:
            self._await_launcher()
        init_pid = self.container.attrs["State"].get("Pid") or 0
        found = _container_cgroup(init_pid, self.container.id) if init_pid else None
        if found is None:
            raise _Unsupported(
                "the engine's containers are not visible in this host's /proc and cgroups"
            )
        self.cgroup, self.cpuacct = found
        # The init (docker-init) starts the launcher or idle shell at once: wait for it.
        deadline = time.monotonic() + START_WITHIN_S
        while True:
            children = _children(init_pid)
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
        """Wait for the launcher's "ready"; _NoLauncher if it has no setpriv."""
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
                if not poller.poll(_milliseconds(min(remaining, 0.05))):
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
                        case ["no-setpriv"]:
                            raise _NoLauncher(f"{self.image} has no setpriv")
                        case ["run", serial, pid]:
                            self._runs[int(serial)] = int(pid)
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
        """Its init and idle shell still run (else it was killed from outside)."""
        return bool(self.keepers) and all(
            _process_start_time(pid) == started for pid, started in self.keepers.items()
        )

    def oom_kills(self) -> int:
        """Out-of-memory kills in the container so far (the kernel's count)."""
        return self.cgroup.oom_kills() if self.cgroup else 0

    # -- a process ------------------------------------------------------------------------------
    def run(self) -> WarmBotProcess:
        """Start a fresh bot process in the container, as nobody (through the launcher, or
        by `docker exec`: see the module's docstring)."""
        self.serial += 1
        names = {part: f"{part}-{self.serial}" for part in ("in", "out", "err")}
        uid, gid = (int(part) for part in USER.split(":"))
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
        if self.launcher:
            return self._launch(names, fds, oom_before)
        redirect = (
            f'exec "$@" <{IO_MOUNT}/{names["in"]} >{IO_MOUNT}/{names["out"]} '
            f'2>{IO_MOUNT}/{names["err"]}'
        )
        command = ["/bin/sh", "-c", redirect, "arena-stdio", *self.bot_command]
        api = self.sandbox.client.api
        try:
            exec_id = api.exec_create(
                self.container.id,
                command,
                stdout=False,
                stderr=False,
                stdin=False,
                tty=False,
                user=USER,
                workdir=self.workdir,
            )["Id"]
            api.exec_start(exec_id, detach=True)  # returns once the process runs
            state = api.exec_inspect(exec_id)
        except _ENGINE_ERRORS as error:
            for fd in fds.values():
                os.close(fd)
            raise _ExecFailed(
                f"the Docker engine could not start {self.bot.name} in {self.name}: {error}",
                names,
            ) from None
        pid = state.get("Pid") or 0
        pidfd = _pidfd(pid, self.container.id) if state.get("Running") and pid else None
        return WarmBotProcess(self, exec_id, pid, pidfd, fds, oom_before, names)

    def _launch(self, names: dict[str, str], fds: dict[str, int], oom_before: int) -> WarmBotProcess:
        """Start the process through the launcher: no engine call at all."""
        serial = self.serial
        try:
            os.write(self._launch_fd, f"{serial}\n".encode())
            started = self._status_until(lambda: serial in self._runs, START_WITHIN_S)
            failure = None if started else "did not start it"
        except OSError as error:
            failure = f"could not be told: {error}"
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
            raise _Broken("its init or idle shell is gone (killed from outside)")
        init_pid = next(iter(self.keepers))
        try:
            self._kill_all_but_keepers()
            _renew(init_pid, self.mounts)
            for place in WIPED:  # empty already, unless a mount could not be renewed
                _empty_folder(f"/proc/{init_pid}/root/{place}")
        except (OSError, RecursionError) as error:
            raise _Broken(f"could not reset it: {error}") from None
        self._reset_counters()
        if names:
            for name in names.values():
                try:
                    (self.folder / name).unlink()
                except FileNotFoundError:
                    pass
        if not self.healthy():
            raise _Broken("its init or idle shell ended during the reset")

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
                    _remove_quietly(self.container)
                else:
                    try:
                        self.container.remove(force=True)
                    except docker.errors.APIError as error:
                        if not _is_gone(error):
                            raise SandboxError(
                                f"the Docker engine failed while removing {self.name}: {error}"
                            ) from None
                    except _ENGINE_ERRORS as error:
                        raise SandboxError(
                            f"the Docker engine failed while removing {self.name}: {error}"
                        ) from None
        finally:
            self._close_launcher_pipes()
            _remove_io_dir(self.folder)


class _Unsupported(SandboxError):
    """Warm slots cannot work with this engine: slots start cold."""


class _NoLauncher(Exception):
    """The image has no setpriv: the slot's processes start by docker exec."""


class _ExecFailed(SandboxError):
    """The engine failed to start a process in a warm container (maybe half way)."""

    def __init__(self, message: str, names: dict[str, str]):
        super().__init__(message)
        self.names = names


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


# -- the running bot ----------------------------------------------------------------------------
class WarmBotProcess(BotProcess):
    """A bot process exec'd in a warm container: three named pipes and a pidfd."""

    stdio = "fifo"

    def __init__(
        self,
        home: WarmContainer,
        exec_id: str,
        pid: int,
        pidfd: int | None,
        fds: dict[str, int],
        oom_before: int,
        names: dict[str, str],
    ):
        self.home = home
        self.container = home.container
        self.limits = home.limits
        self.exec_id, self.pid = exec_id, pid
        self.serial = home.serial  # made right after run() numbered it
        self.io_dir = home.folder
        self._names = names
        self._pidfd = pidfd
        self._in_fd: int | None = fds["in"]
        self._out_fd: int | None = fds["out"]
        self._err_fd: int | None = fds["err"]
        self._oom_before = oom_before
        self._stdout = LineBuffer.from_limits(self.limits)
        self._stderr = StderrLog(self.limits.stderr_keep_bytes)
        self._ended = pidfd is None  # the process has ended (and its output was all read)
        self._stdout_closed = False
        self._fault: BotFault | None = None
        self._closed = False
        self._oom = False
        self._reading = select.poll()
        for fd in (self._out_fd, self._err_fd, self._pidfd):
            if fd is not None:
                self._reading.register(fd, select.POLLIN)
        self._writing = select.poll()
        self._writing.register(self._in_fd, select.POLLOUT)
        _OPEN.add(self)
        if self._ended:
            self._drain()

    @property
    def id(self) -> str:
        """The container's id."""
        return self.container.id

    # -- reading -----------------------------------------------------------------------------------
    def _pump(self, wait_s: float) -> None:
        if self._ended:
            return
        ready = {fd for fd, _ in self._reading.poll(_milliseconds(wait_s))}
        if self._out_fd in ready:
            self._read_out()
        if self._err_fd in ready:
            self._read_err()
        if self._pidfd in ready:
            # Its files were closed before it was seen to end: what it wrote is in the pipes.
            self._drain()

    def _drain(self) -> None:
        self._ended = True
        for _ in range(64):  # bounded: a child it left behind may still be writing
            if not (self._read_out() | self._read_err()):
                break

    def _read_out(self) -> bool:
        """Read from stdout; True if the pipe may hold more."""
        if self._out_fd is None or self._stdout_closed:
            return False
        for _ in range(16):
            try:
                chunk = os.read(self._out_fd, 1 << 16)
            except BlockingIOError:
                return False
            if not chunk:
                self._stdout_closed = True
                self._reading.unregister(self._out_fd)
                return False
            self._stdout.feed(chunk)
            if len(chunk) < (1 << 16):
                return False
        return True

    def _read_err(self) -> bool:
        if self._err_fd is None:
            return False
        for _ in range(16):
            try:
                chunk = os.read(self._err_fd, 1 << 16)
            except BlockingIOError:
                return False
            if not chunk:
                self._reading.unregister(self._err_fd)
                os.close(self._err_fd)
                self._err_fd = None
                return False
            self._stderr.append(chunk)
            if len(chunk) < (1 << 16):
                return False
        return True

    def receive_line(self, timeout_s: float) -> bytes:
        """The bot's next stdout line, waiting at most `timeout_s` (see BotProcess)."""
        self._check_open()
        if self._fault is not None:
            raise self._fault
        deadline = time.monotonic() + max(0.0, timeout_s)
        try:
            while True:
                line = self._stdout.next_line()
                if line is not None:
                    return line
                if self._ended or self._stdout_closed:
                    raise self._end_fault()
                self._pump(deadline - time.monotonic())
                if self._stdout.has_line() or self._ended or self._stdout_closed:
                    continue
                if time.monotonic() >= deadline:
                    raise BotFault(Reason.TIMEOUT, f"did not answer within {timeout_s:.3g} s")
        except BotFault as fault:
            if fault.reason is not Reason.TIMEOUT:
                self._fault = fault
            raise

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(
                f"the bot process in {self.home.name} was already closed (arena's mistake)"
            )

    def _end_fault(self) -> BotFault:
        """Why its output ended: OUT_OF_MEMORY, CRASH with its exit code or signal, or CRASH
        because it closed its stdout and lives on; SandboxError if its container was killed."""
        if not self._ended:
            poller = select.poll()
            poller.register(self._pidfd, select.POLLIN)
            if not poller.poll(_milliseconds(SETTLE_S)):
                return BotFault(Reason.CRASH, CLOSED_STDOUT)
            self._drain()
        if self.home.oom_kills() > self._oom_before:
            self._oom = True
            return fault_for_exit(None, self.limits, oom=True)
        if not self.home.healthy():
            raise SandboxError(
                f"the warm container {self.home.name} was killed from outside while "
                f"{self.home.bot.name} ran in it; not the bot's fault"
            )
        return fault_for_exit(self._exit_status(), self.limits)

    def _exit_status(self) -> int | None:
        """Its exit status as Popen.returncode, from the launcher or the engine (None if
        it does not tell)."""
        if self.home.launcher:
            status = self.home.launched_status(self.serial, EXIT_WAIT_S)
            return None if status is None else _as_returncode(status)
        api = self.home.sandbox.client.api
        deadline = time.monotonic() + EXIT_WAIT_S
        while True:
            try:
                state = api.exec_inspect(self.exec_id)
            except docker.errors.NotFound:
                raise SandboxError(
                    f"the container {self.home.name} was removed by someone else before arena "
                    "learnt how its bot ended; not the bot's fault"
                ) from None
            except _ENGINE_ERRORS as error:
                raise SandboxError(
                    f"the Docker engine failed while reading how {self.home.bot.name} ended: {error}"
                ) from None
            if not state.get("Running") and state.get("ExitCode") is not None:
                return _as_returncode(state["ExitCode"])
            if time.monotonic() > deadline:
                return None
            time.sleep(0.005)

    def stderr_text(self) -> str:
        """The kept part of the bot's stderr (with what is waiting in its pipe)."""
        self._read_err_now()
        return self._stderr.text()

    def stderr_mark(self) -> int:
        """Bytes of stderr read so far (with what is waiting in its pipe)."""
        self._read_err_now()
        return self._stderr.received

    def stderr_since(self, mark: int) -> str:
        """The stderr after `mark`: all the bot wrote before its last answer is in the pipe."""
        self._read_err_now()
        return self._stderr.since(mark)

    def _read_err_now(self) -> None:
        """Read what waits in the stderr pipe, if the kernel says something does: a read
        before the bot has opened its end would see an end of file, and close ours."""
        if self._closed or self._err_fd is None:
            return
        ready = select.poll()
        ready.register(self._err_fd, select.POLLIN)
        for _ in range(4):  # bounded: a flood is drained by the next wait anyway
            if self._err_fd is None or not ready.poll(0) or not self._read_err():
                break

    # -- writing -----------------------------------------------------------------------------------
    def send_line(self, line: bytes) -> None:
        """Write one line to the bot's stdin; output arriving meanwhile is read, not lost."""
        self._check_open()
        if self._fault is not None:
            raise self._fault
        self._stdout.start_decision()
        try:
            self._send(line + b"\n")
        except BotFault as fault:
            if fault.reason is not Reason.TIMEOUT:
                self._fault = fault
            raise

    def _send(self, data: bytes) -> None:
        if self._ended or self._stdout_closed:
            raise self._end_fault()
        try:
            data = data[os.write(self._in_fd, data) :]
        except BlockingIOError:
            pass
        view = memoryview(data)
        deadline = time.monotonic() + input_wait_s(self.limits)
        while view:
            if self._ended or self._stdout_closed:
                raise self._end_fault()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BotFault(Reason.TIMEOUT, STOPPED_READING)
            self._pump(0.0)  # a bot blocked on writing output cannot read: drain it
            if not self._writing.poll(_milliseconds(min(remaining, 0.01))):
                continue
            try:
                view = view[os.write(self._in_fd, view) :]
            except (BlockingIOError, InterruptedError):
                continue

    # -- end -----------------------------------------------------------------------------------------
    def close(self) -> Reason | None:
        """Kill the process (its container stays, and is reset for the slot's next process);
        OUT_OF_MEMORY if the bot was killed for memory."""
        if self._closed:
            return Reason.OUT_OF_MEMORY if self._oom else None
        self._closed = True
        _OPEN.discard(self)
        try:
            self._pump(0.0)  # keep the last words of its log
        except (OSError, BotFault):
            pass
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            # Once it has ended, all it wrote is in the pipes: keep its last words.
            poller = select.poll()
            poller.register(self._pidfd, select.POLLIN)
            if poller.poll(_milliseconds(LOG_DRAIN_S)):
                try:
                    self._drain()
                except BotFault:
                    pass  # a flood of output: the log has what it keeps
        self._oom = self._oom or self.home.oom_kills() > self._oom_before
        self._close_fds()
        self.home.released(self)
        return Reason.OUT_OF_MEMORY if self._oom else None

    def discard(self) -> None:
        """Close without asking anything (a failed start, interpreter exit)."""
        if self._pidfd is not None and not self._closed:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._closed = True
        _OPEN.discard(self)
        self._close_fds()

    def _close_fds(self) -> None:
        for name in ("_in_fd", "_out_fd", "_err_fd", "_pidfd"):
            fd = getattr(self, name)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, name, None)

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:  # noqa: BLE001, S110 - nothing may escape a finaliser
                pass


# -- slots ---------------------------------------------------------------------------------------
class _Slot:
    """A slot's container and what is being done to it (a reset or a replacement)."""

    def __init__(self, key: str, bot: BotSpec, limits: Limits, image: str):
        self.key, self.bot, self.limits, self.image = key, bot, limits, image
        self.home: WarmContainer | None = None
        self.pending: Future[None] | None = None
        self.process: WarmBotProcess | None = None
        self.spare: WarmBotProcess | None = None  # the next process, exec'd after the reset
        self.lock = threading.Lock()


class WarmSlots:
    """The warm slots of one docker sandbox, and the worker that resets and replaces
    their containers off the games' path."""

    def __init__(self, sandbox: DockerSandbox):
        self.sandbox = sandbox
        self._slots: dict[str, _Slot] = {}
        self._lock = threading.Lock()
        self._workers = ThreadPoolExecutor(RESET_WORKERS, thread_name_prefix="arena-warm")
        # Containers made ahead of need: apart from the resets, which games wait for.
        self._makers = ThreadPoolExecutor(MAKE_WORKERS, thread_name_prefix="arena-warm-make")
        self._closed = False
        self.unsupported: str | None = None  # why slots start cold, once known
        self.replaced = 0  # containers replaced after they broke
        self.last_replacement = ""  # why the last one was
        _POOLS.add(self)

    def start(self, bot: BotSpec, limits: Limits, key: str, image: str) -> WarmBotProcess:
        """A fresh process of `bot` in the slot's container (made on the slot's first use)."""
        with self._lock:
            if self._closed:
                raise SandboxError("the docker sandbox was closed (arena's mistake)")
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot(key, bot, limits, image)
        with slot.lock:
            if slot.process is not None and not slot.process._closed:
                raise SandboxError(f"slot {key!r} already runs a process (arena's mistake)")
            if (slot.bot, slot.limits, slot.image) != (bot, limits, image):
                raise SandboxError(
                    f"slot {key!r} was first used for {slot.bot.name} with other limits or "
                    f"image; a slot always runs one bot with one set of limits (arena's mistake)"
                )
            if slot.pending is not None:
                pending, slot.pending = slot.pending, None
                try:
                    pending.result()  # the reset (or replacement) of the last process
                except SandboxError:
                    pass  # the replacement failed: made again below, or the engine's error told
            spare, slot.spare = slot.spare, None
            if slot.home is not None and not slot.home.healthy():
                if spare is not None:
                    spare.discard()
                    spare = None
                self._replace(slot, "its init or idle shell is gone (killed from outside)")
            if spare is not None:
                # Exec'd ahead of need, right after the last process's reset: it has read
                # nothing (its stdin is ours, empty) and is handed over as a fresh start is.
                slot.process = spare
                return spare
            if slot.home is None:
                slot.home = self._new_container(slot)
            try:
                slot.process = slot.home.run()
            except _ExecFailed as failed:
                # Whatever the engine did start goes with the reset, before the next start.
                slot.pending = self._workers.submit(self._reset, slot, failed.names)
                raise SandboxError(str(failed)) from None  # the plain kind callers know
            return slot.process

    def prepare(self, bot: BotSpec, limits: Limits, key: str, image: str) -> None:
        """Make the slot's container now, on the worker, if it has none (the first start of
        the slot then finds it ready); engine failures come back at that start."""
        with self._lock:
            if self._closed or key in self._slots:
                return
            slot = self._slots[key] = _Slot(key, bot, limits, image)

        def make() -> None:
            slot.home = self._new_container(slot)
            self._exec_spare(slot, slot.home)  # its first process too, as after a reset

        slot.pending = self._makers.submit(make)

    def _released(self, slot: _Slot, process: WarmBotProcess) -> None:
        """A process of the slot closed: reset its container in the background."""
        if self._closed:
            return
        names = process._names
        slot.pending = self._workers.submit(self._reset, slot, names)

    def _reset(self, slot: _Slot, names: dict[str, str]) -> None:
        home = slot.home
        if home is None:
            return
        try:
            home.reset(names)
        except _Broken as why:
            self._replace(slot, str(why))
            return
        self._exec_spare(slot, home)

    def _exec_spare(self, slot: _Slot, home: WarmContainer) -> None:
        """Start the slot's next process now, off the game's path, so that the next game
        does not wait for the engine's exec. An engine failure here is not kept: the next
        start execs in the foreground and meets it there."""
        if self._closed or slot.home is not home:
            return
        try:
            slot.spare = home.run()
        except _ExecFailed as failed:
            try:
                home.reset(failed.names)
            except _Broken as why:
                self._replace(slot, str(why))

    def _replace(self, slot: _Slot, why: str) -> None:
        """Remove a broken container and make the slot a new one."""
        old, slot.home = slot.home, None
        if old is not None:
            old.remove(quietly=True)
        self.replaced += 1
        self.last_replacement = why
        slot.home = self._new_container(slot)

    def _new_container(self, slot: _Slot) -> WarmContainer:
        return WarmContainer(
            self.sandbox,
            slot.bot,
            slot.limits,
            slot.image,
            slot.key,
            released=lambda process: self._released(slot, process),
        )

    def containers(self) -> list[WarmContainer]:
        """The slots' containers now."""
        with self._lock:
            return [slot.home for slot in self._slots.values() if slot.home is not None]

    def close(self) -> None:
        """Kill every process and remove every container of the slots (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            slots = list(self._slots.values())
        _POOLS.discard(self)
        for slot in slots:
            if slot.process is not None:
                slot.process.discard()
        self._makers.shutdown(wait=True, cancel_futures=True)
        self._workers.shutdown(wait=True)
        for slot in slots:  # after the worker: a spare it exec'd while this began goes too
            spare, slot.spare = slot.spare, None
            if spare is not None:
                spare.discard()
        homes = [slot.home for slot in slots if slot.home is not None]
        for slot in slots:
            slot.home = None
        # Side by side: each removal is mostly a wait for the engine (about 0.1-0.2 s), and a
        # run keeps dozens of containers.
        failures: list[SandboxError] = []

        def remove(home: WarmContainer) -> None:
            try:
                home.remove()
            except SandboxError as error:
                failures.append(error)

        try:
            with ThreadPoolExecutor(REMOVE_WORKERS, thread_name_prefix="arena-warm-rm") as removers:
                list(removers.map(remove, homes))
        except RuntimeError:  # at interpreter exit no thread can start: one after another
            for home in homes:
                remove(home)  # idempotent: what the removers did is not done again
        if failures:
            raise failures[0]


# Containers of slots still open when the interpreter exits (Ctrl-C, an uncaught error) go.
_OPEN: weakref.WeakSet[WarmBotProcess] = weakref.WeakSet()
_POOLS: weakref.WeakSet[WarmSlots] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for process in list(_OPEN):
        process.discard()
    for pool in list(_POOLS):
        try:
            pool.close()
        except SandboxError:
            pass
