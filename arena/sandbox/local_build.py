"""A bot's `build` step in the local sandbox: confined as a local bot process is.

`run_confined` runs one program to its end through the same exec shim, plan and view as
`arena.sandbox.local_process.LocalBotProcess` (see `arena.sandbox.local` for what they
guarantee): its own cgroup (pids, memory, CPU), rlimits, and, as root with namespaces, its
own network (a down loopback), PID, mount, IPC and UTS namespaces, a private /tmp and
/dev/shm, the registry and every other hidden path covered, the folder read-only but for
the paths given as writable (build/), a uid of its own when a range is leased (else
nobody), no_new_privs and the keyring filter. What differs from a bot: the folder itself
is bound (not a copy: build/ is written through to it), stdin is /dev/null, and stdout and
stderr are one stream that arena drains as it comes into a capped file (`output`: the
first `keep_bytes` are kept, the rest counted and dropped) and a tail of the last
TAIL_BYTES, so no amount of output grows arena's memory. When the program ends, its
namespace ends with its init and the kernel kills every process left in it (a `setsid`
child too); the cgroup is emptied as well. At `timeout_s` everything is killed, and so it
is when `watch` (asked every WATCH_EVERY_S while it runs) says why it must stop (a build
whose output passes the folder limits).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from arena.faults import SandboxError
from arena.sandbox.base import Limits
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.local_process import SHIM, shim_plan
from arena.sandbox.uids import UidLease

if TYPE_CHECKING:
    from arena.sandbox.local import LocalSandbox

TAIL_BYTES = 64 << 10  # the end of the output kept for the message of a failure
READ_BYTES = 1 << 16
WATCH_EVERY_S = 0.25  # how often `watch` looks while the program runs


@dataclass
class Ended:
    """How a confined program ended."""

    returncode: int | None  # as Popen's (negative: killed by that signal); None: not known
    timed_out: bool
    out_of_memory: bool
    tail: str  # the last TAIL_BYTES of its output
    output_bytes: int  # everything it wrote
    kept_bytes: int  # of which the capped file holds this much
    stopped: str | None = None  # why `watch` stopped it while it ran


def _lend(paths: Iterable[Path], uid: int) -> list[tuple[Path, int, int]]:
    """Give each path and all it holds to `uid` (as root); what to give back."""
    owners = []
    for top in paths:
        info = top.stat()
        owners.append((top, info.st_uid, info.st_gid))
        _chown_tree(top, uid, uid)
    return owners


def _chown_tree(top: Path, uid: int, gid: int) -> None:
    for path in [top, *top.rglob("*")]:
        try:
            os.lchown(path, uid, gid)
        except OSError:
            pass


def run_confined(
    sandbox: LocalSandbox,
    folder: Path,
    argv: list[str],
    *,
    limits: Limits,
    env: dict[str, str],
    timeout_s: float,
    output: IO[bytes],
    keep_bytes: int,
    writable: Iterable[Path] = (),
    scratch_mb: int = 512,
    watch: Callable[[], str | None] | None = None,
) -> Ended:
    """Run `argv` in `folder` (resolved) confined as a local bot; see the module docstring.
    SandboxError when arena's machinery fails."""
    folder = Path(folder).resolve()
    writable = [Path(path).resolve() for path in writable]
    mounts = sandbox.view_of(folder, limits, writable=writable, scratch_mb=scratch_mb)
    lease = UidLease(sandbox.uids) if sandbox.uids is not None else None
    user = lease.uid if lease is not None else sandbox.user
    lent = _lend(writable, user) if user is not None else []
    cgroup: BotCgroup | None = None
    process = None
    fds: list[int] = []
    try:
        if sandbox.use_cgroup:
            cgroup, _ = BotCgroup.create(limits)
        memory = limits.memory_mb << 20
        data_limit = memory * 2 if cgroup and cgroup.memory_dir else memory
        null = os.open(os.devnull, os.O_RDONLY)
        fds.append(null)
        out_read, out_write = os.pipe()
        fds += [out_read, out_write]
        status_read = status_write = None
        if sandbox.isolate:
            status_read, status_write = os.pipe()
            fds += [status_read, status_write]
        theirs = [fd for fd in (null, out_write, status_write) if fd is not None]
        plan = shim_plan(
            sandbox,
            folder,
            list(argv),
            cgroup=cgroup,
            user=user,
            mounts=mounts,
            limits=limits,
            data_limit=data_limit,
            cpu_s=(int(timeout_s) + 1, int(timeout_s) + 1),
            source=None,  # the folder itself: build/ is written through to it
            fds=(null, out_write, status_write),
        )
        try:
            process = subprocess.Popen(
                [sandbox.python, "-I", "-S", str(SHIM), json.dumps(plan)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out_write,
                cwd=folder, env=env, start_new_session=True, pass_fds=theirs,
            )
        except OSError as error:
            raise SandboxError(f"cannot start the build in {folder}: {error}") from error
        for fd in theirs:
            os.close(fd)
            fds.remove(fd)
        drain = _Drain(out_read, output, keep_bytes)
        deadline = time.monotonic() + timeout_s
        stopped = None
        while not drain.until(process, min(deadline, time.monotonic() + WATCH_EVERY_S)):
            if time.monotonic() >= deadline:
                break
            stopped = watch() if watch is not None else None
            if stopped is not None:
                break
        timed_out = process.poll() is None and stopped is None
        if timed_out or stopped is not None or not sandbox.isolate:
            # At the time limit everything goes; without namespaces, its background children
            # too (no namespace ends them), before what they wrote is read to its end.
            _kill(process, cgroup)
            drain.until(process, time.monotonic() + 5)
        returncode = None if timed_out or stopped else _status(process, status_read)
        oom = bool(cgroup and cgroup.memory_dir is not None and cgroup.oom_kills() > 0)
        return Ended(returncode, timed_out, oom, drain.finish(), drain.written, drain.kept, stopped)
    finally:
        if process is not None:
            _kill(process, cgroup)
        if cgroup is not None:
            cgroup.remove()
        if lease is not None:
            lease.release()  # every process of the uid is gone
        for path, uid, gid in lent:
            _chown_tree(path, uid, gid)
        for fd in fds:
            os.close(fd)


class _Drain:
    """The program's output as it comes: into the capped file, its tail kept."""

    def __init__(self, fd: int, output: IO[bytes], keep_bytes: int):
        self.fd, self.output, self.keep_bytes = fd, output, keep_bytes
        self.written = self.kept = 0
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN | select.POLLHUP)

    def until(self, process: subprocess.Popen, deadline: float) -> bool:
        """Read until the program has ended and its stream is read to its current end (True),
        or until `deadline` while it still runs (False)."""
        ended = False
        while True:
            now = time.monotonic()
            if not ended and process.poll() is not None:
                ended = True  # what is in the pipe now is all that counts: read it, then stop
                os.set_blocking(self.fd, False)
            if not ended:
                if now >= deadline:
                    return False
                if not self._poller.poll(max(1, min(100, int((deadline - now) * 1000)))):
                    continue
            try:
                chunk = os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                chunk = b""
            if chunk:
                self._take(chunk)
            elif ended:
                return True
            else:
                time.sleep(0.001)  # every writer gone, the program not yet reaped

    def _take(self, chunk: bytes) -> None:
        self.written += len(chunk)
        room = self.keep_bytes - self.kept
        if room > 0:
            self.output.write(chunk[:room])
            self.kept += min(room, len(chunk))
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail_size - len(self._tail[0]) >= TAIL_BYTES:
            self._tail_size -= len(self._tail.popleft())

    def finish(self) -> str:
        """Close the file's account of what was left out; the tail as text."""
        if self.written > self.kept:
            self.output.write(f"\n[{self.written - self.kept} bytes of output left out]\n".encode())
        self.output.flush()
        return b"".join(self._tail)[-TAIL_BYTES:].decode("utf-8", "replace")


def _kill(process: subprocess.Popen, cgroup: BotCgroup | None) -> None:
    try:
        os.killpg(process.pid, 9)
    except (ProcessLookupError, PermissionError):
        pass
    if cgroup is not None:
        cgroup.kill_all()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def _status(process: subprocess.Popen, status_fd: int | None) -> int | None:
    """The program's own exit status as a Popen returncode: from its init, with namespaces."""
    process.wait()
    if status_fd is None:
        return process.returncode
    ready, _, _ = select.select([status_fd], [], [], 1.0)
    text = os.read(status_fd, 64).decode().strip() if ready else ""
    if not text:
        return process.returncode  # the init itself died (the shim ends with its signal)
    status = int(text)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
