"""Running a tournament: schedule its games, play them, store each as it finishes.

`run_tournament(config)` resolves the bots (`arena.config.field`), schedules the games
(`arena.schedule.formats`), plays the games not yet stored with `jobs` at once (each one
`arena.play.executor.play_scheduled_game`, in worker processes (`arena.play.workers`), in threads or on a
cluster), and commits each finished
game to the store (`arena.store.db`) as soon as it finishes; ratings are fed in schedule
order as games come in (`arena.ratings.ledger`). Running it again on the same output folder
resumes: finished games are never played again; a changed file is refused, naming what
changed (`arena.config.tournament_file`). Swiss rounds are scheduled only once the previous
round is all stored.

The tournament file, the field, one game and the ratings live in their own modules; the
names a caller needs are imported here too (`from arena.play.tournament import ...`).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.config.field import BotRef, SeatFactory, load_tournament, resolve_bots
from arena.config.fingerprint import changed_settings, fingerprint_of, settings_of
from arena.config.tournament_file import (
    FORMATS,
    SANDBOXES,
    LimitsConfig,
    RatingConfig,
    SettingsChanged,
    TournamentConfig,
    TournamentError,
    swiss_seats_note,
    validate_config,
)
from arena.langs.build import BuildFailed, build_bots
from arena.ratings.ledger import RatingTable
from arena.ratings.results import (
    OrderedLedger,
    rated_game,
    rated_games,
    store_ledger,
    stored_standings,
)
from arena.faults import BotFault
from arena.play.executor import GameSpec, PlayedGame, load_spec, play_scheduled_game
from arena.play.runner import Runner, render_report
from arena.ratings.skills import RatingSettings, RatingSettingsError
from arena.sandbox import Sandbox
from arena.schedule.formats import ScheduleError, gauntlet, round_robin
from arena.schedule.swiss import SwissEntry, swiss_round
from arena.store.db import Store
from arena.store.keys import ScheduledGame
from arena.store.lock import one_writer
from arena.store.seeds import RunKey

__all__ = [
    "FORMATS", "SANDBOXES", "BotRef", "GameSpec", "LimitsConfig", "PlayedGame", "Progress", "RatingConfig",
    "SeatFactory", "SettingsChanged", "SiteInterrupted", "TournamentConfig", "TournamentError", "TournamentInterrupted",
    "TournamentOutcome", "load_spec", "load_tournament", "play_scheduled_game", "resolve_bots", "run_tournament",
    "validate_config",
]


class SiteInterrupted(Exception):
    """Ctrl-C while the site was being written at the end of a run: every game is stored,
    the site is incomplete (`arena report DIR` finishes it)."""

    def __init__(self, done: int, total: int, output: Path):
        self.done, self.total, self.output = done, total, output
        super().__init__(f"stopped while writing the site of {output}; its {done} of {total} games are stored")


class TournamentInterrupted(Exception):
    """The run was stopped (Ctrl-C); every finished game is stored."""

    def __init__(self, done: int, total: int, output: Path):
        self.done, self.total, self.output = done, total, output
        super().__init__(f"stopped with {done} of {total} games stored in {output}")


# --------------------------------------------------------------------- the runner


@dataclass
class Progress:
    """What a progress display needs after each stored game."""

    done: int
    total: int
    played: int  # games played by this run (the rest were stored before)
    key: str | None
    leader: str | None
    elapsed_s: float


@dataclass
class TournamentOutcome:
    """How a run ended: standings over everything stored, and what this run did."""

    output: Path
    total: int
    done: int
    played: int
    resumed: int  # games already stored when the run began
    standings: RatingTable
    wall_s: float
    game_s: float  # sum of game durations played by this run
    startup_s: float  # of which starting bot processes
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every scheduled game is stored."""
        return self.done == self.total


class _Tournament(Runner):
    """One run of a tournament: its schedule is the runner's source of games."""

    config: TournamentConfig

    def __init__(self, config, store, key, field_bots, challengers, in_process, progress, stop, sandbox, hidden=()):
        super().__init__(config, store, key, in_process=in_process, stop=stop, sandbox=sandbox)
        self.bots = {bot.id: bot for bot in [*field_bots, *challengers]}
        self.field = [bot.id for bot in field_bots]
        self.challengers = [bot.id for bot in challengers]
        self.progress = progress
        self.bot_counts: Counter[str] = Counter()
        self.hidden = list(hidden)
        self.game_s = 0.0
        self.startup_s = 0.0
        self._leader: str | None = None
        self._leader_at = 0.0
        self.ratings = OrderedLedger(store_ledger(store, results=False))
        for result in rated_games(store):
            self.ratings.add(result)
        self.deals: dict[str, str] = {}
        self.total = 0
        self.done = 0
        self.next_round = 1  # Swiss: the round to schedule once the one before is stored
        self.unstored: set[str] = set()  # games queued and not stored yet

    def start(self, allow_changes: bool) -> None:
        """Schedule what is known before any game is played: a round-robin's or a gauntlet's
        every game (Swiss rounds come one by one, `refill`)."""
        if self.config.format == "swiss":
            self.total = self.swiss_total()
            return
        games = self.full_schedule()
        done = self.store.done_keys()
        self.scheduled([game for game in games if game.key not in done] if allow_changes else games)
        self.total = len(self.store.games())
        self.enqueue(games)

    def enqueue(self, games: Sequence[ScheduledGame]) -> None:
        """Queue the games not stored yet, in schedule order."""
        done = self.store.done_keys()
        pending = [game for game in games if game.key not in done]
        self.done = len(done)
        self.queue = list(reversed(pending))
        self.unstored = {game.key for game in pending}

    def refill(self) -> None:
        """Swiss: the next round, once every game of the one before is stored."""
        while (
            self.config.format == "swiss" and not self.queue and not self.unstored
            and self.next_round <= self.config.rounds
        ):
            games = self.swiss_schedule(self.next_round)
            self.next_round += 1
            self.scheduled(games)
            self.enqueue(games)

    def finished(self) -> bool:
        return not self.queue and not (self.config.format == "swiss" and self.next_round <= self.config.rounds)

    def bot_games(self, bot: str) -> int:
        return self.bot_counts[bot]

    def scheduled(self, games: Sequence[ScheduledGame]) -> None:
        """Store newly scheduled games and tell the ratings the schedule's order."""
        self.store.schedule(games)
        stored = self.store.games()
        self.deals = {game.key: game.deal for game in stored}
        if self.config.format == "swiss":  # at most one table a round, each of its rotations
            per_round = self.config.seats if self.config.duplicate else 1
            self.bot_counts = Counter({bot: self.config.rounds * per_round for bot in self.bots})
        else:
            self.bot_counts = Counter(bot for game in stored for bot in game.bots)
        self.ratings.schedule([game.key for game in stored])

    def swiss_total(self) -> int:
        """How many games a Swiss tournament has: rounds times one round's games."""
        first = swiss_round(
            [SwissEntry(bot) for bot in self.field], self.config.seats, round=1, seed=self.key,
            duplicate=self.config.duplicate,
        )
        return len(first) * self.config.rounds

    def full_schedule(self) -> list[ScheduledGame]:
        """The whole schedule of a round-robin or gauntlet."""
        c = self.config
        if c.format == "round-robin":
            return round_robin(self.field, c.seats, seed=self.key, rounds=c.rounds, cycles=c.cycles, duplicate=c.duplicate)
        return gauntlet(self.challengers, self.field, c.seats, seed=self.key, rounds=c.rounds or 1, duplicate=c.duplicate)

    def swiss_schedule(self, round_no: int) -> list[ScheduledGame]:
        """Swiss round `round_no` from the stored standings (every earlier round is stored)."""
        stored = [game for game in self.store.games() if game.round == round_no]
        if stored:
            return [game.scheduled() for game in stored]
        # Every earlier round is stored and rated by now: the ledger holds the standings.
        standings = self.ratings.ledger.table().standings
        history = [game.scheduled() for game in self.store.games()]
        return swiss_round(
            standings, self.config.seats, round=round_no, seed=self.key, history=history,
            duplicate=self.config.duplicate,
        )

    def leader(self) -> str | None:
        """The current leader, recomputed at most once a second (display only)."""
        now = time.monotonic()
        if self._leader is None or now - self._leader_at >= 1.0:
            table = self.ratings.ledger.table().standings
            self._leader = table[0].bot if table and table[0].games else None
            self._leader_at = now
        return self._leader

    def commit(self, game: ScheduledGame, played: PlayedGame, drained: bool = False) -> None:
        self.unstored.discard(game.key)
        super().commit(game, played, drained)

    def game_stored(self, game: ScheduledGame, played: PlayedGame, drained: bool) -> None:
        """Rate the game and say how far the tournament is (not while stopping after Ctrl-C)."""
        if drained:
            return
        deal = self.deals[played.key] if self.config.duplicate else None
        self.ratings.add(rated_game(played.key, deal, played.result))
        self.done += 1
        self.game_s += played.duration_s
        self.startup_s += played.startup_s
        if self.progress is not None:
            self.progress(
                Progress(
                    done=self.done,
                    total=self.total,
                    played=self.played,
                    key=played.key,
                    leader=self.leader(),
                    elapsed_s=time.monotonic() - self.began,
                )
            )


def run_tournament(
    config: TournamentConfig,
    *,
    progress: Callable[[Progress], None] | None = None,
    in_process: Mapping[str, SeatFactory] | None = None,
    allow_changes: bool = False,
    stop: threading.Event | None = None,
    sandbox: Sandbox | None = None,
    report: bool = True,
    notice: Callable[[str], None] | None = None,
) -> TournamentOutcome:
    """Run (or resume) a tournament into its output folder; returns the standings.

    Raises TournamentError (bad bots, changed settings), FolderBusy (another arena plays
    into the folder: one writer per folder, `arena.store.lock`), TournamentInterrupted
    (Ctrl-C or `stop` set: every finished game is stored), or arena's own SandboxError.
    `report=False` skips the HTML site (benchmarks). `notice` is told, before any game, what
    the games will be other than the settings say: a Swiss whose field `seats` does not
    divide plays smaller tables (`swiss_seats_note`).
    """
    field_bots, challengers = resolve_bots(config, in_process)
    if config.format == "swiss":
        if len(field_bots) < config.seats:  # as a round-robin and a gauntlet: no table of `seats` could be
            raise TournamentError([f"schedule: a Swiss at {config.seats} seats needs at least {config.seats} bots, "
                                   f"got {len(field_bots)}; lower seats or add bots"])
        note = swiss_seats_note(len(field_bots), config.seats)
        if note and notice is not None:
            notice(note)
    try:
        RatingSettings(**config.rating.model_dump())
    except RatingSettingsError as error:
        raise TournamentError([str(error)]) from None
    with one_writer(config.output_dir(), "arena run"):
        return _run_tournament(
            config, field_bots, challengers, progress, in_process, allow_changes, stop, sandbox, report
        )


def _run_tournament(  # noqa: ANN202
    config, field_bots, challengers, progress, in_process, allow_changes, stop, sandbox, report,  # noqa: ANN001
):
    """`run_tournament` with the folder's writer lock held."""
    settings = settings_of(config, field_bots, challengers)
    fingerprint = fingerprint_of(settings)
    store = Store.open(config.output_dir(), create=True)
    try:
        store.check()  # never write into a damaged file
        before = store.settings()
        if before is not None and store.fingerprint() != fingerprint:
            changes = changed_settings(before, settings)
            if not allow_changes:
                raise SettingsChanged(
                    [
                        f"{config.output_dir()} holds a tournament with other settings; "
                        "use another output folder, or --allow-changes to continue with the new ones. Changed: "
                        + "; ".join(changes)
                    ]
                )
            store.drop_unfinished()
        store.save_settings(settings, fingerprint)
        key = run_key(config, store)
        store.add_bots(bot.record() for bot in [*field_bots, *challengers])
        resumed = len(store.done_keys())
        folder_bots = [bot for bot in [*field_bots, *challengers] if bot.kind == "folder"]
        hidden = [config.output_dir(), *(bot.folder for bot in folder_bots)]
        runner = _Tournament(config, store, key, field_bots, challengers, in_process, progress, stop, sandbox, hidden)
        try:
            # The sandbox this machine runs bots in (none: in-process bots, or a cluster).
            box = runner.open_sandbox() if folder_bots else None
            if box is not None:
                try:
                    build_bots(box, [(bot.id, load_spec(bot)) for bot in folder_bots])
                except BuildFailed as error:
                    raise TournamentError([str(error)]) from None
                if config.sandbox == "docker":
                    # Build each bot's image once, here, not in several games at once; a failed
                    # build is remembered by the sandbox and forfeits that bot's games.
                    for bot in folder_bots:
                        if bot.dockerfile:
                            try:
                                box.image_for(load_spec(bot))
                            except BotFault:
                                pass
            runner.start(allow_changes)
            runner.play()
        except ScheduleError as error:
            raise TournamentError([f"schedule: {error}"]) from None
        finally:
            runner.close()
        if runner.stop.is_set():
            raise TournamentInterrupted(len(store.done_keys()), runner.total, config.output_dir())
        total = runner.total
        outcome = TournamentOutcome(
            output=config.output_dir(),
            total=total,
            done=len(store.done_keys()),
            played=runner.played,
            resumed=resumed,
            # Rated once, in schedule order, as the games came in; equal to stored_standings(store).
            standings=runner.ratings.ledger.table() if runner.ratings.complete else stored_standings(store),
            wall_s=time.monotonic() - runner.began,
            game_s=runner.game_s,
            startup_s=runner.startup_s,
        )
    finally:
        store.close()
    if report:
        try:
            outcome.notes.extend(render_report(config.output_dir()))
        except KeyboardInterrupt:
            raise SiteInterrupted(outcome.done, outcome.total, outcome.output) from None
    return outcome


def run_key(config: TournamentConfig, store: Store) -> RunKey:
    """The run's key: the public key of `config.seed`, else the stored secret (`RunKey.of_store`)."""
    return RunKey.of_store(config.seed, store)
