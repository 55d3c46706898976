"""A running bot's input and output loop, one for every sandbox: `BotStdio` writes lines to
the bot's stdin (`send_line`) and reads lines from its stdout (`receive_line`), with the
line and per-decision caps (`LineBuffer`), the time-outs and the rule that a fault which
ends the bot is raised again if it is asked again. `read_chunks` is the one way a pipe is
read without blocking.

The local sandbox (`LocalBotProcess`: two pipes), the Docker sandbox's cold containers
(`DockerBotProcess`: two named pipes or the engine's attach socket) and its warm slots
(`WarmBotProcess`: three named pipes and a pidfd) are subclasses: each says only how its
channels are read (`_pump`), written (`_write_now`, `_wait_writable`), and why its bot's
output ended (`_end_fault`).
"""

from __future__ import annotations

import math
import os
import time
from abc import abstractmethod
from collections.abc import Callable

from arena.faults import BotFault, Reason
from arena.sandbox.base import BotProcess, Limits
from arena.sandbox.common import STOPPED_READING, LineBuffer, StderrLog, input_wait_s

CHUNK = 1 << 16  # one read
READS_PER_CALL = 16  # a pipe is read at most 1 MiB at a time, so a flood cannot keep arena past a deadline


def read_chunks(fd: int, sink: Callable[[bytes], None], reads: int = READS_PER_CALL) -> tuple[bool, bool]:
    """Read what is ready in the non-blocking `fd`, at most `reads` chunks, into `sink`.

    Returns (more, ended): `more` if the pipe may hold more (every read was full), `ended`
    if an end of file was read (every writer has closed it). `sink` may raise (a cap).
    """
    for _ in range(reads):
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            return False, False
        if not chunk:
            return False, True
        sink(chunk)
        if len(chunk) < CHUNK:
            return False, False
    return True, False


def milliseconds(seconds: float) -> int:
    """A poll timeout: `seconds` rounded up to whole milliseconds, never negative."""
    return max(0, math.ceil(seconds * 1000))


class ClosedWhenDropped:
    """A process that holds what outlives arena (a container): close() when dropped unclosed."""

    def __del__(self) -> None:
        # Last resort for a process dropped without close(): never leave a container behind.
        if not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:  # noqa: BLE001, S110 - nothing may escape a finaliser
                pass


class BotStdio(BotProcess):
    """The send and receive loop of a running bot; a sandbox's process implements the hooks.

    `_stdout` (the line buffer) and `_stderr` (the kept log) are fed by `_pump`; `_fault` is
    the fault that ended the bot, raised again by every later call.
    """

    # The words of a decision's time-out, and how often a long wait looks at the bot's
    # stdout some other way (`_look`; None: never).
    NO_ANSWER = "did not answer"
    LOOK_EVERY_S: float | None = None
    # Whether a bot whose output has ended is charged before anything is written to it
    # (else a first write is tried: a pipe arena holds open takes it).
    END_BEFORE_WRITE = False

    def _init_stdio(self, limits: Limits) -> None:
        self.limits = limits
        self._stdout = LineBuffer.from_limits(limits)
        self._stderr = StderrLog(limits.stderr_keep_bytes)
        self._fault: BotFault | None = None

    # -- the hooks -------------------------------------------------------------------------

    def _check_open(self) -> None:
        """Raise SandboxError if the process was already closed (arena's mistake)."""

    @abstractmethod
    def _pump(self, wait_s: float) -> None:
        """Read what is ready (waiting at most `wait_s` for something) into `_stdout` and
        `_stderr`, noting the end of the output (`_output_ended`)."""

    @abstractmethod
    def _output_ended(self) -> bool:
        """True once the bot's stdout has ended (or its whole process)."""

    @abstractmethod
    def _end_fault(self, pipe: str) -> BotFault:
        """Why the bot's `pipe` ("stdout", or "stdin" that broke) ended: CRASH with its exit,
        OUT_OF_MEMORY, TIMEOUT for a spent CPU budget, or CRASH for a closed pipe."""

    @abstractmethod
    def _write_now(self, data: bytes | memoryview) -> int:
        """Write what the bot's stdin takes now, without waiting; how many bytes (0: full).
        A broken stdin raises `_end_fault("stdin")`."""

    @abstractmethod
    def _wait_writable(self, wait_s: float) -> bool:
        """Wait at most `wait_s` for room in the bot's stdin, reading its output meanwhile
        where the bot could block on it; True if a write may take something now."""

    def _look(self) -> None:
        """Every LOOK_EVERY_S of a long wait: note a closed stdout that `_pump` cannot see."""

    def _timeout(self, detail: str, waited: bool) -> BotFault:
        """The TIMEOUT of a wait for an answer (`waited`: a wait longer than none)."""
        return BotFault(Reason.TIMEOUT, detail)

    def _stopped_reading(self) -> BotFault:
        """The TIMEOUT of a write the bot did not take in time."""
        return BotFault(Reason.TIMEOUT, STOPPED_READING)

    # -- the loop --------------------------------------------------------------------------

    def receive_line(self, timeout_s: float) -> bytes:
        """The bot's next stdout line, waiting at most `timeout_s` (see BotProcess)."""
        self._check_open()
        if self._fault is not None:
            raise self._fault
        began = time.monotonic()
        deadline = began + max(0.0, timeout_s)
        # A wait that lasts looks now and then some other way whether the bot still holds
        # its stdout (answers come sooner than the first look, so they cost nothing).
        next_look = began + self.LOOK_EVERY_S if self.LOOK_EVERY_S is not None else math.inf
        try:
            while True:
                line = self._stdout.next_line()
                if line is not None:
                    return line
                if self._output_ended():
                    raise self._end_fault("stdout")
                self._pump(min(deadline, next_look) - time.monotonic())
                if self._stdout.has_line() or self._output_ended():
                    continue
                now = time.monotonic()
                if next_look <= now < deadline:
                    next_look = now + self.LOOK_EVERY_S
                    self._look()
                    continue
                if now >= deadline:
                    raise self._timeout(f"{self.NO_ANSWER} within {timeout_s:.3g} s", timeout_s > 0)
        except BotFault as fault:
            if fault.reason is not Reason.TIMEOUT:
                self._fault = fault
            raise

    def send_line(self, line: bytes) -> None:
        """Write one line (without its newline) to the bot's stdin; the per-decision byte
        count restarts. Waits at most `input_wait_s` for a bot that does not read."""
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
        if self.END_BEFORE_WRITE and self._output_ended():
            raise self._end_fault("stdout")
        view = memoryview(data)[self._write_now(data):]  # the common case: room for all of it
        deadline = time.monotonic() + input_wait_s(self.limits)
        while view:
            if self._output_ended():
                raise self._end_fault("stdout")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._stopped_reading()
            if self._wait_writable(remaining):
                view = view[self._write_now(view):]
