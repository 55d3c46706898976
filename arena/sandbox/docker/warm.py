"""Warm slots of the docker sandbox: one container per slot, kept for the run, and a fresh
bot process in it for every `start`, the container reset in between. The container's
part is in warm_container.py (what it asks of this host, through /proc: warm_host.py),
the running bot's in warm_process.py, the launcher's in launcher.c (built by
launcher.py).

Nothing of the image runs outside a bot's own process. The container's main process is
arena's launcher (launcher.c), a static binary built on this host and mounted read-only
with the slot's pipes (/arena-io): it uses no shell, setpriv, dynamic loader or library of
the image, reads no file of it, and execs the bot's command only once it has become the
bot. Its parent is the engine's docker-init, the host's static binary too. So an image
made by a bot's Dockerfile, whose /bin/sh or setpriv may be anything, gets the launcher
like the base image does (tests/sandbox/test_sandbox_docker_warm_channels.py tries one whose
/bin/sh and setpriv record what they are sent). The image's own entrypoint, if it has
one, is part of the bot's command, as in a cold container.

The launcher runs as root (uid 0, no user namespace) with only the capabilities SETUID,
SETGID, SETPCAP, SYS_ADMIN and NET_ADMIN, under the container's no-new-privileges and
seccomp filter. arena writes "SERIAL TOKEN UID" to its launch pipe; the launcher forks a
monitor that moves into a fresh network and IPC namespace (its loopback up) and forks the
bot's process, which becomes UID (uid, gid and group: the container's leased uid,
`arena.sandbox.uids`, else nobody, 65534; every capability set empty,
the bounding set too), opens its three pipes (/arena-io/TOKEN.in, .out, .err; TOKEN is
random, so a name counts nothing), stacks a seccomp filter and execs the bot; the monitor
says "run N PID" on its status pipe, drops its capabilities, waits and says "end N
STATUS". The two pipes are root's (0600), checked by the launcher (a FIFO of root's, which
neither the image nor a bot can make) and closed in the bot's process; the bot, of another
uid and without capabilities, can neither open them, nor signal or ptrace the launcher or
its monitor, nor even see them: the container's /proc is remounted with hidepid=2, so its
processes of other uids (whose page-fault, context-switch and CPU counts grow with every
game the launcher starts) are not listed. A start costs two forks and an exec and no
engine call.

Why CAP_SYS_ADMIN, and why it is safe: a fresh network and IPC namespace needs it (the
container has no user namespace). The bot's process drops it with everything else before
it runs anything of the bot; but the engine's seccomp filter is the container's, and with
CAP_SYS_ADMIN in the container's set it also allows unshare, setns, mount, clone with
namespace flags, bpf, perf_event_open and a few more, some of which work without a
capability (a user namespace would give the bot capabilities of its own there). The
launcher's own filter, stacked on the bot's process, denies them all again (clone3 says
ENOSYS, as the engine's filter says without CAP_SYS_ADMIN), and io_uring's three calls, as
Docker's default profile does since Docker 25 (Debian's 20.10 still allows them in a cold
container); the tests read from inside that a warm bot's answers equal a cold one's. Why not a launcher of the bot's own uid: a bot
may ptrace or signal a process of its own uid, so it could plant itself in the launcher
and reach its next game.

The bot's process has what a cold container's bot has, read from inside by
tests/sandbox/test_sandbox_docker_warm.py: uid, gid and group its container's, every capability set empty,
no-new-privileges, the engine's seccomp filter (and no more), the container's rlimits,
cgroup (memory, CPU, pids), read-only root, no network but a loopback, oom_score_adj 1000,
the same environment and working folder, and a private copy of the bot's folder at /bot
(`arena.sandbox.copies`), made afresh by every reset: no game reads the page cache of
another game's copy.

The container's two keepers (docker-init and the launcher) run as root, with
oom_score_adj -1000 where the host allows it, so an out-of-memory kill picks the bot. The
launcher ignores SIGCHLD: its monitors are reaped by the kernel, so their counts (and the
bots' they waited for) never add up in it. Nothing else of the container is long-lived.

Between two processes of a slot the host resets the container (`WarmContainer.reset`,
on a worker thread, while other games play; `start` waits only if it is not done yet):
1. every process in the container's cgroup but the two keepers (the monitor too) gets
   SIGKILL (through a pidfd, so a reused pid is never hit), until none is left; the
   game's network and IPC namespaces (sockets, abstract Unix names, packet counters, SysV
   objects and ids, POSIX message queues) end with its last process;
2. SysV objects of the container's own IPC namespace (none: no bot runs there) are
   removed, /tmp and /dev/shm are replaced by fresh tmpfs mounts (same options; not even
   their inode numbers tell how many files were made), and the pid namespace's counter is
   set back, so that the next process gets the same pid as the first did (warm_host.py's
   `_renew`: a short-lived thread enters the container's namespaces with setns);
3. /dev/mqueue is emptied, through /proc/PID/root of the init, with descriptor-relative
   removal that never follows a link;
4. the bot folder's copy (mounted at /bot) is emptied and made again: fresh files, whose
   page cache no game has touched;
5. the memory accounting is re-baselined: each process counts the cgroup's oom_kill
   events from its own start, so an out-of-memory kill is charged to the process (and
   game) it happened in; peak memory, limit hits and the CPU count are zeroed.
The environment, open files, sockets, ptys and locks of a process end with it. If any
step fails, or the keepers are gone (the container was killed from outside), the
container is removed and a new one made for the slot, off the game's path too.
tests/sandbox/test_sandbox_docker_warm_channels.py reads, over four games of one slot, that only
the two keepers run after each reset, and that loopback packet counts, SysV IPC ids, pids,
inode numbers and pipe names read the same in every game whatever the game before did.

After the reset the same worker starts the slot's next process (`WarmSlots._exec_spare`),
so that the next game's start waits for nothing: that process has been sent nothing (its
stdin is a pipe arena holds, empty) until the game's first line, and its start-up limit
counts from when the game asks for it, as for any start. If that start fails, nothing is
said then: the next start tries again in the foreground and meets the failure there. A
slot's last spare is killed by `close()`.

Why no pid or mount namespace per game: a fresh pid namespace needs a /proc of its own,
and a fresh proc mount would lose the engine's masks over /proc (kcore, keys,
timer_list, sched_debug, ...); the pid counter is set back instead (above), and hidepid
hides the rest. The host name (the container's id) is the container's for every game,
and no bot may change it.

What a successor can still read: the cgroup's cumulative statistics that cannot be reset
(memory.stat's event counts, cpu.stat's throttling counts, pids.events and the oom_kill
count), and the page cache charged to it (memory.stat's cache: which files of the image
earlier games read; and which pages of them are cached, for every container of the
image and cold ones too). A bot that means to could signal a number to its next
process through them (say, by how many page faults it causes): no state is left, but
these counts are; only a fresh container (the cold design, `warm=False`) has none. A
per-game child cgroup would not hide them: the container's cgroup folder, with its
totals, is what the container mounts at /sys/fs/cgroup. What every process on the host shares
(the clock, load, free memory, the kernel's counter of pipe and socket inode numbers,
boot_id) is readable in both designs; it carries no state, and a count pushed through it
arrives mixed with everything else the host does.

stdin, stdout and stderr are three named pipes per process in the slot's folder, mounted
read-only at /arena-io (as cold containers' two); no byte passes through the engine. A
process's end is seen through a pidfd of its host pid (the one whose NSpid is the pid the
launcher said); its exit code comes from the launcher's monitor only when a bot ended on
its own. OUT_OF_MEMORY is the bot's, and so is a container that ended while its bot ran
only when the kernel's OOM count says so; any other breakage of the container, and every
engine failure, is a SandboxError.

Under runsc (gVisor, `DockerSandbox(runtime="runsc")`) slots start cold: a bot's
processes live in gVisor's own kernel, and this host sees only gVisor's, so the reset
above, which works from the host's /proc, cgroups and namespaces (find, kill and count
the bot's processes, renew /tmp from inside the container's mount namespace), has
nothing to act on. Each game gets a fresh container, and so a fresh kernel: nothing of
one game's kernel state, counters included, reaches the next; and gVisor mounts no cgroup
files in it, so the counts below (pids.events among them) cannot even be read there.

Warm slots need what the pipes need (arena as root with an engine that does not remap
users), the engine on this host, whose container processes arena can see in /proc, a C
compiler with a static libc to build the launcher once (launcher.py), and an engine that
lets the launcher make namespaces (it tries once when the container starts, and says
"unsupported" if it cannot). Where that is not so, a slot starts cold, as `slot=None`
does, and `DockerSandbox.warm_reason()` says why.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from arena.faults import SandboxError
from arena.sandbox.base import BotSpec, Limits
from arena.sandbox.docker.warm_container import (  # noqa: F401 (the package's names)
    LAUNCHER_CAPS,
    LAUNCHER_NAME,
    LAUNCHER_USER,
    SLOT_LABEL,
    WarmContainer,
    _Broken,
    _ExecFailed,
    _Unsupported,
)
from arena.sandbox.docker.warm_process import _OPEN, WarmBotProcess

if TYPE_CHECKING:
    from arena.sandbox.docker import DockerSandbox

MAKE_WORKERS = 2  # containers made ahead of need at once
REMOVE_WORKERS = 8  # containers removed side by side at close
RESET_WORKERS = 2  # resets take ~10 ms; a second worker keeps one slow replacement from stalling them


# -- slots ---------------------------------------------------------------------------------------
class _Slot:
    """A slot's container and what is being done to it (a reset or a replacement)."""

    def __init__(self, key: str, bot: BotSpec, limits: Limits, image: str):
        self.key, self.bot, self.limits, self.image = key, bot, limits, image
        self.home: WarmContainer | None = None
        self.pending: Future[None] | None = None
        self.process: WarmBotProcess | None = None
        self.spare: WarmBotProcess | None = None  # the next process, started after the reset
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
                self._replace(slot, "its init or launcher is gone (killed from outside)")
            if spare is not None:
                # Started ahead of need, right after the last process's reset: it has read
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
        does not wait for it. A failure here is not kept: the next start tries in the
        foreground and meets it there."""
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
        for slot in slots:  # after the worker: a spare it started while this began goes too
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
