"""A bot process of a warm slot: three named pipes (random names) and a pidfd; its exit
status comes from the launcher's monitor (see warm.py). The send and receive loop is
`arena.sandbox.stdio.BotStdio`'s; here are its channels."""

from __future__ import annotations

import os
import select
import signal
import weakref
from typing import TYPE_CHECKING

from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox.common import (
    CLOSED_STDOUT,
    fault_for_exit,
)
from arena.sandbox.docker.engine import EXIT_WAIT_S, SETTLE_S
from arena.sandbox.docker.transport import LOG_DRAIN_S, _as_returncode
from arena.sandbox.stdio import BotStdio, ClosedWhenDropped, milliseconds, read_chunks

if TYPE_CHECKING:
    from arena.sandbox.docker.warm_container import WarmContainer

# Processes still open when the interpreter exits (Ctrl-C, an uncaught error) are killed.
_OPEN: weakref.WeakSet[WarmBotProcess] = weakref.WeakSet()


class WarmBotProcess(ClosedWhenDropped, BotStdio):
    """A bot process of a warm container: three named pipes and a pidfd."""

    stdio = "fifo"
    END_BEFORE_WRITE = True

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
        self._init_stdio(home.limits)
        self.exec_id, self.pid = exec_id, pid
        self.serial = home.serial  # made right after run() numbered it
        self.io_dir = home.folder
        self._names = names
        self._pidfd = pidfd
        self._in_fd: int | None = fds["in"]
        self._out_fd: int | None = fds["out"]
        self._err_fd: int | None = fds["err"]
        self._oom_before = oom_before
        self._ended = pidfd is None  # the process has ended (and its output was all read)
        self._stdout_closed = False
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
        ready = {fd for fd, _ in self._reading.poll(milliseconds(wait_s))}
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
        more, ended = read_chunks(self._out_fd, self._stdout.feed)
        if ended:
            self._stdout_closed = True
            self._reading.unregister(self._out_fd)
        return more

    def _read_err(self) -> bool:
        if self._err_fd is None:
            return False
        more, ended = read_chunks(self._err_fd, self._stderr.append)
        if ended:
            self._reading.unregister(self._err_fd)
            os.close(self._err_fd)
            self._err_fd = None
        return more

    def _output_ended(self) -> bool:
        return self._ended or self._stdout_closed

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(
                f"the bot process in {self.home.name} was already closed (arena's mistake)"
            )

    def _end_fault(self, pipe: str = "stdout") -> BotFault:
        """Why its output ended: OUT_OF_MEMORY, CRASH with its exit code or signal, or CRASH
        because it closed its stdout and lives on; SandboxError if its container was killed."""
        if not self._ended:
            poller = select.poll()
            poller.register(self._pidfd, select.POLLIN)
            if not poller.poll(milliseconds(SETTLE_S)):
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
        """Its exit status as Popen.returncode, from the launcher (None if it does not tell)."""
        status = self.home.launched_status(self.serial, EXIT_WAIT_S)
        return None if status is None else _as_returncode(status)

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

    # -- writing (the loop is BotStdio's) ---------------------------------------------------------
    def _write_now(self, data: bytes | memoryview) -> int:
        try:
            return os.write(self._in_fd, data)
        except (BlockingIOError, InterruptedError):
            return 0

    def _wait_writable(self, wait_s: float) -> bool:
        self._pump(0.0)  # a bot blocked on writing output cannot read: drain it
        return bool(self._writing.poll(milliseconds(min(wait_s, 0.01))))

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
            if poller.poll(milliseconds(LOG_DRAIN_S)):
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
