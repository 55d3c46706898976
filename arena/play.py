"""One scheduled game: the unit of work of a tournament, locally or on a cluster.

`play_scheduled_game(spec)` is a pure function of a small picklable `GameSpec` (game,
rules, seats with their bots by folder and content hash, deal seed, each bot's hello
seed, limits, sandbox) returning a `PlayedGame`. Every bot gets a fresh process for the
game; the bots start side by side. For benchmarks and tests, bots can also be Python
`Seat` factories (`in_process=`), which only a local run can use.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from arena.field import BotRef, SeatFactory
from arena.protocol import Hello, LimitsInfo, MatchOver
from arena.record import GameResult
from arena.referee import play_game
from arena.sandbox import BotFault, BotSpec, Limits, Sandbox, get_sandbox
from arena.seats import RemoteBot, Seat
from arena.tournament_file import LimitsConfig, TournamentError, _Strict


class GameSpec(_Strict):
    """Everything needed to play one scheduled game: small, picklable, no live objects."""

    key: str
    deal: str
    seed: int
    game: str
    rules: dict[str, Any]
    bots: list[BotRef]  # seat order
    bot_seeds: list[int]  # what each seat's bot gets in `hello` (`RunKey.bot_seed`), seat order
    limits: LimitsConfig
    sandbox: Literal["local", "docker"] = "local"


class PlayedGame(BaseModel):
    """The output of one game: the referee's record plus what the store keeps beside it."""

    key: str
    result: GameResult
    logs: list[str] = Field(description="The end of each seat's stderr in this game ('' if none).")
    duration_s: float
    startup_s: float = Field(description="Seconds the game waited for its bot processes to start.")


_sandboxes: dict[str, Sandbox] = {}
_sandbox_lock = threading.Lock()


def sandbox_named(name: str) -> Sandbox:
    """One sandbox object per kind per process (a cluster worker reuses it between games)."""
    with _sandbox_lock:
        if name not in _sandboxes:
            _sandboxes[name] = get_sandbox(name)
        return _sandboxes[name]


def close_sandboxes() -> None:
    """Close every sandbox this process made (`Sandbox.close()`: what warm slots hold);
    a worker process's last act."""
    with _sandbox_lock:
        boxes = list(_sandboxes.values())
    for box in boxes:
        box.close()


def limits_info(limits: Limits) -> LimitsInfo:
    """The part of the limits a bot is told in `hello`."""
    return LimitsInfo(
        startup_s=limits.startup_s,
        decision_s=limits.decision_s,
        time_bank_s=limits.time_bank_s,
        max_line_bytes=limits.max_line_bytes,
        memory_mb=limits.memory_mb,
    )


def remote_bot(
    bot: BotSpec,
    sandbox: Sandbox,
    limits: Limits,
    *,
    game: str,
    players: int,
    rules: Mapping[str, Any],
    games: int,
    seed: int,
) -> RemoteBot:
    """A bot program as a seat, with the `hello` it will get: the one way a tournament game
    and a match set a bot up (its seed from the run's key, `arena.seeds`)."""
    hello = Hello(game=game, players=players, rules=dict(rules), games=games, seed=seed, limits=limits_info(limits))
    return RemoteBot(bot, sandbox, limits, hello)


def play_scheduled_game(
    spec: GameSpec,
    in_process: Mapping[str, SeatFactory] | None = None,
    sandbox: Sandbox | None = None,
) -> PlayedGame:
    """Play one scheduled game, a fresh process per bot; faults are forfeits inside the result."""
    began = time.monotonic()
    box = sandbox or sandbox_named(spec.sandbox)
    limits = spec.limits.limits()
    players = len(spec.bots)
    seats: list[Seat] = []
    for bot, bot_seed in zip(spec.bots, spec.bot_seeds, strict=True):
        if bot.kind == "in-process":
            if not in_process or bot.id not in in_process:
                raise TournamentError([f"in-process bot {bot.id!r} is not available here"])
            seat = in_process[bot.id]()
            seat.name = bot.id
        else:
            seat = remote_bot(
                load_spec(bot), box, limits, game=spec.game, players=players, rules=spec.rules, games=1,
                seed=bot_seed,
            )
        seats.append(seat)
    try:
        seats = _start_together(seats)
        result = play_game(spec.game, seats, spec.rules, seed=spec.seed)
    finally:
        for seat in seats:
            seat.finish(MatchOver(games=1))
    remote = [seat.bot if isinstance(seat, _FaultAtStart) else seat for seat in seats]
    logs = [(seat.logs() or [""])[-1] if isinstance(seat, RemoteBot) else "" for seat in remote]
    # The bots start side by side: the game waits for the slowest one.
    startup = max((sum(seat.startup_s) for seat in remote if isinstance(seat, RemoteBot)), default=0.0)
    return PlayedGame(
        key=spec.key, result=result, logs=logs, duration_s=time.monotonic() - began, startup_s=startup
    )


class _FaultAtStart(Seat):
    """A bot whose start (done early, beside the others) faulted: the fault is raised when
    the referee starts the game, so it is charged exactly as a sequential start would be."""

    def __init__(self, bot: RemoteBot, fault: BotFault):
        self.bot, self.fault, self.name = bot, fault, bot.name

    def start_game(self, start) -> None:
        """Raise the start-up fault."""
        raise self.fault

    def send_events(self, events) -> None:
        """Never reached: the seat forfeited at the start."""

    def decide(self, observation, legal_actions):
        """Never reached: the seat forfeited at the start."""
        raise self.fault

    def game_over(self, message) -> None:
        """Never reached: the seat forfeited at the start."""

    def abandon(self):
        """Stop the bot's process."""
        return self.bot.abandon()

    def finish(self, message) -> None:
        """Free everything."""
        self.bot.finish(message)

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the bot's log."""
        return self.bot.log_tail(limit)


def _start_together(seats: list[Seat]) -> list[Seat]:
    """Start every bot process (handshake included) at once rather than one after another.

    A bot's start-up (an interpreter starting) is most of a short game's time; started side
    by side, a game waits for the slowest bot instead of the sum of them.
    """
    remote = [seat for seat in seats if isinstance(seat, RemoteBot)]
    if len(remote) < 2:
        return seats
    faults: dict[int, BotFault] = {}

    def start(seat: RemoteBot) -> None:
        try:
            seat._ensure_started()
        except BotFault as fault:
            faults[id(seat)] = fault
        except Exception:  # noqa: BLE001, S110 - arena's own failure:
            pass  # the referee's own start of this seat meets it again and raises it

    threads = [threading.Thread(target=start, args=(seat,), daemon=True) for seat in remote]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [_FaultAtStart(seat, faults[id(seat)]) if id(seat) in faults else seat for seat in seats]


def load_spec(bot: BotRef):
    """The sandbox's BotSpec of a folder bot."""
    from arena.sandbox import BotSpec

    return BotSpec(name=bot.id, folder=Path(bot.folder), command=tuple(bot.command), dockerfile=bot.dockerfile)
