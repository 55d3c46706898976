"""How a Docker bot's stdin and stdout travel, and the running bot as arena talks to it:
`DockerBotProcess`, over two named pipes (`make_fifos`) or the engine's attach socket,
whose multiplexed frames also bring the bot's stderr and whose end says the container
ended. `_StdoutWatch` tells, over the attach socket, that a bot closed its stdout. The
send and receive loop is `arena.sandbox.stdio.BotStdio`'s; here are its channels.
"""

from __future__ import annotations

import atexit
import errno
import os
import select
import shutil
import signal
import socket
import struct
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docker
import docker.errors

from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox.base import Limits
from arena.sandbox.common import (
    CLOSED_STDOUT,
    STOPPED_READING,
    describe_exit,
    fault_for_exit,
)
from arena.sandbox.docker.engine import (
    ENGINE_ERRORS,
    API_TIMEOUT_S,
    EXIT_WAIT_S,
    IO_PREFIX,
    SETTLE_S,
    USER,
    WATCH_EVERY_S,
    _is_gone,
    remove_quietly,
)
from arena.sandbox.stdio import BotStdio, ClosedWhenDropped, milliseconds, read_chunks

if TYPE_CHECKING:
    from arena.sandbox.docker import DockerSandbox

_FRAME_HEADER = struct.Struct(">BxxxL")  # stream (1 stdout, 2 stderr), 3 pad bytes, length
_STDOUT, _STDERR = 1, 2
_READY_TO_READ = select.POLLIN | select.POLLHUP | select.POLLERR
OOM_SETTLE_S = 1.0  # how long a SIGKILL arena did not send waits for the engine's OOM flag


def make_fifos(uid: int | None = None) -> Path:
    """A private folder with the two pipes `in` and `out`, openable only by the bot's user
    (`uid`, else nobody)."""
    folder = Path(tempfile.mkdtemp(prefix=IO_PREFIX))
    # The container's user must reach the pipes; nobody may list the folder.
    folder.chmod(0o711)
    uid, gid = (uid, uid) if uid is not None else (int(part) for part in USER.split(":"))
    for name in ("in", "out"):
        os.mkfifo(folder / name, 0o600)
        os.chown(folder / name, uid, gid)
    return folder



class _StdoutWatch:
    """Whether a bot still holds its container's stdout, from /proc (attach mode only).

    Over the attach socket the engine cannot tell a bot that closed its stdout: the
    container's init keeps its own copy open, and the engine's copy of the stream ends only
    with the container. /proc can: the bot closed it when the container has processes
    besides init and none of them holds that pipe. Works when the engine runs on this host
    in arena's view of /proc and arena may read other users' /proc entries (root); else
    `find` gives None and such a bot times out instead.
    """

    def __init__(self, init_pid: int, pipe: str, namespace: str):
        self.init_pid, self.pipe, self.namespace = init_pid, pipe, namespace

    @classmethod
    def find(cls, container_id: str, init_pid: int | None) -> _StdoutWatch | None:
        """The watch of the container whose init has host pid `init_pid`; None if not possible."""
        if not init_pid:
            return None
        try:
            if container_id not in Path(f"/proc/{init_pid}/cgroup").read_text():
                return None  # not this host's pid, or not our view of it
            pipe = os.readlink(f"/proc/{init_pid}/fd/1")
            namespace = os.readlink(f"/proc/{init_pid}/ns/pid")
        except OSError:
            return None
        return cls(init_pid, pipe, namespace) if pipe.startswith("pipe:") else None

    def closed(self) -> bool:
        """True if processes besides init run in the container and none holds its stdout."""
        others = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == self.init_pid:
                continue
            try:
                if os.readlink(f"/proc/{entry.name}/ns/pid") != self.namespace:
                    continue
                state = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state in ("Z", "X"):
                    continue  # ended, not reaped yet: it holds nothing
                others = True
                for fd in os.listdir(f"/proc/{entry.name}/fd"):
                    if os.readlink(f"/proc/{entry.name}/fd/{fd}") == self.pipe:
                        return False
            except OSError:
                continue  # it ended while we looked
        return others


def _remove_io_dir(io_dir: Path | str | None) -> None:
    """Delete a folder of pipes made by `_make_fifos` (and nothing else)."""
    if not io_dir:
        return
    io_dir = Path(io_dir)
    if io_dir.name.startswith(IO_PREFIX) and io_dir.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(io_dir, ignore_errors=True)


def _release(held: list[Any]) -> None:
    """Give back what a container held until it was removed (its folder copy, its uid)."""
    while held:
        held.pop().release()


# Containers still open when the interpreter exits (e.g. on an uncaught exception) are removed.
_OPEN: weakref.WeakSet[DockerBotProcess] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for process in list(_OPEN):
        try:
            process.close()
        except SandboxError:
            pass


class DockerBotProcess(ClosedWhenDropped, BotStdio):
    """A bot running in a container: stdin/stdout over two pipes or the attach socket.

    The attach socket is always there: it brings the bot's stderr (and, without pipes, its
    stdout and stdin), and its end tells that the container has ended.
    """

    def __init__(
        self,
        sandbox: DockerSandbox,
        container: Any,
        attached: Any,
        limits: Limits,
        io_dir: Path | None = None,
        held: list[Any] | None = None,
    ):
        self.sandbox = sandbox
        self.container = container
        self._init_stdio(limits)
        self.io_dir = io_dir
        self.held = held or []  # released once the container is gone (its folder copy)
        self._attached = attached  # keeps the HTTP response (and with it the socket) alive
        self._sock: socket.socket = getattr(attached, "_sock", attached)
        self._sock.setblocking(False)
        # stdin is opened read-write: that never blocks, the bot's own open of it does not
        # either, and the bot sees EOF exactly when we close our end. stdout is opened
        # read-only, which does not block either and lets the bot's open succeed at once;
        # and once the bot has opened it, its last close of it is an end of file here (while
        # no writer has come yet, the kernel reports nothing), whether or not it keeps running.
        self._in_fd = self._out_fd = None
        self._in_read_too = False  # stdin is still opened read-write (see _still_running)
        if io_dir is not None:
            self._in_fd = os.open(io_dir / "in", os.O_RDWR | os.O_NONBLOCK)
            self._in_read_too = True
            self._out_fd = os.open(io_dir / "out", os.O_RDONLY | os.O_NONBLOCK)
        self.watch: _StdoutWatch | None = None  # attach mode, when /proc can tell (set by start)
        # poll, not select: a tournament process may hold more than 1024 descriptors.
        self._sock_fd = self._sock.fileno()
        self._reading = select.poll()  # what brings output: the socket, and the pipe
        self._writing = select.poll()  # the same, plus where stdin goes
        for poller in (self._reading, self._writing):
            poller.register(self._sock_fd, select.POLLIN)
            if self._out_fd is not None:
                poller.register(self._out_fd, select.POLLIN)
        if self._in_fd is not None:
            self._writing.register(self._in_fd, select.POLLOUT)
        else:
            self._writing.register(self._sock_fd, select.POLLIN | select.POLLOUT)
        self._header = bytearray()  # the part of a frame header read so far
        self._frame_stream = 0  # stream of the frame being read: 1 stdout, 2 stderr
        self._frame_left = 0  # payload bytes of that frame still to come (0: a header is next)
        self._eof = False  # the container's output has ended (and was all read)
        self._stdout_closed = False  # the bot closed its stdout; its container may still run
        self._closed = False
        self._oom: bool | None = None
        _OPEN.add(self)

    @property
    def id(self) -> str:
        """The container's id."""
        return self.container.id

    @property
    def stdio(self) -> str:
        """How stdin/stdout travel: "fifo" or "attach"."""
        return "attach" if self._in_fd is None else "fifo"

    # -- reading -----------------------------------------------------------------------------
    def _pump(self, wait_s: float) -> None:
        """Read what is ready (waiting at most `wait_s` for something) and route it."""
        if self._eof:
            return
        ready = {fd for fd, _ in self._reading.poll(milliseconds(wait_s))}
        if self._out_fd is not None and self._out_fd in ready:
            self._read_pipe()
        if self._sock_fd in ready:  # data, or the end (POLLHUP): recv tells which
            self._read_socket()
            if self._eof and self._out_fd is not None:
                # The container has ended: what it wrote is all in the pipe now.
                while self._read_pipe():
                    pass

    def _read_pipe(self) -> bool:
        """Read from the stdout pipe (at most 1 MiB); True if the pipe may hold more."""
        more, ended = read_chunks(self._out_fd, self._stdout.feed)
        if ended and not self._stdout_closed:
            # Every writer has closed it: the bot closed its stdout or ended.
            self._stdout_closed = True
            for poller in (self._reading, self._writing):
                poller.unregister(self._out_fd)  # else it is "ready" forever
        return more

    def _read_socket(self) -> None:
        for _ in range(16):  # at most 1 MiB per call, so a stderr flood cannot keep us here
            try:
                chunk = self._sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno not in (errno.ECONNRESET, errno.EPIPE):
                    raise SandboxError(
                        f"the attach socket of {self.container.name} failed: {error}"
                    ) from None
                chunk = b""
            if not chunk:
                self._eof = True
                return
            self._demux(chunk)
            if len(chunk) < (1 << 16):
                return

    def _demux(self, chunk: bytes) -> None:
        """Route the payload of the multiplexed stream to stdout lines and the stderr log.

        Frames are followed incrementally (header, then payload as it comes), so a frame
        split across reads costs nothing and a huge frame is never held whole.
        """
        position, size = 0, len(chunk)
        while position < size:
            if self._frame_left == 0:
                needed = _FRAME_HEADER.size - len(self._header)
                self._header += chunk[position : position + needed]
                position += needed
                if len(self._header) < _FRAME_HEADER.size:
                    return
                self._frame_stream, self._frame_left = _FRAME_HEADER.unpack(self._header)
                self._header.clear()
                continue
            take = min(self._frame_left, size - position)
            payload = chunk[position : position + take]
            position += take
            self._frame_left -= take
            if self._frame_stream == _STDOUT and self._out_fd is None:
                self._stdout.feed(payload)  # may raise OUTPUT_LIMIT: the bot is done for anyway
            else:
                # stderr (with pipes, the container's own stdout only carries init's words)
                self._stderr.append(payload)

    @property
    def LOOK_EVERY_S(self) -> float | None:  # noqa: N802 - BotStdio's setting, per process here
        """Attach mode, when /proc can tell: how often a long wait looks at the bot's stdout."""
        return WATCH_EVERY_S if self.watch is not None else None

    @property
    def END_BEFORE_WRITE(self) -> bool:  # noqa: N802
        """Over the attach socket nothing is written to a bot whose output has ended."""
        return self._in_fd is None

    def _output_ended(self) -> bool:
        return self._eof or self._stdout_closed

    def _look(self) -> None:
        self._look_at_stdout()

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(
                f"the container {self.container.name} was already closed (arena's mistake)"
            )

    def _look_at_stdout(self) -> None:
        """Attach mode: note a bot that closed its stdout (see _StdoutWatch)."""
        if self.watch is None or not self.watch.closed():
            return
        # A bot that is ending lets go of everything an instant before it is a zombie: look
        # again a moment later; by then its end (if it is that) is on the socket.
        self._pump(SETTLE_S)
        if not (self._eof or self._stdout.has_line()) and self.watch.closed():
            self._stdout_closed = True

    def _timeout(self, detail: str, waited: bool) -> BotFault:
        """TIMEOUT with `detail`, after making sure the engine did not cause it.

        Over the attach socket the engine carries stdin and stdout: if it does not answer
        now, arena cannot judge the bot, and raises SandboxError instead (not the bot's
        fault). Over pipes the engine plays no part in any clock.
        """
        if waited and self._in_fd is None:
            self.sandbox.check_engine(f"when {self.container.name} {detail}")
        return BotFault(Reason.TIMEOUT, detail)

    def _stopped_reading(self) -> BotFault:
        return self._timeout(STOPPED_READING, True)

    def _end_fault(self, pipe: str = "stdout") -> BotFault:
        """Why the bot's output ended: OUT_OF_MEMORY, CRASH with its exit code / signal, or
        CRASH because it closed its stdout and kept running."""
        if not self._eof:
            # Its stdout has ended but its container has not (yet).
            if self._still_running():
                return BotFault(Reason.CRASH, CLOSED_STDOUT)
            deadline = time.monotonic() + EXIT_WAIT_S
            while not self._eof and time.monotonic() < deadline:
                self._pump(deadline - time.monotonic())
            if not self._eof:
                return BotFault(Reason.CRASH, describe_exit(None))
        try:
            status = self.container.wait(timeout=API_TIMEOUT_S)["StatusCode"]
            self.container.reload()
            self._oom = bool(self.container.attrs["State"].get("OOMKilled"))
            # The engine learns of an out-of-memory kill from an event of its own, which may
            # come after the container's exit (seen under load, runc and runsc alike): a
            # SIGKILL that arena did not send is asked about again for a moment.
            deadline = time.monotonic() + OOM_SETTLE_S
            while status == 128 + signal.SIGKILL and not self._oom and time.monotonic() < deadline:
                time.sleep(0.05)
                self.container.reload()
                self._oom = bool(self.container.attrs["State"].get("OOMKilled"))
        except docker.errors.NotFound:
            raise SandboxError(
                f"the container {self.container.name} was removed by someone else before arena "
                "learnt how it ended; not the bot's fault"
            ) from None
        except ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while reading how {self.container.name} ended: {error}"
            ) from None
        return fault_for_exit(_as_returncode(status), self.limits, oom=self._oom)

    def _still_running(self) -> bool:
        """After its stdout ended: does the bot live on (does anything still read its stdin)?"""
        if self._in_fd is None:
            return self._stdout_closed  # only _StdoutWatch, which saw it run, says so here
        if self._in_fd < 0:
            return False
        if self._in_read_too:
            # Drop our own read end of stdin: a write-only end tells whether anyone reads it.
            # The bot's shell opened stdin before stdout, so it has it (if it still runs).
            try:
                write_only = os.open(self.io_dir / "in", os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                return False
            os.dup2(write_only, self._in_fd)
            os.close(write_only)
            self._in_read_too = False
        # Wait (at most SETTLE_S) for the last reader of stdin to go: POLLERR comes whatever
        # is asked for, and the socket's end says the container has ended.
        poller = select.poll()
        poller.register(self._in_fd, 0)
        poller.register(self._sock_fd, select.POLLIN)
        deadline = time.monotonic() + SETTLE_S
        while True:
            events = dict(poller.poll(milliseconds(deadline - time.monotonic())))
            if events.get(self._in_fd, 0) & select.POLLERR:
                return False
            if self._sock_fd in events:
                self._pump(0.0)
                if self._eof:
                    return False
            if time.monotonic() >= deadline:
                return True

    def stderr_text(self) -> str:
        """The kept part of the bot's stderr."""
        return self._stderr.text()

    def stderr_mark(self) -> int:
        """Bytes of stderr read so far."""
        return self._stderr.received

    def stderr_since(self, mark: int) -> str:
        """The stderr read after `mark`: with pipes, what the attach socket (stderr only)
        holds by now is read first, without waiting."""
        if self._out_fd is not None and not self._eof and not self._closed:
            try:
                self._read_socket()
            except SandboxError:
                pass  # the next read of the bot's output says so
        return self._stderr.since(mark)

    # -- writing -----------------------------------------------------------------------------
    # JSON never holds raw control bytes, so Docker's detach keys (ctrl-p ctrl-q) cannot occur.
    def _write_now(self, data: bytes | memoryview) -> int:
        try:
            if self._in_fd is not None:
                return os.write(self._in_fd, data)
            return self._sock.send(data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as error:
            if error.errno in (errno.EPIPE, errno.ECONNRESET):
                # The socket's end is the container's; a pipe's, only that nobody reads it.
                self._eof = self._eof or self._in_fd is None
                raise self._end_fault() from None
            raise SandboxError(f"the attach socket of {self.container.name} failed: {error}") from None

    def _wait_writable(self, wait_s: float) -> bool:
        events = dict(self._writing.poll(milliseconds(wait_s)))
        if any(mask & _READY_TO_READ for mask in events.values()):
            # A bot blocked on writing output cannot read: drain it to avoid a deadlock.
            self._pump(0.0)
        target_fd = self._sock_fd if self._in_fd is None else self._in_fd
        return bool(events.get(target_fd, 0) & select.POLLOUT)

    # -- end ---------------------------------------------------------------------------------
    def close(self) -> Reason | None:
        """Kill and remove the container (idempotent); OUT_OF_MEMORY if it was killed for memory."""
        if self._closed:
            return Reason.OUT_OF_MEMORY if self._oom else None
        self._closed = True
        _OPEN.discard(self)
        failure: Exception | None = None
        try:
            self._close_input()
            try:
                self._pump(0.0)  # keep the last words of its log
            except (OSError, BotFault, SandboxError):
                pass
            if self._oom is None:
                self._kill_reading()
                self.container.wait(timeout=API_TIMEOUT_S)
                self.container.reload()
                self._oom = bool(self.container.attrs["State"].get("OOMKilled"))
        except docker.errors.NotFound:
            pass  # removed by someone else meanwhile: nothing left to ask or to remove
        except ENGINE_ERRORS as error:
            failure = error
        finally:
            self._close_streams()
            try:
                self.container.remove(force=True)
            except docker.errors.APIError as error:
                if not _is_gone(error):
                    failure = failure or error
            except ENGINE_ERRORS as error:
                failure = failure or error
            _remove_io_dir(self.io_dir)
            _release(self.held)
        if failure is not None:
            raise SandboxError(
                f"the Docker engine failed while removing {self.container.name}: {failure}"
            )
        return Reason.OUT_OF_MEMORY if self._oom else None

    def _kill_reading(self) -> None:
        """Kill the container while reading its output to the end.

        Its stderr reaches us through the engine, a moment behind its stdout: read on to the
        socket's end, and the lines it wrote before a fault are all kept. The kill runs
        beside the reading, for the engine does not finish a container whose output it is
        still handing to a full socket; a bot still flooding is cut off after LOG_DRAIN_S
        (our end is closed, which lets the engine finish it).
        """
        failed: list[BaseException] = []

        def kill() -> None:
            try:
                self.container.kill()
            except docker.errors.APIError as error:
                if not _is_gone(error):  # 409: it is not running any more
                    failed.append(error)
            except BaseException as error:  # noqa: BLE001 - raised below, in the caller's thread
                failed.append(error)

        killer = threading.Thread(target=kill, name=f"kill-{self.container.name}", daemon=True)
        killer.start()
        self._read_to_end(LOG_DRAIN_S)
        self._close_streams()
        killer.join()
        if failed:
            raise failed[0]

    def _read_to_end(self, wait_s: float) -> None:
        """Read the container's output until its end (the socket's), for at most `wait_s`."""
        deadline = time.monotonic() + wait_s
        while not self._eof:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                self._pump(left)
            except (OSError, BotFault, SandboxError):
                return

    def discard(self) -> None:
        """Remove the container without asking how it ended (after a failed start)."""
        self._closed = True
        _OPEN.discard(self)
        self._close_streams()
        remove_quietly(self.container)
        _remove_io_dir(self.io_dir)
        _release(self.held)

    def _close_input(self) -> None:
        """EOF on the bot's stdin."""
        if self._in_fd is not None:
            os.close(self._in_fd)
            self._in_fd = -1  # not None: the mode stays "fifo"
        elif not self._eof:
            try:
                self._sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def _close_streams(self) -> None:
        self._eof = True
        for fd_name in ("_in_fd", "_out_fd"):
            fd = getattr(self, fd_name)
            if fd is not None and fd >= 0:
                os.close(fd)
                setattr(self, fd_name, -1)
        try:
            self._sock.close()
            self._attached.close()
        except OSError:
            pass


# At the end, how long the container's last output (its stderr) is read after the kill.
LOG_DRAIN_S = 1.0


def _as_returncode(status: int) -> int:
    """Docker's exit status as Popen.returncode: 128+N from the init process is signal N."""
    if status > 128 and status - 128 < 65:
        return -(status - 128)
    return status
