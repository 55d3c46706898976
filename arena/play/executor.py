"""Playing one game: the one caller of the referee, for every way arena plays.

`play_seats(game, seats, ...)` plays a game between seats already set up (bots started
side by side, the referee, each seat done with the game) and returns a `PlayedGame`;
`store_game` keeps one in a store. A tournament and a league play `play_scheduled_game`
(below), `arena match` its bots' processes kept from game to game, `arena play`'s table
its people beside fresh bots; each bot gets its `hello` from `remote_bot`.

`play_scheduled_game(spec)` plays a small picklable `GameSpec` (game, rules, seats with
their bots by folder and content hash, deal seed, each bot's seed, limits, sandbox, how
bot processes live) and returns a `PlayedGame`; the bots start side by side. For
benchmarks and tests, bots can also be Python `Seat` factories (`in_process=`), which
only a local run can use.

Slots. Each remote seat of a game takes a slot of this process's `SlotPool` for the game
and gives it back at the end (also when the game fails). A slot is (run, bot, the seat
rotation of the duplicate deal, table size, k), k the first one free: a bot has as many
slots per rotation as it plays games of that rotation at once. Every game of one deal
has its own rotation, so no slot ever meets one deal twice, nor from two seats.
- `bot_process = "per-game"`: a fresh process per bot per game (`hello` with games = 1).
  With `warm_start`, it starts in the slot's warm sandbox slot (the local sandbox has it
  started ahead of need; Docker keeps the slot's container); without, cold.
- `bot_process = "per-slot"`: the slot keeps one process (a session, `RemoteBot` with
  `session=True`) for the whole run: it may carry memory from game to game. `hello`
  says games = the bot's number of games in the run (an upper bound); each `start`
  carries the game's seed; a process that faulted is replaced at the next game;
  `close_slots(run)` ends the sessions with `match_over` at the end of the run.
`play_scheduled_game` is a pure function of its spec for bots without memory: every
`start` carries the seed that seat would get as a fresh process.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from arena.config.field import BotRef, SeatFactory
from arena.config.tournament_file import LimitsConfig, Strict, TournamentError
from arena.faults import BotFault, SandboxError
from arena.game.protocol import Hello, MatchOver
from arena.game.record import GameResult
from arena.game.referee import Step, play_game
from arena.game.seats import RemoteBot, Seat
from arena.sandbox import BotSpec, Limits, Sandbox, get_sandbox
from arena.store.db import Store
from arena.store.keys import ScheduledGame
from arena.store.keys import rotation_of as key_rotation
from engine.api import Game


class AheadSlot(Strict):
    """A warm slot of a coming game, which the worker playing this one will also play:
    made ready (its container) while this game plays."""

    bot: BotRef
    rotation: str
    players: int


class GameSpec(Strict):
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
    runtime: Literal["runc", "runsc"] | None = None  # docker's; None: the machine's default
    bot_process: Literal["per-game", "per-slot"] = "per-game"
    warm_start: bool = False  # the runner passes its setting; alone, a game starts cold as before
    run: str = ""  # which run the game belongs to: slots (and their sessions) are per run
    bot_games: list[int] = Field(
        default_factory=list, description="Per seat, the bot's games in the run (per-slot `hello.games`)."
    )
    ahead: list[AheadSlot] = Field(
        default_factory=list, description="Warm slots to make ready for the worker's coming games."
    )


class PlayedGame(BaseModel):
    """The output of one game: the referee's record plus what the store keeps beside it."""

    key: str
    result: GameResult
    logs: list[str] = Field(description="The end of each seat's stderr in this game ('' if none).")
    duration_s: float
    startup_s: float = Field(description="Seconds the game waited for its bot processes to start.")


_sandboxes: dict[tuple[str, str | None], Sandbox] = {}
_sandbox_lock = threading.Lock()


def sandbox_named(name: str, runtime: str | None = None) -> Sandbox:
    """One sandbox object per kind (and Docker runtime) per process (a cluster worker
    reuses it between games). `runtime`: docker's runc or runsc; None, the default."""
    with _sandbox_lock:
        if (name, runtime) not in _sandboxes:
            settings = {"runtime": runtime} if runtime is not None else {}
            _sandboxes[name, runtime] = get_sandbox(name, **settings)
        return _sandboxes[name, runtime]


def close_sandboxes(sessions: bool = True) -> None:
    """End every bot session of this process (`sessions`, see `SlotPool.close`), then close
    every sandbox it made (`Sandbox.close()`: what warm slots hold); a worker process's
    last act."""
    if sessions:
        SLOTS.close()
    with _sandbox_lock:
        boxes = list(_sandboxes.values())
    for box in boxes:
        box.close()


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
    slot: str | None = None,
    session: bool = False,
) -> RemoteBot:
    """A bot program as a seat, with the `hello` it will get: the one way a tournament game
    and a match set a bot up (its seed from the run's key, `arena.store.seeds`)."""
    hello = Hello(game=game, players=players, rules=dict(rules), games=games, seed=seed, limits=limits.told())
    return RemoteBot(bot, sandbox, limits, hello, slot=slot, session=session)


def _prepare_ahead(spec: GameSpec, box: Sandbox, limits: Limits) -> None:
    """Have the sandbox make the coming games' warm slots ready in the background (a Docker
    slot's container), so that their first game does not wait for it. Best effort: a
    failure shows at the slot's first start, as it would have anyway."""
    prepare = getattr(box, "prepare", None)
    if prepare is None:
        return
    for ahead in spec.ahead:
        name = SLOTS.first_name(spec.run, ahead.bot, ahead.rotation, ahead.players)
        if name is None:
            continue
        try:
            prepare(load_spec(ahead.bot), limits, slot=name)
        except (SandboxError, TournamentError, OSError):
            pass  # said again, and charged as usual, at the slot's first start


# ---------------------------------------------------------------------------- slots


@dataclass(eq=False)
class Slot:
    """One bot's slot: at most one game at a time, and in per-slot mode its session."""

    name: str  # also the sandbox's warm slot
    key: tuple[str, str, str, str, int]  # (run, bot id, content hash, rotation, players)
    busy: bool = False
    closed: bool = False
    session: RemoteBot | None = None
    games: int = 0  # games played in the slot


def rotation_of(spec: GameSpec) -> str:
    """The seat rotation of the game's deal (its key is DEAL-ROTATION); "0" otherwise."""
    return key_rotation(spec.key, spec.deal)


def slot_name(key: tuple[str, str, str, str, int], k: int) -> str:
    """A slot's name: readable, unique per run, bot, rotation, table size and k; only
    letters, digits, '.', '_' and '-' (a container name may hold it)."""
    run, bot_id, content, rotation, players = key
    digest = hashlib.sha256(f"{bot_id}\0{content}".encode()).hexdigest()[:8]
    name = "".join(char if char.isalnum() or char in "._-" else "_" for char in bot_id)[:40]
    return f"{run or 'game'}-{name}-{digest}-r{rotation}-p{players}-{k}"


class SlotPool:
    """This process's slots (a cluster worker has its own). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[tuple, list[Slot]] = {}

    def acquire(self, run: str, bot: BotRef, rotation: str, players: int) -> Slot:
        """The first free slot of the bot for this rotation and table size (made if none is free)."""
        key = (run, bot.id, bot.content_hash, rotation, players)
        with self._lock:
            slots = self._slots.setdefault(key, [])
            for slot in slots:
                if not slot.busy and not slot.closed:
                    slot.busy = True
                    return slot
            slot = Slot(name=slot_name(key, len(slots)), key=key, busy=True)
            slots.append(slot)
            return slot

    def first_name(self, run: str, bot: BotRef, rotation: str, players: int) -> str | None:
        """The name the bot's first slot for this rotation and table size will have, if it
        has none yet (None if it has)."""
        key = (run, bot.id, bot.content_hash, rotation, players)
        with self._lock:
            return None if self._slots.get(key) else slot_name(key, 0)

    def release(self, slot: Slot, *, keep: bool = True) -> None:
        """The slot's game is over; `keep=False` (the game failed) or a closed slot ends its session."""
        with self._lock:
            slot.busy = False
            end = slot.closed or not keep
            session = slot.session if end else None
            if end:
                slot.session = None
        if session is not None:
            _end_session(session)

    def close(self, run: str | None = None) -> int:
        """End the sessions of `run` (every run: None) with `match_over`; a slot whose game is
        still being played ends its session when it is released. Returns how many ended."""
        with self._lock:
            keys = [key for key in self._slots if run is None or key[0] == run]
            slots = [slot for key in keys for slot in self._slots.pop(key)]
            ending = []
            for slot in slots:
                slot.closed = True
                if not slot.busy and slot.session is not None:
                    ending.append(slot.session)
                    slot.session = None
        for session in ending:
            _end_session(session)
        return len(ending)

    def slots(self, run: str | None = None) -> list[Slot]:
        """The slots of `run` (or all), for tests and diagnostics."""
        with self._lock:
            return [slot for key, slots in self._slots.items() if run is None or key[0] == run for slot in slots]


def _end_session(session: RemoteBot) -> None:
    """`match_over` with the games its process played, then the process is stopped."""
    session.finish(MatchOver(games=session.process_games))


SLOTS = SlotPool()


def close_slots(run: str | None = None) -> int:
    """End the run's sessions in this process (the end of a run, Ctrl-C, a cluster worker)."""
    return SLOTS.close(run)


# ------------------------------------------------------------------------- one game


def play_scheduled_game(
    spec: GameSpec,
    in_process: Mapping[str, SeatFactory] | None = None,
    sandbox: Sandbox | None = None,
) -> PlayedGame:
    """Play one scheduled game (processes as `spec.bot_process` says); faults are forfeits
    inside the result."""
    limits = spec.limits.limits()
    players = len(spec.bots)
    per_slot = spec.bot_process == "per-slot"
    if per_slot and len(spec.bot_games) != players:
        raise TournamentError(["a per-slot game needs bot_games: each seat's number of games in the run"])
    box = sandbox
    seats: list[Seat] = []
    slots: list[Slot] = []
    failed = True
    try:
        for index, (bot, bot_seed) in enumerate(zip(spec.bots, spec.bot_seeds, strict=True)):
            if bot.kind == "in-process":
                if not in_process or bot.id not in in_process:
                    raise TournamentError([f"in-process bot {bot.id!r} is not available here"])
                seat = in_process[bot.id]()
                seat.name = bot.id
                seats.append(seat)
                continue
            box = box or sandbox_named(spec.sandbox, spec.runtime)
            slot = SLOTS.acquire(spec.run, bot, rotation_of(spec), players)
            slots.append(slot)
            if per_slot:
                if slot.session is not None and slot.session.process_games >= slot.session.hello.games:
                    # As many games as its hello said (a league's sessions): the next is fresh.
                    _end_session(slot.session)
                    slot.session = None
                if slot.session is None:
                    # The session is the slot's warm resource: a replacement starts cold.
                    slot.session = remote_bot(
                        load_spec(bot), box, limits, game=spec.game, players=players, rules=spec.rules,
                        games=max(1, spec.bot_games[index]), seed=bot_seed, session=True,
                    )
                seat = slot.session
            else:
                seat = remote_bot(
                    load_spec(bot), box, limits, game=spec.game, players=players, rules=spec.rules, games=1,
                    seed=bot_seed, slot=slot.name if spec.warm_start else None,
                )
            seat.begin_game(bot_seed)
            seats.append(seat)
        played = play_seats(
            spec.game, seats, spec.rules, seed=spec.seed, key=spec.key,
            # The pool asks only for warm per-game slots; made ready once this game's bots run.
            started=(lambda: _prepare_ahead(spec, box, limits)) if spec.ahead and box is not None else None,
        )
        failed = False
    finally:
        for slot in slots:
            slot.games += 0 if failed else 1
            SLOTS.release(slot, keep=not failed)
    return played


def play_seats(
    game: str | Game,
    seats: Sequence[Seat],
    rules: Mapping[str, Any],
    *,
    seed: int,
    key: str = "",
    game_number: int = 1,
    on_step: Step | None = None,
    keep: bool = False,
    started: Callable[[], None] | None = None,
) -> PlayedGame:
    """Play one game between seats already set up: the one call of the referee in arena.

    The bots' processes start side by side (`started`, if given, is called once they run),
    the referee plays the game (a fault is a forfeit inside the result), then every seat is
    done with it: a session's game ends, any other seat is finished (`match_over`), unless
    `keep` (a match keeps its processes for its next game). The `PlayedGame` holds the end
    of each seat's stderr in this game and how long the game waited for its bots."""
    began = time.monotonic()
    marks = {id(seat): len(seat.startup_s) for seat in seats if isinstance(seat, RemoteBot)}
    playing = list(seats)
    try:
        playing = _start_together(playing)
        if started is not None:
            started()
        result = play_game(game, playing, rules, seed=seed, game_number=game_number, on_step=on_step)
    finally:
        if not keep:
            for seat in playing:
                bot_seat = seat.bot if isinstance(seat, _FaultAtStart) else seat
                if isinstance(bot_seat, RemoteBot) and bot_seat.session:
                    bot_seat.end_game()
                else:
                    seat.finish(MatchOver(games=1))
    remote = [seat.bot if isinstance(seat, _FaultAtStart) else seat for seat in playing]
    logs = [seat.game_log() if isinstance(seat, RemoteBot) else "" for seat in remote]
    # The bots start side by side: the game waits for the slowest one.
    startup = max(
        (sum(seat.startup_s[marks[id(seat)]:]) for seat in remote if isinstance(seat, RemoteBot)), default=0.0
    )
    return PlayedGame(key=key, result=result, logs=logs, duration_s=time.monotonic() - began, startup_s=startup)


def store_game(store: Store, played: PlayedGame, scheduled: ScheduledGame | None = None) -> None:
    """Keep a played game in the store (`DuplicateResult` if its key has a result already):
    its schedule row first when it was not scheduled ahead (`scheduled`: a table's game)."""
    if scheduled is not None:
        store.schedule([scheduled])
    store.record(played.key, played.result, duration_s=played.duration_s, logs=played.logs)


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
    # A session that runs already has nothing to start: no thread for it.
    remote = [seat for seat in seats if isinstance(seat, RemoteBot) and seat.process is None]
    if len(remote) < 2:
        return seats
    faults: dict[int, BotFault] = {}

    def start(seat: RemoteBot) -> None:
        try:
            seat.ensure_started()
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

    return BotSpec(name=bot.id, folder=Path(bot.folder), command=tuple(bot.command), dockerfile=bot.dockerfile,
        language=bot.language, build=tuple(bot.build),
    )
