"""Helpers both sandboxes share: line framing with caps, the kept part of a bot's log,
the time bank, and the words used in incident details.

The Docker sandbox feeds the bytes it demultiplexes from the attach socket into the same
`LineBuffer` and `StderrLog` as the local sandbox feeds from its pipes, so both enforce
the limits identically.
"""

from __future__ import annotations

import signal
import threading
from collections import deque
from pathlib import Path

from arena.faults import BotFault, Reason
from arena.sandbox.base import Limits


class LineBuffer:
    """Splits a bot's stdout bytes into lines, enforcing the line and per-decision caps.

    `feed()` raises BotFault(OUTPUT_LIMIT) as soon as one unfinished line is longer than
    `max_line_bytes`, or more than `max_decision_bytes` arrived since `start_decision()`;
    so a bot printing 100 MB without a newline is stopped after about one cap's worth.
    """

    def __init__(self, max_line_bytes: int, max_decision_bytes: int):
        self.max_line_bytes = max_line_bytes
        self.max_decision_bytes = max_decision_bytes
        self._lines: deque[bytes] = deque()
        self._partial = bytearray()
        self._decision_bytes = 0

    @classmethod
    def from_limits(cls, limits: Limits) -> LineBuffer:
        """A buffer with the caps of `limits`."""
        return cls(limits.max_line_bytes, limits.max_decision_bytes)

    def start_decision(self) -> None:
        """Restart the per-decision byte count (call when a new message is sent)."""
        self._decision_bytes = 0

    def feed(self, chunk: bytes) -> None:
        """Add bytes read from the bot; complete lines become available via `next_line()`."""
        self._decision_bytes += len(chunk)
        if self._decision_bytes > self.max_decision_bytes:
            raise BotFault(
                Reason.OUTPUT_LIMIT,
                f"wrote more than {self.max_decision_bytes} bytes while one answer was awaited",
            )
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                self._partial += chunk[start:]
                break
            piece = chunk[start:newline]
            if len(self._partial) + len(piece) > self.max_line_bytes:
                self._line_too_long()
            if self._partial:
                self._partial += piece
                line = bytes(self._partial)
                self._partial.clear()
            else:
                line = bytes(piece)
            if line.endswith(b"\r"):
                line = line[:-1]
            self._lines.append(line)
            start = newline + 1
        if len(self._partial) > self.max_line_bytes:
            self._line_too_long()

    def _line_too_long(self) -> None:
        raise BotFault(
            Reason.OUTPUT_LIMIT,
            f"wrote a line longer than {self.max_line_bytes} bytes (limit max_line_bytes)",
        )

    def next_line(self) -> bytes | None:
        """The oldest complete line not yet taken, or None."""
        return self._lines.popleft() if self._lines else None

    def has_line(self) -> bool:
        """True if a complete line is waiting."""
        return bool(self._lines)


class StderrLog:
    """The kept part of a bot's stderr: its first and its last bytes, up to a cap in total.

    Everything is accepted (the drain must never stall the bot), only `keep_bytes` are
    kept: the first half (where the first error usually is) and the latest half.
    Thread-safe: a drain thread appends while the referee may read.
    """

    def __init__(self, keep_bytes: int):
        self.keep_bytes = max(0, keep_bytes)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._dropped = 0
        self._received = 0
        self._lock = threading.Lock()

    def append(self, chunk: bytes) -> None:
        """Record bytes the bot wrote to stderr."""
        with self._lock:
            self._received += len(chunk)
            head_room = self.keep_bytes // 2 - len(self._head)
            if head_room > 0:
                self._head += chunk[:head_room]
                chunk = chunk[head_room:]
            if not chunk:
                return
            tail_cap = self.keep_bytes - self.keep_bytes // 2
            if len(chunk) > tail_cap:
                self._dropped += len(chunk) - tail_cap
                chunk = chunk[len(chunk) - tail_cap:]
            self._tail.append(chunk)
            self._tail_size += len(chunk)
            while self._tail_size > tail_cap:
                oldest = self._tail.popleft()
                excess = self._tail_size - tail_cap
                if len(oldest) > excess:
                    self._tail.appendleft(oldest[excess:])
                    self._tail_size -= excess
                    self._dropped += excess
                else:
                    self._tail_size -= len(oldest)
                    self._dropped += len(oldest)

    @property
    def dropped(self) -> int:
        """How many bytes were drained but not kept."""
        return self._dropped

    @property
    def received(self) -> int:
        """How many bytes were appended in all (a mark for `since`)."""
        return self._received

    def since(self, mark: int) -> str:
        """What was appended after `received` was `mark`, as far as it is still kept (a
        marker where bytes were dropped), as text."""
        with self._lock:
            if mark >= self._received:
                return ""
            tail_start = self._received - self._tail_size  # offset of the kept tail's first byte
            head = bytes(self._head[mark:]) if mark < len(self._head) else b""
            tail = b"".join(self._tail)
            gap = tail_start - max(mark, len(self._head))
            if mark > tail_start:
                tail = tail[mark - tail_start :]
        marker = f"\n[... {gap} bytes of log dropped ...]\n".encode() if gap > 0 else b""
        return (head + marker + tail).decode("utf-8", errors="replace")

    def text(self) -> str:
        """The kept log as text (invalid UTF-8 replaced), with a marker where bytes were dropped."""
        with self._lock:
            head = bytes(self._head)
            tail = b"".join(self._tail)
            dropped = self._dropped
        marker = f"\n[... {dropped} bytes of log dropped ...]\n".encode() if dropped else b""
        return (head + marker + tail).decode("utf-8", errors="replace")


def input_wait_s(limits: Limits) -> float:
    """How long a write to a bot that has stopped reading its input may wait (then TIMEOUT).

    One policy for both sandboxes: as long as one decision may take (the per-decision limit
    plus the whole time bank), and at least 1 s, so that a bot busy for no longer than it may
    think never loses for reading late. This time is not drawn from its bank.
    """
    return max(1.0, limits.decision_s + limits.time_bank_s)


STOPPED_READING = "stopped reading its input"
CLOSED_STDOUT = "closed its stdout but kept running"


class TimeBank:
    """Per-decision limit plus a bank that pays for overruns, for one bot in one match."""

    def __init__(self, decision_s: float, bank_s: float):
        self.decision_s = decision_s
        self.remaining_s = bank_s

    def allowance(self) -> float:
        """The most a decision may take now: the per-decision limit plus what is left in the bank."""
        return self.decision_s + max(0.0, self.remaining_s)

    def charge(self, elapsed_s: float) -> None:
        """Take the overrun of a decision that took `elapsed_s` out of the bank."""
        if elapsed_s > self.decision_s:
            self.remaining_s = max(0.0, self.remaining_s - (elapsed_s - self.decision_s))


def describe_exit(status: int | None) -> str:
    """Words for a process's end: `status` as Popen.returncode (negative = killed by signal)."""
    if status is None:
        return "closed its output"
    if status < 0:
        return f"was killed by signal {signal_name(-status)}"
    return f"exited with code {status}"


def signal_name(number: int) -> str:
    """SIGSEGV for 11, and so on (the number when unknown)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def fault_for_exit(status: int | None, limits: Limits, oom: bool = False) -> BotFault:
    """The incident for a bot whose output ended: OUT_OF_MEMORY, TIMEOUT for a spent CPU budget, else CRASH."""
    if oom:
        return BotFault(Reason.OUT_OF_MEMORY, f"was killed for using more than {limits.memory_mb} MB")
    if status is not None and status < 0 and -status == signal.SIGXCPU:
        return BotFault(Reason.TIMEOUT, f"used up its CPU budget of {limits.cpu_s} s")
    if status is not None and status < 0 and -status == signal.SIGXFSZ:
        return BotFault(Reason.CRASH, f"wrote a file larger than {limits.file_size_mb} MB (SIGXFSZ)")
    return BotFault(Reason.CRASH, describe_exit(status))


def children_of(pid: int) -> list[int]:
    """The child processes of a single-threaded process, from /proc (empty when it is gone)."""
    try:
        return [int(word) for word in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []
