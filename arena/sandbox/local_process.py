"""A bot of the local sandbox as a running process (`LocalBotProcess`): the exec shim
started for it (`local_shim.py`, with the plan made here: cgroup, rlimits, namespaces, the
view of `LocalSandbox.view_of`), its pipes (the loop is `arena.sandbox.stdio`'s), its
stderr drained by a thread, its CPU time, and how its end is told and explained. See
`arena.sandbox.local` for what the sandbox guarantees.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox.base import BotSpec, Limits
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.common import children_of, fault_for_exit
from arena.sandbox.copies import FolderCopy
from arena.sandbox.keyring import filter_program, keyctl_number
from arena.sandbox.stdio import BotStdio, milliseconds, read_chunks
from arena.sandbox.uids import UidLease

if TYPE_CHECKING:
    from arena.sandbox.local import LocalSandbox

# New network, PID, mount, IPC and UTS namespaces (CLONE_NEW* of <linux/sched.h>).
NAMESPACES = 0x40000000 | 0x20000000 | 0x00020000 | 0x08000000 | 0x04000000
KEYRING_FILTER = filter_program()  # the seccomp filter closing the kernel keyring (None: unknown machine)
BOT_NAMESPACE_PID = 2  # the init forks nothing before the bot

# The Popen'd child (a program of its own, run with arena's Python): joins the cgroup and
# sets the limits; then becomes the bot, or creates the namespaces and forks their init,
# which builds the bot's view and forks the bot. Only the bot gets its stdin/stdout pipes.
SHIM = Path(__file__).with_name("local_shim.py")


def shim_plan(
    sandbox: LocalSandbox,
    folder: Path,
    argv: list[str],
    *,
    cgroup: BotCgroup | None,
    user: int | None,
    mounts: list,
    limits: Limits,
    data_limit: int,
    cpu_s: tuple[int, int],
    source: str | None,
    fds: tuple[int, int, int | None],
) -> dict:
    """What the shim (local_shim.py) is told: join the cgroup, set the limits ((soft, hard)
    each), enter the namespaces with `mounts` (the folder read from `source`, a private
    copy, when given; else the folder itself), become `user` and run argv in the folder,
    with stdin, stdout and the status pipe on `fds`."""
    stdin_fd, stdout_fd, status_fd = fds
    return {
        "cgroup_procs": cgroup.procs_files if cgroup else [],
        "rlimits": {
            "RLIMIT_DATA": (data_limit, data_limit),
            "RLIMIT_CPU": cpu_s,
            "RLIMIT_FSIZE": (limits.file_size_mb << 20, limits.file_size_mb << 20),
            "RLIMIT_NOFILE": (limits.open_files, limits.open_files),
            "RLIMIT_CORE": (0, 0),
        },
        "isolate": sandbox.isolate,
        "namespaces": NAMESPACES,
        "folder": str(folder),
        "source": source,
        "mounts": mounts,
        "user": user,
        "keyctl": keyctl_number(),
        "syscall_filter": KEYRING_FILTER,
        "argv": argv,
        "stdin_fd": stdin_fd,
        "stdout_fd": stdout_fd,
        "status_fd": status_fd,
    }


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


class LocalBotProcess(BotStdio):
    """One bot running as a local process; see the module docstring for how."""

    NO_ANSWER = "gave no answer"

    def __init__(self, sandbox: LocalSandbox, bot: BotSpec, limits: Limits):
        self.bot = bot
        self.limits = limits
        self.notes = list(sandbox.notes)
        self._init_stdio(limits)
        self._stdout_ended = False
        self._closed = False
        self._close_reason: Reason | None = None
        folder = Path(bot.folder).resolve()
        mounts = sandbox.view_of(folder, limits)  # before anything is made that must be undone
        # With namespaces the bot reads a private copy of its folder, bound at the folder's
        # path: the page cache of its files is this process's alone (arena.sandbox.copies).
        self._copy = FolderCopy(folder) if sandbox.isolate else None
        try:
            self._lease = UidLease(sandbox.uids) if sandbox.uids is not None else None
        except BaseException:
            self._copy and self._copy.remove()
            raise
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
        plan = shim_plan(
            sandbox,
            folder,
            list(bot.command),
            cgroup=self.cgroup,
            user=self.user,
            mounts=mounts,
            limits=limits,
            data_limit=data_limit,
            # CPU: SIGXCPU at the soft limit (reported as TIMEOUT), and SIGKILL a second
            # later if the bot ignores it.
            cpu_s=(int(limits.cpu_s), int(limits.cpu_s) + 1),
            source=str(self._copy.path) if self._copy else None,
            fds=(stdin_read, stdout_write, status_write),
        )
        try:
            self.process = subprocess.Popen(
                [sandbox.python, "-I", "-S", str(SHIM), json.dumps(plan)],
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
            if self._copy is not None:
                self._copy.remove()
            for fd in (*theirs, stdin_write, stdout_read, status_read):
                if fd is not None:
                    os.close(fd)
            raise SandboxError(f"cannot start the local bot {bot.name!r}: {error}") from error
        for fd in theirs:
            os.close(fd)
        self._status_fd = status_read
        self._isolated = sandbox.isolate
        self._stdin_fd = stdin_write
        self._stdout_fd = stdout_read
        os.set_blocking(self._stdin_fd, False)
        self._poll = select.poll()
        self._poll.register(self._stdout_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._stderr_fd = self.process.stderr.fileno()
        os.set_blocking(self._stderr_fd, False)
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
        waiting.register(self._stderr_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
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
                    chunk = os.read(self._stderr_fd, 65536)
                except BlockingIOError:
                    return
                except OSError:
                    chunk = b""
                if not chunk:
                    self._stderr_open = False
                    return
                self._stderr.append(chunk)

    def stderr_text(self) -> str:
        """The kept part of the bot's stderr, up to what it has written by now (a process that
        lives on between games is asked for its log while it runs)."""
        self._read_stderr()
        return self._stderr.text()

    def stderr_mark(self) -> int:
        """Bytes of stderr read so far."""
        return self._stderr.received

    def stderr_since(self, mark: int) -> str:
        """What the bot wrote to stderr after `mark`: the pipe is read to its current end
        first, so a line written before the bot's answer is never left for the next one."""
        self._read_stderr()
        return self._stderr.since(mark)

    # -- talking (the loop is BotStdio's) -----------------------------------------------

    def _pump(self, wait_s: float) -> None:
        """Read one chunk of stdout if one comes within `wait_s`."""
        if not self._poll.poll(milliseconds(wait_s)):
            return
        try:
            _, ended = read_chunks(self._stdout_fd, self._stdout.feed, reads=1)
        except OSError:
            ended = True
        self._stdout_ended = self._stdout_ended or ended

    def _output_ended(self) -> bool:
        return self._stdout_ended

    def _end_fault(self, pipe: str) -> BotFault:
        return self._record(self._ended(pipe))

    def _write_now(self, data: bytes | memoryview) -> int:
        try:
            return os.write(self._stdin_fd, data)
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError):
            raise self._end_fault("stdin") from None

    def _wait_writable(self, wait_s: float) -> bool:
        select.select([], [self._stdin_fd], [], wait_s)
        return True

    def _stopped_reading(self) -> BotFault:
        return self._record(super()._stopped_reading())

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
        for init in children_of(self.process.pid):
            for pid in children_of(init):
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
        tail = self._stderr.text()[-2000:].lower()
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
        if self._copy is not None:
            self._copy.remove()
        self._drain.join(timeout=1.0)
        os.close(self._stdin_fd)
        os.close(self._stdout_fd)
        if self._status_fd is not None:
            os.close(self._status_fd)
            self._status_fd = None
        return self._close_reason

    @property
    def pid(self) -> int:
        """The pid of the started process: the shim (the bot itself without namespaces)."""
        return self.process.pid
