"""Who sits in a seat, as the referee sees it: a `Seat` takes protocol messages and
returns legal actions, or raises BotFault.

`RemoteBot` is a bot program in a sandbox (one process for the whole match, restarted
for the next game after a fault). In a tournament it is either one game's process or a
session (`session=True`: one process kept by a slot for many games of a run, see
`arena.play.executor`): then each game gets its own time bank and CPU budget (the process's CPU
time measured per game, `BotProcess.cpu_time_s`), `start` and `game_over` number the
session's own games, and a process that ended between games is replaced without a
charge. `InProcessBot` runs a Python `decide` function in this process through the same
JSON messages (for tests and the benchmark's baseline).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import orjson

from arena.game.protocol import (
    PROTOCOL_VERSION,
    ActionAnswer,
    GameOver,
    Hello,
    MatchOver,
    Ready,
    Start,
    decode_bot,
    encode,
    encode_events,
    encode_request,
)
from arena.faults import BotFault, Reason
from arena.sandbox.base import BotProcess, BotSpec, Limits, Sandbox
from arena.sandbox.common import TimeBank
from engine.api import Action, Event, Observation

# What the replay keeps of a bot's stderr per decision (the whole log is kept apart).
DECISION_LOG_LINES = 20  # lines of one decision
DECISION_LOG_LINE_CHARS = 300  # characters of one line
GAME_LOG_CHARS = 20_000  # characters of one seat's lines in one game


# Cores a bot's processes can run on at once (how fast its CPU time can grow).
CORES = os.cpu_count() or 1

class Seat(ABC):
    """A player as the referee drives it. Any method may raise BotFault (the seat forfeits).

    After `decide` returns, `last_think_s` says how long the bot took and `last_stderr` is
    the list of what it writes to stderr for that decision: filled by the seat from the
    request until its next request, its game over or its end (lines that travel apart from
    the answer, as a container's do, have arrived by then). None: this seat does not
    measure. The replay keeps both.
    """

    name: str
    last_think_s: float | None = None
    last_stderr: list[str] | None = None

    @abstractmethod
    def start_game(self, start: Start) -> None:
        """A game begins (starts the bot first if needed)."""

    @abstractmethod
    def send_events(self, events: list[Event]) -> None:
        """Tell the seat what it saw happen since the last call."""

    @abstractmethod
    def decide(self, observation: Observation, legal_actions: list[Action]) -> Action:
        """One of `legal_actions` (the very object), chosen by the bot."""

    @abstractmethod
    def game_over(self, message: GameOver) -> None:
        """The game has ended."""

    def abandon(self) -> Reason | None:
        """Stop the bot after a fault (it forfeits this game); OUT_OF_MEMORY if it was killed for memory."""
        return None

    def finish(self, message: MatchOver) -> None:
        """The match is over: say so and free everything."""

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the bot's log, for incident records."""
        return ""

    _request_id = 0  # the id of the last request sent (ids count up through the whole match)

    @property
    def last_request(self) -> int | None:
        """The id of the last request sent to the bot (as the bot saw it), None before the first."""
        return self._request_id or None


def resolve_answer(answer: ActionAnswer, request_id: int, legal_actions: list[Action]) -> Action:
    """The legal action an `action` answer names; BotFault BAD_MESSAGE / ILLEGAL_ACTION otherwise."""
    if answer.id != request_id:
        raise BotFault(
            Reason.BAD_MESSAGE,
            f"answered request {answer.id} but request {request_id} was asked",
        )
    if answer.index is not None:
        if not 0 <= answer.index < len(legal_actions):
            raise BotFault(
                Reason.ILLEGAL_ACTION,
                f"chose index {answer.index}; allowed: 0..{len(legal_actions) - 1}",
            )
        return legal_actions[answer.index]
    for action in legal_actions:
        if action == answer.action:
            return action
    # Only the bot's own words and the count are echoed: nothing hidden can leak.
    shown = json.dumps(answer.action, sort_keys=True)[:200]
    raise BotFault(
        Reason.ILLEGAL_ACTION,
        f"chose {shown}, which is not one of the {len(legal_actions)} legal actions",
    )


class RemoteBot(Seat):
    """A bot program in a sandbox, speaking the JSON protocol; one process per match (or per
    tournament game, or per session: see the module docstring)."""

    def __init__(
        self, spec: BotSpec, sandbox: Sandbox, limits: Limits, hello: Hello, *, slot: str | None = None,
        session: bool = False,
    ):
        self.spec = spec
        self.name = spec.name
        self.sandbox = sandbox
        self.limits = limits
        self.hello = hello
        self.slot = slot  # the sandbox's warm slot its processes start in (None: cold)
        self.session = session
        # A session's process lives for many games: the CPU limit the sandbox sets at start
        # is the sum of the per-game budgets of the games it may play (a backstop); each
        # game's own budget is measured (`_check_cpu`).
        self.process_limits = (
            dataclasses.replace(limits, cpu_s=limits.cpu_s * max(1, hello.games)) if session else limits
        )
        self.process: BotProcess | None = None
        self.bank = TimeBank(limits.decision_s, limits.time_bank_s)
        self.said_name: str | None = None
        self.said_version: str | None = None
        self.starts = 0
        self.startup_s: list[float] = []
        self.decision_s: list[float] = []
        self._request_id = 0
        self._logs: list[str] = []
        self.process_games = 0  # games the current process has been told to start
        self._game_seed: int | None = None
        self._game_number = 0
        self._cpu_charged = 0.0  # the process's CPU time at the end of its last game
        self._cpu_seen: tuple[float, float] | None = None  # (monotonic, CPU time) when last read
        self._pending: BotFault | None = None
        self._events: bytes | None = None  # an `events` line not written yet (see send_events)
        self._log_mark: tuple[int, str] = (0, "")
        self._log_chars_left = GAME_LOG_CHARS
        self._open_lines: list[str] | None = None  # the last decision's stderr lines, still open
        self._open_mark = 0  # where in the stderr stream that decision's request was sent

    # -- the process ---------------------------------------------------------------------

    def ensure_started(self) -> BotProcess:
        """The bot's running process: started and greeted (`hello`, `ready`) if it has none
        (a game's first `start_game` does it; the executor does it for several bots at once)."""
        if self.process is not None:
            return self.process
        asked = time.monotonic()
        # The engine's work (image, create, start) is not the bot's: its clock starts only
        # once `start` has returned, i.e. once its process runs.
        if self.slot is None:  # (a sandbox written before warm slots takes no slot)
            self.process = self.sandbox.start(self.spec, self.process_limits)
        else:
            self.process = self.sandbox.start(self.spec, self.process_limits, slot=self.slot)
        began = time.monotonic()
        self.starts += 1
        self.process_games = 0
        self._cpu_charged = 0.0
        self._cpu_seen = None
        # A restarted bot (after a fault) gets a fresh time bank: its fault already cost it a game.
        self.bank = TimeBank(self.limits.decision_s, self.limits.time_bank_s)
        try:
            self.process.send_line(encode(self.hello))
            remaining = self.limits.startup_s - (time.monotonic() - began)
            line = self.process.receive_line(max(0.0, remaining))
        except BotFault as fault:
            if fault.reason is Reason.TIMEOUT:
                raise BotFault(
                    Reason.TIMEOUT,
                    f"did not answer 'hello' within the start-up limit of {self.limits.startup_s:g} s",
                ) from None
            raise
        except BaseException:
            # arena's own failure: no half-started process is kept (a retry starts afresh
            # and says hello again); the bot is not charged.
            process, self.process = self.process, None
            try:
                process.close()
            except Exception:  # noqa: BLE001, S110 - the first failure is the one to report
                pass
            raise
        ready = decode_bot(line)
        if not isinstance(ready, Ready):
            raise BotFault(Reason.BAD_MESSAGE, f"answered 'hello' with {ready.type!r}; expected 'ready'")
        if ready.protocol != PROTOCOL_VERSION:
            raise BotFault(
                Reason.BAD_MESSAGE,
                f"speaks protocol {ready.protocol}; this arena speaks {PROTOCOL_VERSION}",
            )
        self.said_name, self.said_version = ready.name, ready.version
        self.startup_s.append(time.monotonic() - asked)  # what the game waited, engine included
        return self.process

    def _send(self, message: Any) -> None:
        if self.process is not None:
            self.process.send_line(self._with_events(encode(message)))

    def _with_events(self, line: bytes) -> bytes:
        """`line`, after the `events` line held back for it: both go in one write."""
        if self._events is None:
            return line
        line, self._events = self._events + b"\n" + line, None
        return line

    # -- a tournament's games -------------------------------------------------------------

    def begin_game(self, seed: int | None = None) -> None:
        """Before a tournament game: `seed` goes in its `start` (the bot's seed for this game).

        A session also gets a fresh time bank; its process, if it ended since the last game
        (a bot that plays one game per process), is replaced without a charge, and a line
        it wrote between games is a fault of this game (spoke out of turn)."""
        self._game_seed = seed
        self._pending = None
        if self.session and self.process is not None:
            try:
                stray = self.process.poll_line()
            except BotFault:
                self._stop()
            else:
                if stray is not None:
                    self._pending = BotFault(
                        Reason.BAD_MESSAGE, f"spoke out of turn between games: wrote {stray[:80]!r}"
                    )
        if self.process is None and seed is not None:
            self.hello = self.hello.model_copy(update={"seed": seed})
        self.bank = TimeBank(self.limits.decision_s, self.limits.time_bank_s)
        self._log_mark = (len(self._logs), self.process.stderr_text() if self.process is not None else "")

    def end_game(self) -> None:
        """After a session's game: the CPU time so far is this game's (the next one's counts from here)."""
        if self.process is not None:
            self._cpu_charged = self.process.cpu_time_s() or 0.0
            self._cpu_seen = (time.monotonic(), self._cpu_charged)

    def _check_cpu(self) -> None:
        """A session's game is over its CPU budget: TIMEOUT (the process's CPU time since the
        end of its last game, or since it started)."""
        if not self.session or self.process is None:
            return
        now = time.monotonic()
        if self._cpu_seen is not None:
            # CPU time grows no faster than the wall clock on every core: while even that could
            # not have reached the budget, the accounting need not be read (a file read, the
            # largest cost of a decision after the JSON).
            seen_at, seen = self._cpu_seen
            if seen - self._cpu_charged + (now - seen_at) * CORES <= self.limits.cpu_s:
                return
        used = self.process.cpu_time_s()
        if used is not None:
            self._cpu_seen = (now, used)
        if used is not None and used - self._cpu_charged > self.limits.cpu_s:
            raise BotFault(
                Reason.TIMEOUT,
                f"used {used - self._cpu_charged:.1f} s of CPU in this game, over its budget of "
                f"{self.limits.cpu_s} s per game",
            )

    def game_log(self) -> str:
        """What the bot wrote to stderr since `begin_game` (the whole log of a process
        started since; as far as the kept log reaches)."""
        logs = self.logs()[self._log_mark[0]:]
        if not logs:
            return ""
        mark = self._log_mark[1]
        if len(logs) == 1 and mark and logs[0].startswith(mark):
            return logs[0][len(mark):]
        return logs[-1]

    # -- Seat ----------------------------------------------------------------------------

    def start_game(self, start: Start) -> None:
        """Start the process if needed (handshake), then announce the game."""
        self._log_chars_left = GAME_LOG_CHARS
        self._open_lines = None
        process = self.ensure_started()
        if self._pending is not None:
            fault, self._pending = self._pending, None
            raise fault
        self.process_games += 1
        update: dict[str, Any] = {}
        if self.session:
            update["game_number"] = self.process_games
        if self._game_seed is not None:
            update["seed"] = self._game_seed
        if update:
            start = start.model_copy(update=update)
        self._game_number = start.game_number
        process.send_line(encode(start))

    def send_events(self, events: list[Event]) -> None:
        """Send what this seat saw since the last call (nothing when there is nothing).

        The line is written with the message that follows it (the request, or `game_over`),
        in one write: the bot is woken once per decision instead of twice, and reads the same
        bytes in the same order."""
        if events and self.process is not None:
            line = encode_events(events)
            self._events = line if self._events is None else self._events + b"\n" + line

    def decide(self, observation: Observation, legal_actions: list[Action]) -> Action:
        """Ask for a decision within the per-decision limit plus the time bank."""
        process = self.ensure_started()
        stray = process.poll_line()
        if stray is not None:
            raise BotFault(
                Reason.BAD_MESSAGE,
                f"spoke out of turn: wrote {stray[:80]!r} when no answer was asked for",
            )
        self._request_id += 1
        allowance = self.bank.allowance()
        self._end_lines(process)  # the previous decision's lines end at this request
        mark = process.stderr_mark()
        request = self._with_events(
            encode_request(
                self._request_id, observation, legal_actions, round(allowance, 3), round(self.bank.remaining_s, 3)
            )
        )
        # The clock starts before the write: the bot may read the request, think and answer
        # before `send_line` returns (this thread descheduled), and all of that is its time.
        # So is a write that waits because the bot does not read its input.
        began = time.monotonic()
        process.send_line(request)
        try:
            line = process.receive_line(max(0.0, allowance - (time.monotonic() - began)))
        except BotFault as fault:
            if fault.reason is Reason.TIMEOUT:
                raise BotFault(
                    Reason.TIMEOUT,
                    f"gave no answer within {allowance:.3g} s (decision limit "
                    f"{self.limits.decision_s:g} s plus what was left of the time bank)",
                ) from None
            raise
        elapsed = time.monotonic() - began
        self.bank.charge(elapsed)
        self.decision_s.append(elapsed)
        self._check_cpu()
        self.last_think_s = round(elapsed, 6)
        self.last_stderr = self._open_lines = []
        self._open_mark = mark
        answer = decode_bot(line)
        if not isinstance(answer, ActionAnswer):
            raise BotFault(Reason.BAD_MESSAGE, f"answered a request with {answer.type!r}; expected 'action'")
        return resolve_answer(answer, self._request_id, legal_actions)

    def _end_lines(self, process: BotProcess) -> None:
        """Fill the last decision's stderr lines with what came since its request."""
        if self._open_lines is None:
            return
        lines, self._open_lines = self._open_lines, None
        lines.extend(self._decision_lines(process.stderr_since(self._open_mark)) or ())

    def _decision_lines(self, text: str) -> list[str] | None:
        """The lines of one decision's stderr as the replay keeps them (capped); None if none."""
        if not text or self._log_chars_left <= 0:
            return None
        lines = text.splitlines()
        kept = [line[:DECISION_LOG_LINE_CHARS] for line in lines[:DECISION_LOG_LINES]]
        size = sum(len(line) for line in kept)
        full = size > self._log_chars_left
        while kept and size > self._log_chars_left:
            size -= len(kept.pop())
        # Once the game's budget is spent, later decisions keep nothing (the log has it all).
        self._log_chars_left = 0 if full else self._log_chars_left - size
        if len(kept) < len(lines):
            kept.append(f"[... {len(lines) - len(kept)} more lines in the bot's log]")
        return kept

    def game_over(self, message: GameOver) -> None:
        """Tell the bot the result."""
        self._check_cpu()
        if self.session:
            message = message.model_copy(update={"game_number": self._game_number})
        if self.process is not None:
            self._end_lines(self.process)
        self._send(message)

    def abandon(self) -> Reason | None:
        """Kill the process; the next game starts a new one."""
        return self._stop()

    def finish(self, message: MatchOver) -> None:
        """Say the match is over, then kill the process and everything it started."""
        try:
            self._send(message)
        except BotFault:
            pass
        self._stop()

    def _stop(self) -> Reason | None:
        if self.process is None:
            return None
        process, self.process = self.process, None
        self._events = None
        reason = process.close()
        self._end_lines(process)  # after close: the log holds everything the process wrote
        self._logs.append(process.stderr_text())
        return reason

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the current (or last) process's log (a session's: of this game)."""
        if self.session:
            return self.game_log()[-limit:]
        text = self.process.stderr_text() if self.process is not None else (self._logs[-1] if self._logs else "")
        return text[-limit:]

    def logs(self) -> list[str]:
        """The kept log of every process this bot ran in the match (the current one last)."""
        current = [self.process.stderr_text()] if self.process is not None else []
        return self._logs + current


class InProcessBot(Seat):
    """A Python `decide(observation, legal_actions)` in this process, through JSON messages."""

    def __init__(self, decide: Callable[[Observation, list[Action]], Any], name: str = "in-process"):
        self.name = name
        self._decide = decide
        self._request_id = 0

    def start_game(self, start: Start) -> None:
        """Nothing to start."""

    def send_events(self, events: list[Event]) -> None:
        """Events are ignored."""

    def decide(self, observation: Observation, legal_actions: list[Action]) -> Action:
        """Round-trip the request and the answer through JSON, as a bot process would."""
        self._request_id += 1
        # orjson reads our own JSON to the same values as json.loads, faster.
        seen = orjson.loads(encode_request(self._request_id, observation, legal_actions, 1.0, 0.0))
        choice = self._decide(seen["observation"], seen["legal_actions"])
        answer: dict[str, Any] = {"type": "action", "id": seen["id"]}
        answer["action" if isinstance(choice, dict) else "index"] = choice
        parsed = decode_bot(orjson.dumps(answer))
        assert isinstance(parsed, ActionAnswer)
        return resolve_answer(parsed, self._request_id, legal_actions)

    def game_over(self, message: GameOver) -> None:
        """Nothing to tell."""
