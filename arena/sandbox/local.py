"""The `local` sandbox: a bot as a child process with limits. NOT a security boundary.

How a bot is started (its cost is measured in docs/performance.md):
1. A small exec shim (`local_shim.py`, a program of its own run by arena's Python with
   `-I -S`) joins the bot's cgroup (pids.max and a
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
     user nobody may not enter (/root);
   - at the bot folder's path, read-only, a private copy of the folder made for this
     process alone (`arena.sandbox.copies`, on the host's /dev/shm, removed with the
     process): the page cache of its files is its own, so no value the bot sets there
     (which pages are cached) reaches another process; where a cover holds the folder,
     the way to it is rebuilt inside.
   The init then forks the bot, which becomes a uid of its own when arena runs as root
   (leased from arena's range, `arena.sandbox.uids`, no group; nobody, 65534, with
   `ARENA_LOCAL_UIDS=nobody` or where no range can be leased), joins a session keyring of its own, sets no_new_privs (no setuid
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
world-readable homes), and shares their page cache with every process: a page of such a
file it reads for the first time stays cached for a later reader to find
(preadv2(RWF_NOWAIT)), and posix_fadvise drops one (its own folder is a private copy;
these files are not); it shares the kernel with no other system-call filter. Its uid is
its own while it runs (no other bot, container or host process has it), so per-user
counters (inotify instances, pipe buffer pages, pending signals, message queue bytes)
are no channel between running bots; with `ARENA_LOCAL_UIDS=nobody` every bot is nobody
and they are.
Untrusted code belongs in the Docker sandbox.

Here: `LocalSandbox` (starts, warm spares, the view of each bot: `mount_steps`); the
running bot is `arena.sandbox.local_process.LocalBotProcess`, its shim `local_shim.py`.
"""

from __future__ import annotations

import atexit
import json
import os
import platform
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox.access import NOBODY, check_readable_by_nobody, closed_ancestor
from arena.sandbox.base import BotSpec, Limits, Sandbox
from arena.sandbox.binary import program_problem
from arena.sandbox.cgroups import remove_leftovers
from arena.sandbox.copies import remove_leftovers as remove_copies
from arena.sandbox.keyring import clear_user_keyrings
from arena.sandbox.local_process import (  # noqa: F401
    KEYRING_FILTER,
    NAMESPACES,
    SHIM,
    LocalBotProcess,
)
from arena.sandbox.uids import configured_range
from arena.terminal import wrapped

WARNING = (
    "arena: the local sandbox does not isolate untrusted code (it limits time, memory, "
    "processes and output, nothing more); run bots you do not trust with --sandbox docker"
)

SCRATCH = ("/tmp", "/dev/shm")  # private and writable for each bot
DAEMONS = ("/run", "/var/run")  # where daemons keep their sockets (/var/run is mostly a link)
COVER = "size=64k,mode=755"  # an empty cover holds at most the folders rebuilt inside it

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
            [sys.executable, "-I", "-S", str(SHIM), json.dumps(plan)],
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
                files: Iterable[Path] = (), writable: Iterable[Path] = ()) -> list[list]:
    """The init's steps that build the bot's view: `covers` get an empty read-only tmpfs,
    `scratch` a private writable one of `scratch_mb` MB, `files` /dev/null.

    Only the outermost of nested paths is mounted (a cover hides what is below it). The bot's
    folder is never covered: its source (the bot process's private copy, or the folder
    itself for a build) is bound at its path, read-only, inside a cover after the way to it
    is rebuilt; then each of `writable` (paths inside the folder: a build's build/) is bound
    back writable. A path inside the bot's folder is covered after that.
    """
    kinds = {path: "cover" for path in covers}
    kinds.update({path: "scratch" for path in scratch})  # a private /tmp wins over a cover
    kinds.pop(Path("/"), None)
    kinds.pop(folder, None)
    data = {"cover": COVER, "scratch": f"size={scratch_mb}m,mode=1777"}
    steps: list[list] = [["private"], ["readonly_all"], ["proc"]]
    outer = _outermost(path for path in kinds if not path.is_relative_to(folder))
    inner = _outermost(path for path in kinds if path.is_relative_to(folder))
    own = [["bind_folder"], *(["bind_writable", str(path)] for path in sorted(set(writable)))]
    bound = folder == Path("/")  # the probe's: nothing to bind
    for path in outer:
        if folder.is_relative_to(path):
            steps += [["tmpfs", str(path), data[kinds[path]], False], *own]
            bound = True
            if kinds[path] == "cover":
                steps.append(["readonly", str(path)])
        else:
            steps.append(["tmpfs", str(path), data[kinds[path]], kinds[path] == "cover"])
    if not bound:
        steps += own
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
        problem = program_problem(bot.folder, bot.command)
        if problem:  # one line saying what to do, not the shim's "Exec format error"
            raise BotFault(Reason.CRASH, problem)
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
        """Remove cgroups (and their processes) and folder copies left by arena runs that were
        killed, and empty the bots' user's keyrings (what bots of an arena without the keyring filter
        may have left there)."""
        if self.user is not None and not self._keyrings_cleared:
            self._keyrings_cleared = clear_user_keyrings(self.user, self.python)
        remove_copies()
        return remove_leftovers()

    def view_of(self, folder: Path, limits: Limits, *, writable: Iterable[Path] = (),
                scratch_mb: int | None = None) -> list[list]:
        """The mount steps for a bot in `folder` (resolved); SandboxError if nobody cannot use it.
        `writable`: paths inside the folder bound writable (a build's build/); `scratch_mb`:
        the size of the private /tmp and /dev/shm (default `limits.file_size_mb`)."""
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
        size = limits.file_size_mb if scratch_mb is None else scratch_mb
        return mount_steps(folder, covers, scratch, size, files, writable)
