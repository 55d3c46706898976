"""The bot process's input and output loop has one home (arena/sandbox/stdio.py): the local
sandbox, Docker's cold containers and its warm slots all run `BotStdio`'s loop. Here the
loop itself, over two plain pipes whose other ends the test holds (a bot that answers,
floods, stops reading, or ends); the sandboxes' own tests play real bots through it."""

from __future__ import annotations

import os
import select
import time

import pytest

from arena.faults import BotFault, Reason
from arena.sandbox.base import Limits
from arena.sandbox.common import STOPPED_READING
from arena.sandbox.local import LocalBotProcess
from arena.sandbox.stdio import CHUNK, BotStdio, milliseconds, read_chunks

LIMITS = Limits(decision_s=0.05, time_bank_s=0.05, max_line_bytes=100, max_decision_bytes=1000)


class PipeBot(BotStdio):
    """A 'bot' that is the test's ends of two pipes."""

    def __init__(self, limits: Limits = LIMITS):
        self._init_stdio(limits)
        stdin_read, self.stdin_fd = os.pipe()
        self.stdout_fd, stdout_write = os.pipe()
        os.set_blocking(self.stdin_fd, False)
        os.set_blocking(self.stdout_fd, False)
        self.bot_stdin, self.bot_stdout = stdin_read, stdout_write  # the bot's ends
        self.ended = False
        self.end_faults: list[str] = []

    def _pump(self, wait_s: float) -> None:
        if select.select([self.stdout_fd], [], [], max(0.0, wait_s))[0]:
            _, ended = read_chunks(self.stdout_fd, self._stdout.feed)
            self.ended = self.ended or ended

    def _output_ended(self) -> bool:
        return self.ended

    def _end_fault(self, pipe: str) -> BotFault:
        self.end_faults.append(pipe)
        return BotFault(Reason.CRASH, f"closed its {pipe}")

    def _write_now(self, data) -> int:
        try:
            return os.write(self.stdin_fd, data)
        except BlockingIOError:
            return 0
        except BrokenPipeError:
            raise self._end_fault("stdin") from None

    def _wait_writable(self, wait_s: float) -> bool:
        return bool(select.select([], [self.stdin_fd], [], wait_s)[1])

    def stderr_text(self) -> str:
        return ""

    def close(self):
        for fd in (self.stdin_fd, self.stdout_fd, self.bot_stdin, self.bot_stdout):
            try:
                os.close(fd)
            except OSError:
                pass


def test_every_sandbox_runs_the_one_loop():
    from arena.sandbox.docker.transport import DockerBotProcess
    from arena.sandbox.docker.warm_process import WarmBotProcess

    for process in (LocalBotProcess, DockerBotProcess, WarmBotProcess):
        assert issubclass(process, BotStdio)
        for method in ("receive_line", "send_line", "_send"):
            assert getattr(process, method) is getattr(BotStdio, method), (process, method)
    assert LocalBotProcess.NO_ANSWER == "gave no answer" and WarmBotProcess.END_BEFORE_WRITE


def test_lines_go_both_ways_and_a_split_line_waits_for_its_end():
    bot = PipeBot()
    try:
        bot.send_line(b'{"type": "hello"}')
        assert os.read(bot.bot_stdin, 100) == b'{"type": "hello"}\n'
        os.write(bot.bot_stdout, b'{"type": "ready"}\n{"par')
        assert bot.receive_line(1.0) == b'{"type": "ready"}'
        with pytest.raises(BotFault) as caught:
            bot.receive_line(0.0)  # half a line is no line
        assert caught.value.reason is Reason.TIMEOUT and caught.value.detail == "did not answer within 0 s"
        os.write(bot.bot_stdout, b't"}\r\n')
        assert bot.poll_line() == b'{"part"}'
        assert bot.poll_line() is None
    finally:
        bot.close()


def test_a_time_out_is_not_kept_but_a_fault_that_ends_the_bot_is():
    bot = PipeBot()
    try:
        began = time.monotonic()
        with pytest.raises(BotFault) as caught:
            bot.receive_line(0.2)
        assert caught.value.reason is Reason.TIMEOUT and time.monotonic() - began >= 0.2
        os.write(bot.bot_stdout, b"x" * 101)  # longer than max_line_bytes
        with pytest.raises(BotFault) as caught:
            bot.receive_line(1.0)
        assert caught.value.reason is Reason.OUTPUT_LIMIT
        with pytest.raises(BotFault) as again:
            bot.send_line(b"more")
        assert again.value is caught.value  # the same fault, every time it is asked
    finally:
        bot.close()


def test_the_per_decision_cap_restarts_with_each_line_sent():
    bot = PipeBot()
    try:
        for _ in range(3):  # 3 x 990 bytes: over the cap in all, under it per decision
            bot.send_line(b"go")
            os.read(bot.bot_stdin, 100)
            os.write(bot.bot_stdout, (b"y" * 98 + b"\n") * 10)
            assert [bot.receive_line(1.0) for _ in range(10)] == [b"y" * 98] * 10
        os.write(bot.bot_stdout, (b"y" * 98 + b"\n") * 11)
        with pytest.raises(BotFault) as caught:
            bot.receive_line(1.0)
        assert caught.value.reason is Reason.OUTPUT_LIMIT and "more than 1000 bytes" in caught.value.detail
    finally:
        bot.close()


def test_a_bot_that_stops_reading_times_out_after_the_input_wait():
    bot = PipeBot(Limits(decision_s=0.3, time_bank_s=0.7))  # input_wait_s: 1 s
    try:
        began = time.monotonic()
        with pytest.raises(BotFault) as caught:
            bot.send_line(b"z" * (4 << 20))  # more than a pipe holds; nobody reads
        assert caught.value.reason is Reason.TIMEOUT and caught.value.detail == STOPPED_READING
        assert 1.0 <= time.monotonic() - began < 3.0
        assert bot._fault is None  # a time-out is the caller's to judge
    finally:
        bot.close()


def test_an_ended_output_and_a_broken_input_are_the_sandboxs_to_explain():
    bot = PipeBot()
    try:
        os.write(bot.bot_stdout, b"last words\n")
        os.close(bot.bot_stdout)
        assert bot.receive_line(1.0) == b"last words"
        with pytest.raises(BotFault) as caught:
            bot.receive_line(1.0)
        assert caught.value.detail == "closed its stdout" and bot.end_faults == ["stdout"]
    finally:
        bot.close()
    bot = PipeBot()
    try:
        os.close(bot.bot_stdin)
        with pytest.raises(BotFault) as caught:
            bot.send_line(b"hello")
        assert caught.value.detail == "closed its stdin" and bot.end_faults == ["stdin"]
    finally:
        bot.close()


def test_reading_a_pipe_is_bounded_and_says_its_end():
    read, write = os.pipe()
    os.set_blocking(read, False)
    got: list[bytes] = []
    try:
        assert read_chunks(read, got.append) == (False, False) and got == []
        os.write(write, b"a" * CHUNK)  # a full read: there may be more
        assert read_chunks(read, got.append, reads=1) == (True, False)
        os.write(write, b"b")
        assert read_chunks(read, got.append) == (False, False) and b"".join(got) == b"a" * CHUNK + b"b"
        os.close(write)
        assert read_chunks(read, got.append) == (False, True)
    finally:
        os.close(read)
    assert milliseconds(0.0011) == 2 and milliseconds(-1) == 0
