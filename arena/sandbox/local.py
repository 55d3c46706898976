"""The `local` sandbox: a bot as a child process with limits. NOT a security boundary.

How a bot is started (its cost is measured in docs/performance.md):
1. A small exec shim (arena's Python, `-I -S`) joins the bot's cgroup (pids.max and a
   memory limit, see `arena.sandbox.cgroups`), sets oom_score_adj 1000 and the rlimits
   (RLIMIT_DATA, RLIMIT_CPU as the process's CPU budget (a game's: `arena.limits`),
   RLIMIT_FSIZE, RLIMIT_NOFILE, no core files): rlimits are set in the child without `preexec_fn`, which can
   deadlock a threaded parent.
2. When it can (root): the shim unshares the network, PID, mount, IPC and UTS
   namespaces, forks their init (PID 1) and waits for it. The init, still root, builds
   the bot's view of the file system in its own mount namespace (`mount_steps`):
   - every mount read-only for the bot;
   - a fresh /proc, which shows only the bot's own namespace (no other bot, no host
     process: no /proc/<pid>/cwd or /proc/<pid>/root leads out);
   - a private tmpfs on /tmp and on /dev/shm (mode 1777, `Limits.file_size_mb` each,
     like the Docker sandbox's /tmp), gone with the bot;
   - an empty read-only tmpfs over /run (the Docker, containerd, D-Bus and every other
     daemon's socket), over every path given to `LocalSandbox.hide_paths` (the other
     bots, the registry, the run's output folder), over the bot folder's parent (the
     bots beside it) and over the highest folder on the way to the bot's folder that
     user nobody may not enter (/root); where one of them holds the bot's folder, the
     way to it is rebuilt inside and the folder is bound back, read-only.
   The init then forks the bot, which becomes user nobody (65534, no groups) when
   arena runs as root, joins a session keyring of its own, sets no_new_privs (no setuid
   program gives anything back), installs the seccomp filter that refuses the kernel
   keyring's calls (`arena.sandbox.keyring`; also without namespaces) and execs. The init reaps orphans and reports the bot's exit status on a private pipe;
   when it goes, the kernel kills everything in the namespace, `setsid` escapees
   included. Without root (or namespaces) the shim execs the bot itself, as nobody if
   arena is root, and the notes say what is missing.
3. Only the bot holds its stdin and stdout pipes (the shim and the init have
   /dev/null), so a bot that closes either one but runs on is seen at once (CRASH).
4. The process runs in its own session; at the end the group gets SIGKILL, the cgroup
   is emptied with SIGKILL and removed.
5. Warm slots (`start(..., slot=)`): the process the slot's next game will need is started
   ahead of need, in the background, exactly as above (its own cgroup, namespaces, view,
   limits). It has seen nothing: it runs, reads its stdin and waits; nothing is written to
   it until its game's `hello`. A start on the slot hands it out and starts the next one.
   The clocks are fair: the start-up limit counts from the moment the game asks (the
   caller's clock starts when `start` returns), and a spare that ended while it waited is
   closed and replaced by a cold start, never handed out. A spare made before
   `hide_paths` changed, or for another bot or limits, is thrown away. `close()` kills the
   spares (at the end of a run, on Ctrl-C, at exit).

What that guarantees. Everywhere: the limits (time, CPU, memory, processes, output, file
size, open files), that nothing the bot starts outlives it (with a cgroup or the
namespaces), and that it can neither store nor read a key in the kernel keyring (the
one kernel store no namespace separates: keys would reach the next game). As root with namespaces, also: the bot is nobody and cannot gain
privileges; it cannot write anywhere but its own /tmp and /dev/shm; it has no network
(a down loopback); it sees no process but its own, no daemon socket, no hidden path,
no folder beside its own and nothing under a folder closed to nobody. As root without
namespaces: nobody and no_new_privs only (a bot folder nobody cannot reach is refused).
As a normal user: the bot has your rights, your files and your network.
What it does not: the bot still reads what nobody may read on the host (/etc, /usr,
world-readable homes); it shares the kernel with no other system-call filter, and it
shares uid 65534 with other local bots and the Docker sandbox's, so per-user counters
(inotify instances, pipe buffer pages, pending signals, message queue bytes) are common
to every bot alive at once: a covert channel between running bots, not a store, unless
`ARENA_LOCAL_UIDS` gives each bot process a uid of its own (`arena.sandbox.uids`).
Untrusted code belongs in the Docker sandbox.
"""

from __future__ import annotations

import atexit
import json
import os
import platform
import select
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from arena.sandbox.access import NOBODY, check_readable_by_nobody, closed_ancestor
from arena.sandbox.base import (
    BotFault,
    BotProcess,
    BotSpec,
    Limits,
    Reason,
    Sandbox,
    SandboxError,
)
from arena.sandbox.cgroups import BotCgroup, remove_leftovers
from arena.sandbox.common import LineBuffer, StderrLog, fault_for_exit, input_wait_s
from arena.sandbox.keyring import clear_user_keyrings, filter_program, keyctl_number
from arena.sandbox.uids import UidLease, configured_range
from arena.terminal import wrapped

WARNING = (
    "arena: the local sandbox does not isolate untrusted code (it limits time, memory, "
    "processes and output, nothing more); run bots you do not trust with --sandbox docker"
)

# New network, PID, mount, IPC and UTS namespaces (CLONE_NEW* of <linux/sched.h>).
NAMESPACES = 0x40000000 | 0x20000000 | 0x00020000 | 0x08000000 | 0x04000000
SCRATCH = ("/tmp", "/dev/shm")  # private and writable for each bot
KEYRING_FILTER = filter_program()  # the seccomp filter closing the kernel keyring (None: unknown machine)
DAEMONS = ("/run", "/var/run")  # where daemons keep their sockets (/var/run is mostly a link)
COVER = "size=64k,mode=755"  # an empty cover holds at most the folders rebuilt inside it
BOT_NAMESPACE_PID = 2  # the init forks nothing before the bot

# The Popen'd child. Joins the cgroup and sets the limits; then either becomes the bot
# (no namespaces) or creates the namespaces and forks their init, which builds the bot's
# file system view and forks the bot. Only the bot gets its stdin/stdout pipes.
_SHIM = r"""
import json, os, re, resource, signal, sys
plan = json.loads(sys.argv[1])
bot_in, bot_out, status_fd = plan["stdin_fd"], plan["stdout_fd"], plan["status_fd"]
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 32, 4096, 16384, 1 << 18, 1 << 21
KEPT = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048  # the same bits in statvfs's f_flag


def fail(code, text):
    os.write(2, ("arena: %s\n" % text).encode())
    os._exit(code)


def load_libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)


def run(argv):
    # Like execvp, but a folder of PATH this user may not enter hides what is in it (as
    # if absent) instead of making "permission denied" the answer.
    name = argv[0]
    paths = [name] if "/" in name else [
        os.path.join(folder or ".", name) for folder in os.environ.get("PATH", os.defpath).split(":")
    ]
    problem, closed = None, False
    for path in paths:
        try:
            os.execv(path, argv)
        except OSError as error:
            if len(paths) == 1 or os.path.exists(path):
                problem = problem or error
            elif isinstance(error, PermissionError):
                closed = True
    words = problem.strerror if problem else "No such file or directory"
    if plan["user"] is not None and isinstance(problem, PermissionError):
        words += (" (bots run as user nobody when arena runs as root: the program and every"
                  " folder on the way to it must be open to others)")
    elif plan["user"] is not None and closed and not problem:
        words = ("not found in the folders of PATH open to user nobody, who runs the bots"
                 " when arena runs as root")
    fail(127, "cannot run %r: %s" % (name, words))


def become_bot():
    os.dup2(bot_in, 0)
    os.dup2(bot_out, 1)
    for fd in (bot_in, bot_out, status_fd):
        if fd is not None:
            os.close(fd)
    ctypes, libc = load_libc()
    if plan["user"] is not None:
        os.setgroups([])
        os.setgid(plan["user"])
        os.setuid(plan["user"])
    keyctl, program = plan["keyctl"], plan["syscall_filter"]
    if keyctl is not None:
        # A fresh session keyring: none of arena's, nor nobody's shared one (best effort:
        # the filter below closes the keyring anyway).
        libc.syscall(keyctl, 1, None)  # KEYCTL_JOIN_SESSION_KEYRING, no name
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: setuid programs give nothing
        fail(124, "cannot set no_new_privs: %s" % os.strerror(ctypes.get_errno()))
    if program is not None:
        # add_key, request_key and keyctl refused (arena.sandbox.keyring)
        class Instruction(ctypes.Structure):
            _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                        ("k", ctypes.c_uint32)]

        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

        code = (Instruction * len(program))(*[Instruction(*step) for step in program])
        if libc.prctl(22, 2, ctypes.byref(Program(len(program), code)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
            fail(124, "cannot install the system-call filter that closes the kernel keyring: %s"
                 % os.strerror(ctypes.get_errno()))
    if plan["argv"] is None:
        os._exit(0)  # the probe: everything worked
    run(plan["argv"])


def build_view(libc, ctypes):
    # In the new mount namespace, as root: the steps of `mount_steps`.
    def mount(source, target, kind, flags, data=None):
        if libc.mount(source and source.encode(), target.encode(), kind and kind.encode(),
                      flags, data and data.encode()) != 0:
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error), target)

    def readonly(target):
        # Only this mount's flag: the file system stays writable elsewhere. nosuid and the
        # like are kept (a remount without them would clear them).
        flags = os.statvfs(target).f_flag
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | (flags & KEPT)
              | (MS_RELATIME if flags & 4096 else 0))

    folder = plan["folder"]
    keep = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    os.umask(0o022)
    for step in plan["mounts"]:
        action, args = step[0], step[1:]
        if action == "private":
            mount("none", "/", None, MS_REC | MS_PRIVATE)
        elif action == "readonly_all":
            with open("/proc/self/mountinfo") as table:
                points = [line.split()[4] for line in table]
            for point in points:
                point = re.sub(r"\\([0-7]{3})", lambda code: chr(int(code.group(1), 8)), point)  # \040: a space
                try:
                    readonly(point)
                except OSError as error:
                    # A mount hidden under a later one (or a FUSE mount closed to root)
                    # cannot be reached, so it cannot be written either.
                    if point == "/" or error.errno not in (2, 13, 20, 22):
                        raise
        elif action == "proc":
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif action == "tmpfs":
            target, data, read_only = args
            try:
                mount("tmpfs", target, "tmpfs",
                      MS_NOSUID | MS_NODEV | MS_NOEXEC | (MS_RDONLY if read_only else 0), data)
            except FileNotFoundError:
                pass  # gone since arena looked: nothing left to hide
        elif action == "bind_folder":
            os.makedirs(folder, mode=0o755, exist_ok=True)
            mount("/proc/self/fd/%d" % keep, folder, None, MS_BIND | MS_REC)
            readonly(folder)
        elif action == "readonly":
            readonly(args[0])
        elif action == "null":
            mount("/dev/null", args[0], None, MS_BIND)
            readonly(args[0])
    os.close(keep)
    os.chdir(folder)


try:
    for procs in plan["cgroup_procs"]:
        with open(procs, "w") as sink:
            sink.write(str(os.getpid()))
except OSError as error:
    fail(121, "cannot join the cgroup: %s" % error)
try:
    with open("/proc/self/oom_score_adj", "w") as sink:
        sink.write("1000")
except OSError:
    pass
for name, (soft, hard) in plan["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (soft, hard))
if not plan["isolate"]:
    become_bot()

ctypes, libc = load_libc()
if libc.unshare(plan["namespaces"]) != 0:
    fail(121, "cannot create the bot's namespaces: %s" % os.strerror(ctypes.get_errno()))
init = os.fork()
if init:
    # Outside the new PID namespace, holding none of the bot's pipes: it lives as long as
    # the init and ends as the init did (arena waits for this process).
    for fd in (bot_in, bot_out, status_fd):
        os.close(fd)
    status = os.waitpid(init, 0)[1]
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) & 255)

# The init: PID 1 of the bot's namespace. When the shim is killed, so is the init, and
# with it the whole namespace.
libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
try:
    build_view(libc, ctypes)
except OSError as error:
    fail(122, "cannot build the bot's view of the file system: %s" % error)
bot = os.fork()
if bot == 0:
    become_bot()
for fd in (bot_in, bot_out, 0, 1, 2):
    os.close(fd)
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        status = 0
        break
    if pid == bot:
        break
os.write(status_fd, b"%d\n" % status)
os._exit(0)
"""

_warned = False


def warn_not_isolated(say: bool = True) -> None:
    """Say, once per process, that the local sandbox does not isolate untrusted code;
    `say=False` only notes it as said (a runner's worker processes: the runner said it)."""
    global _warned
    if _warned:
        return
    _warned = True
    if say:
        print(wrapped(WARNING), file=sys.stderr)
_noted: set[str] = set()  # limits this machine cannot enforce, each said once
_unshare_works: bool | None = None
_open_sandboxes: weakref.WeakSet = weakref.WeakSet()  # closed at exit: no spare outlives arena
SPARE_STARTERS = 2  # threads that start spares; a start is a fork and exec, the rest is the child's


@atexit.register
def _close_all() -> None:
    for sandbox in list(_open_sandboxes):
        sandbox.close()


def unshare_works() -> bool:
    """True if the shim can create the bot's namespaces and build its view here (probed once)."""
    global _unshare_works
    if _unshare_works is None:
        _unshare_works = _probe()
    return _unshare_works


def _probe() -> bool:
    """Run the shim's whole isolated path once, with a bot that only exits."""
    ends = [*os.pipe(), *os.pipe()]
    plan = {
        "cgroup_procs": [],
        "rlimits": {},
        "isolate": True,
        "namespaces": NAMESPACES,
        "folder": "/",
        "mounts": mount_steps(Path("/"), [], [], 1),
        "user": NOBODY if os.geteuid() == 0 else None,
        "keyctl": None,
        "syscall_filter": None,  # the namespaces alone: the filter is not theirs to decide
        "argv": None,
        "stdin_fd": ends[0],
        "stdout_fd": ends[3],
        "status_fd": ends[1],
    }
    try:
        probe = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _SHIM, json.dumps(plan)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=ends,
            timeout=10,
        )
        return probe.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        for fd in ends:
            os.close(fd)


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """The paths not inside another one of them, shortest first."""
    kept: list[Path] = []
    for path in sorted(set(paths), key=lambda p: (len(p.parts), str(p))):
        if not any(path.is_relative_to(outer) for outer in kept):
            kept.append(path)
    return kept


def mount_steps(folder: Path, covers: Iterable[Path], scratch: Iterable[Path], scratch_mb: int,
                files: Iterable[Path] = ()) -> list[list]:
    """The init's steps that build the bot's view: `covers` get an empty read-only tmpfs,
    `scratch` a private writable one of `scratch_mb` MB, `files` /dev/null.

    Only the outermost of nested paths is mounted (a cover hides what is below it); the
    bot's own folder is never covered: inside a cover the way to it is rebuilt and the
    folder bound back, read-only. A path inside the bot's folder is covered after that.
    """
    kinds = {path: "cover" for path in covers}
    kinds.update({path: "scratch" for path in scratch})  # a private /tmp wins over a cover
    kinds.pop(Path("/"), None)
    kinds.pop(folder, None)
    data = {"cover": COVER, "scratch": f"size={scratch_mb}m,mode=1777"}
    steps: list[list] = [["private"], ["readonly_all"], ["proc"]]
    outer = _outermost(path for path in kinds if not path.is_relative_to(folder))
    inner = _outermost(path for path in kinds if path.is_relative_to(folder))
    for path in outer:
        if folder.is_relative_to(path):
            steps += [["tmpfs", str(path), data[kinds[path]], False], ["bind_folder"]]
            if kinds[path] == "cover":
                steps.append(["readonly", str(path)])
        else:
            steps.append(["tmpfs", str(path), data[kinds[path]], kinds[path] == "cover"])
    steps += [["tmpfs", str(path), data[kinds[path]], kinds[path] == "cover"] for path in inner]
    covered = outer + inner
    steps += [
        ["null", str(path)]
        for path in sorted(set(files))
        if path != folder and not any(path.is_relative_to(cover) for cover in covered)
    ]
    return steps


class LocalSandbox(Sandbox):
    """Runs bots as local child processes with rlimits, a cgroup and namespaces when possible."""

    name = "local"

    def __init__(
        self,
        isolate: bool = True,
        use_cgroup: bool = True,
        hide_siblings: bool = True,
        warn: bool = True,
        python: str | None = None,
        hide: Iterable[str | Path] = (),
    ):
        """`hide`: paths no bot may see (see `hide_paths`); `hide_siblings`: nor the folders
        beside its own."""
        self.isolate = isolate and unshare_works()
        self.use_cgroup = use_cgroup
        self.hide_siblings = hide_siblings
        self.warn = warn
        self.python = python or sys.executable
        # Root's powers are never handed to a bot: as root, bots run as nobody.
        self.user = NOBODY if os.geteuid() == 0 else None
        self.notes: list[str] = []
        self._hidden: set[Path] = set()
        self._keyrings_cleared = False
        # A uid of its own per bot process (ARENA_LOCAL_UIDS), as root with namespaces only
        # (without them a setsid child could outlive its bot and meet the uid's next one).
        self.uids = configured_range() if self.user is not None and self.isolate else None
        self._readable: set[Path] = set()  # bot folders already checked for nobody
        self._lock = threading.Lock()
        # Warm slots: slot -> (what the spare was made for, its start). `_generation` moves
        # on with every hide_paths and close, so a spare made before is never handed out.
        self._spares: dict[str, tuple[tuple, Future]] = {}
        self._generation = 0
        self._starter: ThreadPoolExecutor | None = None
        self.hide_paths(hide)
        if KEYRING_FILTER is None:
            self.notes.append(
                f"no system-call filter for {platform.machine()}: bots can reach the kernel "
                "keyring (and through it, each other)"
            )
        if not self.isolate:
            self.notes.append(
                "no namespaces (they need root): bots have the network, see every process "
                "and the whole file system (other bots, /tmp) and background children may "
                "survive a setsid"
            )

    def hide_paths(self, paths: Iterable[str | Path]) -> None:
        """Hide these folders (or files) from every bot started from now on; each bot still
        sees its own folder when it lies inside one. They add up; only with namespaces."""
        resolved = {Path(path).resolve() for path in paths}
        if Path("/") in resolved:
            raise ValueError("cannot hide / from the bots: name the folders to hide")
        with self._lock:
            if resolved <= self._hidden:
                return
            self._hidden |= resolved
        self._drop_spares()  # they were started with the old view

    @property
    def hidden(self) -> frozenset[Path]:
        """The paths hidden from every bot (resolved)."""
        with self._lock:
            return frozenset(self._hidden)

    def start(self, bot: BotSpec, limits: Limits, *, slot: str | None = None) -> LocalBotProcess:
        """Start the bot's command in its folder; SandboxError if the machinery fails.

        With a `slot`, the process started ahead of need for it (if any, still waiting, and
        made for this bot, these limits and the current hidden paths) is handed out, and the
        slot's next process is started in the background."""
        if self.warn:
            warn_not_isolated()
        if slot is None:
            return self._announced(LocalBotProcess(self, bot, limits))
        with self._lock:
            made_for = (bot, limits, self._generation)
            spare = self._spares.pop(slot, None)
        process = None
        if spare is not None:
            process = self._take(spare, made_for)
        if process is None:
            process = LocalBotProcess(self, bot, limits)
        self._prepare(slot, made_for)
        return self._announced(process)

    def _announced(self, process: LocalBotProcess) -> LocalBotProcess:
        """The process, once what this machine cannot enforce for it has been said (once each)."""
        if self.warn:
            for note in process.notes:
                if note not in _noted:
                    _noted.add(note)
                    print(wrapped(f"arena: local sandbox: {note}"), file=sys.stderr)
        return process

    @staticmethod
    def _take(spare: tuple[tuple, Future], made_for: tuple) -> LocalBotProcess | None:
        """The spare's process if it can be handed out; else it is closed and None."""
        wanted, started = spare
        try:
            process = started.result()  # still starting: waiting for it is no worse than a cold start
        except Exception:  # noqa: BLE001 - a cold start meets the same failure and reports it
            return None
        if wanted == made_for and process.waiting():
            return process
        process.close()  # made for something else, or ended while it waited: never charged
        return None

    def _prepare(self, slot: str, made_for: tuple) -> None:
        """Start the slot's next process in the background (unless the spares were dropped since)."""
        bot, limits, generation = made_for
        with self._lock:
            if generation != self._generation:
                return
            if self._starter is None:
                self._starter = ThreadPoolExecutor(SPARE_STARTERS, thread_name_prefix="arena-warm")
                _open_sandboxes.add(self)
            old = self._spares.pop(slot, None)
            self._spares[slot] = (made_for, self._starter.submit(LocalBotProcess, self, bot, limits))
        if old is not None:
            self._discard(old)

    @staticmethod
    def _discard(spare: tuple[tuple, Future]) -> None:
        try:
            spare[1].result().close()
        except Exception:  # noqa: BLE001, S110 - a spare that failed to start holds nothing
            pass

    def _drop_spares(self) -> None:
        with self._lock:
            self._generation += 1
            spares, self._spares = list(self._spares.values()), {}
        for spare in spares:
            self._discard(spare)

    def close(self) -> None:
        """Kill every spare process (end of a run, Ctrl-C, exit); the sandbox stays usable."""
        self._drop_spares()

    def spares(self) -> dict[str, LocalBotProcess]:
        """Slot -> its spare process, once started (for tests and diagnostics)."""
        with self._lock:
            spares = dict(self._spares)
        return {slot: started.result() for slot, (_, started) in spares.items() if not started.exception()}

    def cleanup_leftovers(self) -> int:
        """Remove cgroups (and their processes) left by arena runs that were killed, and
        empty the bots' user's keyrings (what bots of an arena without the keyring filter
        may have left there)."""
        if self.user is not None and not self._keyrings_cleared:
            self._keyrings_cleared = clear_user_keyrings(self.user, self.python)
        return remove_leftovers()

    def view_of(self, folder: Path, limits: Limits) -> list[list]:
        """The mount steps for a bot in `folder` (resolved); SandboxError if nobody cannot use it."""
        closed = None
        if self.user is not None:
            closed = closed_ancestor(folder)
            if folder not in self._readable:
                check_readable_by_nobody(folder, "who runs the bots when arena runs as root")
                self._readable.add(folder)
            if closed is not None and not self.isolate:
                raise SandboxError(
                    f"the bot folder {folder} cannot be reached by user nobody (uid {NOBODY}), who "
                    f"runs the bots when arena runs as root: {closed} is closed to others, and "
                    "without namespaces it cannot be covered; move the bot folder elsewhere"
                )
        if not self.isolate:
            return []
        hidden = [path for path in self.hidden if path.exists()]
        covers = [path for path in hidden if path.is_dir()]
        covers += [Path(path).resolve() for path in DAEMONS if Path(path).is_dir()]
        if self.hide_siblings:
            covers.append(folder.parent)
        if closed is not None:
            covers.append(closed)
        scratch = [Path(path).resolve() for path in SCRATCH if Path(path).is_dir()]
        files = [path for path in hidden if not path.is_dir()]
        return mount_steps(folder, covers, scratch, limits.file_size_mb, files)


def _environment(bot: BotSpec, isolated: bool) -> dict[str, str]:
    # A small, predictable environment: the bot must not depend on the organiser's.
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(bot.folder),
        # With namespaces /tmp is the bot's own; the organiser's TMPDIR may be hidden.
        "TMPDIR": "/tmp" if isolated else os.environ.get("TMPDIR", "/tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    return env


def _children(pid: int) -> list[int]:
    """The child processes of a single-threaded process (empty when it is gone)."""
    try:
        return [int(word) for word in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _namespace_pid(pid: int) -> int | None:
    """The pid of process `pid` in its own (innermost) PID namespace."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


PF_EXITING = 0x4  # in /proc/<pid>/stat's flags: the process is on its way out


def _running(pid: int) -> bool:
    """True if process `pid` exists and is neither exiting nor a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] not in ("Z", "X", "x") and not int(fields[6]) & PF_EXITING


class LocalBotProcess(BotProcess):
    """One bot running as a local process; see the module docstring for how."""

    def __init__(self, sandbox: LocalSandbox, bot: BotSpec, limits: Limits):
        self.bot = bot
        self.limits = limits
        self.notes = list(sandbox.notes)
        self._buffer = LineBuffer.from_limits(limits)
        self._log = StderrLog(limits.stderr_keep_bytes)
        self._fault: BotFault | None = None
        self._closed = False
        self._close_reason: Reason | None = None
        folder = Path(bot.folder).resolve()
        mounts = sandbox.view_of(folder, limits)  # before anything is made that must be undone
        self._lease = UidLease(sandbox.uids) if sandbox.uids is not None else None
        self.user = self._lease.uid if self._lease is not None else sandbox.user
        self.cgroup: BotCgroup | None = None
        if sandbox.use_cgroup:
            self.cgroup, cgroup_notes = BotCgroup.create(limits)
            self.notes += cgroup_notes
        memory = limits.memory_mb << 20
        # With a memory cgroup the kernel's OOM kill is the limit (and is reported as
        # such); RLIMIT_DATA stays as a looser backstop. Without one, RLIMIT_DATA is it.
        data_limit = memory * 2 if self.cgroup and self.cgroup.memory_dir else memory
        # The bot's ends of its pipes go to the bot alone (see the module docstring, 3.).
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        status_read, status_write = os.pipe() if sandbox.isolate else (None, None)
        theirs = [fd for fd in (stdin_read, stdout_write, status_write) if fd is not None]
        plan = {
            "cgroup_procs": self.cgroup.procs_files if self.cgroup else [],
            # (soft, hard). CPU: SIGXCPU at the soft limit (reported as TIMEOUT), and
            # SIGKILL a second later if the bot ignores it.
            "rlimits": {
                "RLIMIT_DATA": (data_limit, data_limit),
                "RLIMIT_CPU": (int(limits.cpu_s), int(limits.cpu_s) + 1),
                "RLIMIT_FSIZE": (limits.file_size_mb << 20, limits.file_size_mb << 20),
                "RLIMIT_NOFILE": (limits.open_files, limits.open_files),
                "RLIMIT_CORE": (0, 0),
            },
            "isolate": sandbox.isolate,
            "namespaces": NAMESPACES,
            "folder": str(folder),
            "mounts": mounts,
            "user": self.user,
            "keyctl": keyctl_number(),
            "syscall_filter": KEYRING_FILTER,
            "argv": list(bot.command),
            "stdin_fd": stdin_read,
            "stdout_fd": stdout_write,
            "status_fd": status_write,
        }
        try:
            self.process = subprocess.Popen(
                [sandbox.python, "-I", "-S", "-c", _SHIM, json.dumps(plan)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd=folder,
                env=_environment(bot, sandbox.isolate),
                start_new_session=True,
                pass_fds=theirs,
                bufsize=0,
            )
        except OSError as error:
            if self.cgroup:
                self.cgroup.remove()
            if self._lease is not None:
                self._lease.release()
            for fd in (*theirs, stdin_write, stdout_read, status_read):
                if fd is not None:
                    os.close(fd)
            raise SandboxError(f"cannot start the local bot {bot.name!r}: {error}") from error
        for fd in theirs:
            os.close(fd)
        self._status_fd = status_read
        self._isolated = sandbox.isolate
        self._stdin = stdin_write
        self._stdout = stdout_read
        os.set_blocking(self._stdin, False)
        self._poll = select.poll()
        self._poll.register(self._stdout, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._stderr = self.process.stderr.fileno()
        os.set_blocking(self._stderr, False)
        self._stderr_lock = threading.Lock()  # a read and its append are one step (in order)
        self._stderr_open = True
        self._drain = threading.Thread(
            target=self._drain_stderr, name=f"stderr-{bot.name}", daemon=True
        )
        self._drain.start()

    # -- the bot's log -------------------------------------------------------------------

    def _drain_stderr(self) -> None:
        # Reads all the time so a flooding bot never blocks on a full pipe (which would
        # look like a time-out); StderrLog keeps only the capped part.
        waiting = select.poll()
        waiting.register(self._stderr, select.POLLIN | select.POLLHUP | select.POLLERR)
        while self._stderr_open:
            try:
                waiting.poll()
            except OSError:
                return
            self._read_stderr()

    def _read_stderr(self) -> None:
        """Take in whatever the bot has written to stderr so far (without waiting)."""
        with self._stderr_lock:
            while self._stderr_open:
                try:
                    chunk = os.read(self._stderr, 65536)
                except BlockingIOError:
                    return
                except OSError:
                    chunk = b""
                if not chunk:
                    self._stderr_open = False
                    return
                self._log.append(chunk)

    def stderr_text(self) -> str:
        """The kept part of the bot's stderr, up to what it has written by now (a process that
        lives on between games is asked for its log while it runs)."""
        self._read_stderr()
        return self._log.text()

    def stderr_mark(self) -> int:
        """Bytes of stderr read so far."""
        return self._log.received

    def stderr_since(self, mark: int) -> str:
        """What the bot wrote to stderr after `mark`: the pipe is read to its current end
        first, so a line written before the bot's answer is never left for the next one."""
        self._read_stderr()
        return self._log.since(mark)

    # -- talking -------------------------------------------------------------------------

    def send_line(self, line: bytes) -> None:
        """Write one line to the bot; TIMEOUT if it stops reading, CRASH if it is gone."""
        if self._fault:
            raise self._fault
        self._buffer.start_decision()
        view = memoryview(line + b"\n")
        # A bot that never reads its input must not block arena: a bounded wait.
        deadline = time.monotonic() + input_wait_s(self.limits)
        while view:
            try:
                written = os.write(self._stdin, view)
                view = view[written:]
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._record(BotFault(Reason.TIMEOUT, "stopped reading its input"))
                select.select([], [self._stdin], [], remaining)
            except (BrokenPipeError, ConnectionResetError):
                raise self._record(self._ended("stdin"))

    def receive_line(self, timeout_s: float) -> bytes:
        """The next line of the bot's stdout, waiting at most `timeout_s` seconds."""
        if self._fault:
            raise self._fault
        line = self._buffer.next_line()
        if line is not None:
            return line
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            remaining_ms = max(0, int((deadline - time.monotonic()) * 1000 + 0.999))
            if not self._poll.poll(remaining_ms):
                raise BotFault(Reason.TIMEOUT, f"gave no answer within {timeout_s:.3g} s")
            try:
                chunk = os.read(self._stdout, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                raise self._record(self._ended("stdout"))
            try:
                self._buffer.feed(chunk)
            except BotFault as fault:
                raise self._record(fault) from None
            line = self._buffer.next_line()
            if line is not None:
                return line

    def _record(self, fault: BotFault) -> BotFault:
        self._fault = fault
        return fault

    def waiting(self) -> bool:
        """True if the process is still there to be talked to: not ended, stdout still open.

        For a process started ahead of need: one that ended while it waited is replaced."""
        if self._closed or self._fault or self.process.poll() is not None:
            return False
        if self._isolated and select.select([self._status_fd], [], [], 0)[0]:
            return False  # the bot ended; its init reported it
        return not any(event & (select.POLLHUP | select.POLLERR) for _, event in self._poll.poll(0))

    def cpu_time_s(self) -> float | None:
        """CPU seconds of every process of the bot so far (its cgroup's accounting, which
        counts the exec shim's few milliseconds too); without one, the bot's own process
        and the children it waited for (/proc/PID/stat)."""
        if self.cgroup is not None:
            used = self.cgroup.cpu_time_s()
            if used is not None:
                return used
        pid = self._bot_pid()
        if pid is None:
            return None
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            return None
        return ticks / os.sysconf("SC_CLK_TCK")

    # -- the end -------------------------------------------------------------------------

    def _ended(self, pipe: str) -> BotFault:
        """The fault for a bot whose `pipe` ("stdin" or "stdout") ended.

        A bot that exits closes its pipes on the way out and its status follows within
        moments: up to 2 s are allowed for it. A bot still running (not exiting) closed
        the pipe itself: a moment (0.1 s, for code that closes and then exits) and it is
        charged with that at once, not after 2 s.
        """
        if not self._exits_within(0.1 if self._bot_is_running() else 2.0):
            self._kill()
            return BotFault(Reason.CRASH, f"closed its {pipe} but kept running")
        return fault_for_exit(self._exit_status(), self.limits, self._out_of_memory())

    def _bot_pid(self) -> int | None:
        """The host pid of the bot's own process (not the shim's, nor the init's), or None."""
        if not self._isolated:
            return self.process.pid if self.process.returncode is None else None
        for init in _children(self.process.pid):
            for pid in _children(init):
                if _namespace_pid(pid) == BOT_NAMESPACE_PID:
                    return pid
        return None

    def _bot_is_running(self) -> bool:
        """True if the bot's own process is known to run and not to be on its way out."""
        pid = self._bot_pid()
        return pid is not None and _running(pid)

    def _exits_within(self, wait_s: float) -> bool:
        """True if the bot's exit is known (its status can be read) within `wait_s` seconds."""
        if self._isolated:
            ready, _, _ = select.select([self._status_fd], [], [], wait_s)
            return bool(ready)
        try:
            self.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def _exit_status(self) -> int | None:
        """The bot's own status as a Popen returncode (negative = signal), or None."""
        if self._status_fd is None:
            return self.process.returncode
        ready, _, _ = select.select([self._status_fd], [], [], 1.0)
        text = ""
        if ready:
            try:
                text = os.read(self._status_fd, 64).decode().strip()
            except OSError:
                pass
        if not text:
            # The init itself died (killed by us, or by the kernel for memory); the shim
            # ends with the same signal.
            try:
                return self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                return None
        status = int(text)
        if os.WIFSIGNALED(status):
            return -os.WTERMSIG(status)
        return os.WEXITSTATUS(status)

    def _out_of_memory(self) -> bool:
        if self.cgroup and self.cgroup.memory_dir is not None:
            return self.cgroup.oom_kills() > 0
        # No memory cgroup: the limit is RLIMIT_DATA, whose failure shows as an allocation
        # error in the bot's log. An inference, documented as such.
        tail = self._log.text()[-2000:].lower()
        return any(
            words in tail
            for words in ("memoryerror", "cannot allocate memory", "out of memory", "bad_alloc")
        )

    def _kill(self) -> None:
        try:
            os.killpg(self.process.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup:
            self.cgroup.kill_all()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def close(self) -> Reason | None:
        """Kill the bot and everything it started; OUT_OF_MEMORY if it was killed for memory."""
        if self._closed:
            return self._close_reason
        self._closed = True
        self._kill()
        if self._out_of_memory() and (self.cgroup and self.cgroup.memory_dir is not None):
            self._close_reason = Reason.OUT_OF_MEMORY
        if self.cgroup:
            self.cgroup.remove()
        if self._lease is not None:
            self._lease.release()  # every process of the uid is gone: the next bot may have it
        self._drain.join(timeout=1.0)
        os.close(self._stdin)
        os.close(self._stdout)
        if self._status_fd is not None:
            os.close(self._status_fd)
            self._status_fd = None
        return self._close_reason

    @property
    def pid(self) -> int:
        """The pid of the started process: the shim (the bot itself without namespaces)."""
        return self.process.pid
