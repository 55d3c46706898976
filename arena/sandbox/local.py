"""The `local` sandbox: a bot as a child process with limits. NOT a security boundary.

How a bot is started (measured and explained in docs/performance.md):
1. A small exec shim (arena's Python, `-I -S`) joins the bot's cgroup (pids.max and a
   memory limit, see `arena.sandbox.cgroups`), sets oom_score_adj 1000 and the rlimits
   (RLIMIT_DATA, RLIMIT_CPU as the whole-match CPU budget, RLIMIT_FSIZE, RLIMIT_NOFILE,
   no core files), then execs: rlimits are set in the child without `preexec_fn`, which
   can deadlock a threaded parent.
2. When `unshare` works (root, as here): `unshare -n --pid --fork --kill-child --mount`,
   so the bot has no network and lives in its own PID namespace; a tiny init (PID 1)
   starts the bot, reaps orphans and reports the bot's exit status on a private pipe.
   When the init or `unshare` goes, the kernel kills everything in the namespace:
   background children and `setsid` escapees included. In its own mount namespace the
   init covers the bot folder's parent with an empty tmpfs and binds the bot's folder
   back, so the folders beside it (other bots) cannot be read; the rest of the file
   system stays visible (this is not a container).
3. The process runs in its own session; at the end the group gets SIGKILL, the cgroup is
   emptied with SIGKILL and removed.
Without root or `unshare`, steps 1 and 3 still apply and the notes say what is missing.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from arena.sandbox.base import BotFault, BotProcess, BotSpec, Limits, Reason, Sandbox, SandboxError
from arena.sandbox.cgroups import BotCgroup, remove_leftovers
from arena.sandbox.common import LineBuffer, StderrLog, fault_for_exit

WARNING = (
    "arena: the local sandbox does not isolate untrusted code (it limits time, memory, "
    "processes and output, nothing more); run bots you do not trust with --sandbox docker"
)

# Runs first, as the Popen'd child: join the cgroup, set limits, exec the next step.
_SHIM = r"""
import json, os, resource, sys
plan = json.loads(sys.argv[1])
try:
    for procs in plan["cgroup_procs"]:
        with open(procs, "w") as sink:
            sink.write(str(os.getpid()))
except OSError as error:
    os.write(2, ("arena shim: cannot join the cgroup: %s\n" % error).encode())
    os._exit(121)
try:
    with open("/proc/self/oom_score_adj", "w") as sink:
        sink.write("1000")
except OSError:
    pass
for name, (soft, hard) in plan["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (soft, hard))
if plan["status_fd"] is not None and not plan["init"]:
    os.close(plan["status_fd"])
argv = plan["argv"]
try:
    os.execvp(argv[0], argv)
except OSError as error:
    os.write(2, ("arena: cannot run %r: %s\n" % (argv[0], error.strerror)).encode())
    os._exit(127)
"""

# PID 1 of the bot's PID namespace: start the bot, reap orphans, report the bot's status.
_INIT = r"""
import json, os, sys
plan = json.loads(sys.argv[1])
status_fd = plan["status_fd"]
argv = sys.argv[2:]
if plan["hide"]:
    # In our own mount namespace: a tmpfs over the bot folder's parent hides the folders
    # beside it (other bots); the bot's own folder is bound back at the same path.
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
    folder, parent = plan["hide"]
    keep = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    ok = libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0
    ok = ok and libc.mount(b"tmpfs", parent.encode(), b"tmpfs", 0, b"size=64k,mode=755") == 0
    if ok:
        os.mkdir(folder)
        ok = libc.mount(("/proc/self/fd/%d" % keep).encode(), folder.encode(), None, MS_BIND | MS_REC, None) == 0
    if not ok:
        os.write(2, ("arena init: cannot hide the other bot folders (errno %d)\n" % ctypes.get_errno()).encode())
        os._exit(122)
    os.close(keep)
    os.chdir(folder)
bot = os.fork()
if bot == 0:
    os.close(status_fd)
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        os.write(2, ("arena: cannot run %r: %s\n" % (argv[0], error.strerror)).encode())
        os._exit(127)
for fd in (0, 1, 2):
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
_noted: set[str] = set()  # limits this machine cannot enforce, each said once
_unshare_works: bool | None = None


def unshare_works() -> bool:
    """True if `unshare -n --pid --fork --kill-child` can run here (probed once)."""
    global _unshare_works
    if _unshare_works is None:
        tool = shutil.which("unshare")
        _unshare_works = False
        if tool:
            try:
                probe = subprocess.run(
                    [tool, "-n", "--pid", "--fork", "--kill-child", "--", "true"],
                    capture_output=True,
                    timeout=10,
                )
                _unshare_works = probe.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                _unshare_works = False
    return _unshare_works


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
    ):
        self.isolate = isolate and unshare_works()
        self.use_cgroup = use_cgroup
        self.hide_siblings = hide_siblings
        self.warn = warn
        self.python = python or sys.executable
        self.notes: list[str] = []
        if isolate and not self.isolate:
            self.notes.append(
                "`unshare -n --pid` is not available (needs root or user namespaces): "
                "bots have the network and background children may survive a setsid"
            )

    def start(self, bot: BotSpec, limits: Limits) -> LocalBotProcess:
        """Start the bot's command in its folder; SandboxError if the machinery fails."""
        global _warned
        if self.warn and not _warned:
            _warned = True
            print(WARNING, file=sys.stderr)
        process = LocalBotProcess(self, bot, limits)
        if self.warn:
            for note in process.notes:
                if note not in _noted:
                    _noted.add(note)
                    print(f"arena: local sandbox: {note}", file=sys.stderr)
        return process

    def cleanup_leftovers(self) -> int:
        """Remove cgroups (and their processes) left by arena runs that were killed."""
        return remove_leftovers()


def _environment(bot: BotSpec) -> dict[str, str]:
    # A small, predictable environment: the bot must not depend on the organiser's.
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(bot.folder),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    return env


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
        self.cgroup: BotCgroup | None = None
        if sandbox.use_cgroup:
            self.cgroup, cgroup_notes = BotCgroup.create(limits)
            self.notes += cgroup_notes
        memory = limits.memory_mb << 20
        # With a memory cgroup the kernel's OOM kill is the limit (and is reported as
        # such); RLIMIT_DATA stays as a looser backstop. Without one, RLIMIT_DATA is it.
        data_limit = memory * 2 if self.cgroup and self.cgroup.memory_dir else memory
        status_read, status_write = os.pipe() if sandbox.isolate else (None, None)
        command = list(bot.command)
        folder = Path(bot.folder).resolve()
        hide = sandbox.isolate and sandbox.hide_siblings and folder.parent != folder
        init_plan = {
            "status_fd": status_write,
            "hide": [str(folder), str(folder.parent)] if hide else None,
        }
        if sandbox.isolate:
            argv = [
                shutil.which("unshare") or "unshare",
                "-n", "--pid", "--fork", "--kill-child",
                *(["--mount"] if hide else []),
                "--",
                sandbox.python, "-I", "-S", "-c", _INIT, json.dumps(init_plan), *command,
            ]
        else:
            argv = command
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
            "argv": argv,
            "status_fd": status_write,
            "init": sandbox.isolate,
        }
        try:
            self.process = subprocess.Popen(
                [sandbox.python, "-I", "-S", "-c", _SHIM, json.dumps(plan)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=bot.folder,
                env=_environment(bot),
                start_new_session=True,
                pass_fds=(status_write,) if status_write is not None else (),
                bufsize=0,
            )
        except OSError as error:
            if self.cgroup:
                self.cgroup.remove()
            for fd in (status_read, status_write):
                if fd is not None:
                    os.close(fd)
            raise SandboxError(f"cannot start the local bot {bot.name!r}: {error}") from error
        if status_write is not None:
            os.close(status_write)
        self._status_fd = status_read
        self._stdin = self.process.stdin.fileno()
        self._stdout = self.process.stdout.fileno()
        os.set_blocking(self._stdin, False)
        self._poll = select.poll()
        self._poll.register(self._stdout, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._drain = threading.Thread(
            target=self._drain_stderr, name=f"stderr-{bot.name}", daemon=True
        )
        self._drain.start()

    # -- the bot's log -------------------------------------------------------------------

    def _drain_stderr(self) -> None:
        # Reads all the time so a flooding bot never blocks on a full pipe (which would
        # look like a time-out); StderrLog keeps only the capped part.
        fd = self.process.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._log.append(chunk)

    def stderr_text(self) -> str:
        """The kept part of the bot's stderr."""
        return self._log.text()

    # -- talking -------------------------------------------------------------------------

    def send_line(self, line: bytes) -> None:
        """Write one line to the bot; TIMEOUT if it stops reading, CRASH if it is gone."""
        if self._fault:
            raise self._fault
        self._buffer.start_decision()
        view = memoryview(line + b"\n")
        # A bot that never reads its input must not block arena: a bounded wait.
        deadline = time.monotonic() + self.limits.decision_s + self.limits.time_bank_s
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
                raise self._record(self._ended())

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
                raise self._record(self._ended())
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

    # -- the end -------------------------------------------------------------------------

    def _ended(self, wait_s: float = 2.0) -> BotFault:
        """The fault for a bot whose output ended or whose input broke."""
        try:
            self.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            # It closed its stdout but runs on: that is a protocol crash too.
            self._kill()
            return BotFault(Reason.CRASH, "closed its output but kept running")
        return fault_for_exit(self._exit_status(), self.limits, self._out_of_memory())

    def _exit_status(self) -> int | None:
        """The bot's own status as a Popen returncode (negative = signal), or None."""
        if self._status_fd is None:
            return self.process.returncode
        ready, _, _ = select.select([self._status_fd], [], [], 1.0)
        if not ready:
            return self.process.returncode
        try:
            text = os.read(self._status_fd, 64).decode().strip()
        except OSError:
            text = ""
        if not text:
            # The init itself died: it was killed (by us, or by the kernel for memory).
            return self.process.returncode
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
        self._drain.join(timeout=1.0)
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self._status_fd is not None:
            os.close(self._status_fd)
            self._status_fd = None
        return self._close_reason

    @property
    def pid(self) -> int:
        """The pid of the started process (the shim, then unshare or the bot itself)."""
        return self.process.pid
