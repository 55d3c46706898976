"""RemoteBot's clocks and arena's own failures: the engine's work is never on a bot's clock,
and a start that fails on arena's side leaves nothing half-started behind.

A scripted sandbox stands in for a real one, so each case is exact and takes no engine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from arena.faults import BotFault, Reason, SandboxError
from arena.game.protocol import PROTOCOL_VERSION, Hello, LimitsInfo
from arena.game.seats import RemoteBot
from arena.sandbox.base import BotProcess, BotSpec, Limits, Sandbox

READY = json.dumps({"type": "ready", "name": "scripted", "version": "1", "protocol": PROTOCOL_VERSION}).encode()


class ScriptedProcess(BotProcess):
    """Answers `hello` with `ready` after `answer_after_s`, or fails on arena's side."""

    def __init__(self, answer_after_s: float = 0.0, fail: Exception | None = None):
        self.answer_after_s, self.fail = answer_after_s, fail
        self.sent: list[bytes] = []
        self.started = time.monotonic()
        self.closed = False

    def send_line(self, line: bytes) -> None:
        self.sent.append(line)

    def receive_line(self, timeout_s: float) -> bytes:
        if self.fail is not None:
            raise self.fail
        due = self.started + self.answer_after_s
        if time.monotonic() + timeout_s < due:
            time.sleep(max(0.0, timeout_s))
            raise BotFault(Reason.TIMEOUT, f"did not answer within {timeout_s:.3g} s")
        time.sleep(max(0.0, due - time.monotonic()))
        return READY

    def stderr_text(self) -> str:
        return ""

    def close(self) -> Reason | None:
        self.closed = True
        return None


class ScriptedSandbox(Sandbox):
    """`start` takes `engine_s` (the engine's create and start), then hands out the next process."""

    name = "scripted"

    def __init__(self, processes: list[ScriptedProcess], engine_s: float = 0.0):
        self.processes, self.engine_s = list(processes), engine_s
        self.started: list[ScriptedProcess] = []

    def start(self, bot: BotSpec, limits: Limits) -> BotProcess:
        time.sleep(self.engine_s)
        process = self.processes.pop(0)
        process.started = time.monotonic()  # the bot's process runs from here on
        self.started.append(process)
        return process


def remote_bot(sandbox: Sandbox, limits: Limits) -> RemoteBot:
    told = LimitsInfo(
        startup_s=limits.startup_s, decision_s=limits.decision_s, time_bank_s=limits.time_bank_s,
        max_line_bytes=limits.max_line_bytes, memory_mb=limits.memory_mb,
    )
    hello = Hello(game="nim-test", players=2, rules={}, games=1, seed=1, limits=told)
    return RemoteBot(BotSpec("scripted", Path("."), ("true",)), sandbox, limits, hello)


def test_the_start_up_clock_starts_when_the_process_runs_not_when_the_engine_is_asked():
    # The engine takes 0.6 s to create and start; the bot answers 0.2 s after it runs:
    # within its start-up limit of 0.5 s, though 0.8 s passed since the start was asked for.
    sandbox = ScriptedSandbox([ScriptedProcess(answer_after_s=0.2)], engine_s=0.6)
    bot = remote_bot(sandbox, Limits(startup_s=0.5))
    bot.ensure_started()
    assert (bot.starts, bot.said_name) == (1, "scripted")
    assert bot.startup_s[0] >= 0.8  # what the game waited, the engine's part included


def test_a_bot_slower_than_the_start_up_limit_still_times_out():
    sandbox = ScriptedSandbox([ScriptedProcess(answer_after_s=0.8)], engine_s=0.3)
    bot = remote_bot(sandbox, Limits(startup_s=0.5))
    with pytest.raises(BotFault) as fault:
        bot.ensure_started()
    assert (fault.value.reason, fault.value.detail) == (
        Reason.TIMEOUT, "did not answer 'hello' within the start-up limit of 0.5 s",
    )


def test_arena_failing_during_the_handshake_leaves_no_half_started_process():
    broken = ScriptedProcess(fail=SandboxError("the attach socket failed"))
    healthy = ScriptedProcess()
    sandbox = ScriptedSandbox([broken, healthy])
    bot = remote_bot(sandbox, Limits(startup_s=1))
    with pytest.raises(SandboxError, match="attach socket failed"):
        bot.ensure_started()
    assert broken.closed and bot.process is None
    # The retry (the referee's own start of a seat whose early start failed) starts afresh
    # and says hello to the new process: the bot is not left without its handshake.
    assert bot.ensure_started() is healthy
    assert [json.loads(line)["type"] for line in healthy.sent] == ["hello"]
