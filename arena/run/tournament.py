"""Running a tournament: schedule its games, play them, store each as it finishes.

`run_tournament(config)` resolves the bots (`arena.config.field`), schedules the games
(`arena.run.schedule`), plays the games not yet stored with `jobs` at once (each one
`arena.run.play.play_scheduled_game`, in worker processes (`arena.run.workers`), in threads or on a
cluster), and commits each finished
game to the store (`arena.store.db`) as soon as it finishes; ratings are fed in schedule
order as games come in (`arena.ratings.ledger`). Running it again on the same output folder
resumes: finished games are never played again; a changed file is refused, naming what
changed (`arena.config.tournament`). Swiss rounds are scheduled only once the previous
round is all stored.

The tournament file, the field, one game and the ratings live in their own modules; the
names a caller needs are imported here too (`from arena.run.tournament import ...`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from arena.config.field import BotRef, SeatFactory, load_tournament, resolve_bots
from arena.config.tournament import (
    FORMATS,
    SANDBOXES,
    LimitsConfig,
    RatingConfig,
    SettingsChanged,
    TournamentConfig,
    TournamentError,
    changed_settings,
    fingerprint_of,
    settings_of,
    validate_config,
)
from arena.langs.build import BuildFailed, build_bots
from arena.ratings.ledger import (
    OrderedLedger,
    RatingSettings,
    RatingSettingsError,
    RatingTable,
    rated_game,
    rated_games,
    store_ledger,
    stored_standings,
)
from arena.run.play import (
    GameSpec,
    PlayedGame,
    close_slots,
    load_spec,
    play_scheduled_game,
    sandbox_named,
)
from arena.run.schedule import (
    ScheduledGame,
    ScheduleError,
    gauntlet,
    round_robin,
    swiss_round,
)
from arena.sandbox import BotFault, Sandbox
from arena.store.db import DuplicateResult, Store
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


# Games the worker pool may choose among for its next game (schedule order otherwise).
LOOKAHEAD = 16


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


class _Runner:
    """One run of a tournament: schedule, pool, store."""

    def __init__(self, config, store, key, field_bots, challengers, in_process, progress, stop, sandbox, hidden=()):
        self.config = config
        self.key = key  # the run's RunKey: deal and bot seeds come from it, and nothing else
        self.store = store
        self.bots = {bot.id: bot for bot in [*field_bots, *challengers]}
        self.field = [bot.id for bot in field_bots]
        self.challengers = [bot.id for bot in challengers]
        self.in_process = in_process
        self.progress = progress
        self.stop = stop or threading.Event()
        self.sandbox = sandbox
        # This run's slots (arena.run.play): a session never outlives its run, nor serves another.
        self.run = uuid.uuid4().hex[:12]
        self.bot_games: Counter[str] = Counter()
        self.box: Sandbox | None = None  # the sandbox whose warm slots the run frees at its end
        self.cluster = None  # arena.run.cluster.ClusterPool: connected on first use, once per run
        self.workers = None  # arena.run.workers.WorkerPool: started on first use, once per run
        self.hidden = list(hidden)  # what a bot may not see (the workers' sandboxes are told too)
        self.began = time.monotonic()
        self.played = 0
        self.game_s = 0.0
        self.startup_s = 0.0
        self._leader: str | None = None
        self._leader_at = 0.0
        self.ratings = OrderedLedger(store_ledger(store, results=False))
        for result in rated_games(store):
            self.ratings.add(result)
        self.deals: dict[str, str] = {}

    def scheduled(self, games: Sequence[ScheduledGame]) -> None:
        """Store newly scheduled games and tell the ratings the schedule's order."""
        self.store.schedule(games)
        stored = self.store.games()
        self.deals = {game.key: game.deal for game in stored}
        if self.config.format == "swiss":  # at most one table a round, each of its rotations
            per_round = self.config.seats if self.config.duplicate else 1
            self.bot_games = Counter({bot: self.config.rounds * per_round for bot in self.bots})
        else:
            self.bot_games = Counter(bot for game in stored for bot in game.bots)
        self.ratings.schedule([game.key for game in stored])

    def total(self) -> int:
        """How many games the whole tournament has (Swiss: rounds times one round's games)."""
        if self.config.format != "swiss":
            return len(self.store.games())
        first = swiss_round(
            [_Entry(bot) for bot in self.field], self.config.seats, round=1, seed=self.key,
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

    def spec(self, game: ScheduledGame) -> GameSpec:
        """The GameSpec of a scheduled game."""
        return GameSpec(
            key=game.key,
            deal=game.deal,
            seed=game.seed,
            game=self.config.game,
            rules=self.config.rules,
            bots=[self.bots[bot_id] for bot_id in game.table],
            bot_seeds=[self.key.bot_seed(game.key, bot_id) for bot_id in game.table],
            limits=self.config.limits,
            sandbox=self.config.sandbox,
            bot_process=self.config.bot_process,
            warm_start=self.config.warm_start,
            run=self.run,
            bot_games=[self.bot_games[bot_id] for bot_id in game.table],
        )

    def leader(self) -> str | None:
        """The current leader, recomputed at most once a second (display only)."""
        now = time.monotonic()
        if self._leader is None or now - self._leader_at >= 1.0:
            table = self.ratings.ledger.table().standings
            self._leader = table[0].bot if table and table[0].games else None
            self._leader_at = now
        return self._leader

    def uses_workers(self) -> bool:
        """Play in worker processes (`arena.run.workers`): more than one job, every bot a program,
        and the sandbox named by the settings (an object of the caller's stays in this process)."""
        return (
            self.config.jobs > 1
            and self.sandbox is None
            and all(bot.kind == "folder" for bot in self.bots.values())
        )

    def _pool(self):
        """The run's worker processes, a thread pool for this batch, or the run's cluster."""
        if not self.config.cluster:
            if not self.uses_workers():
                return ThreadPoolExecutor(max_workers=self.config.jobs, thread_name_prefix="arena-game")
            if self.workers is None:
                from arena.run.workers import WorkerPool

                if self.config.sandbox == "local":
                    from arena.sandbox.local import warn_not_isolated

                    warn_not_isolated()  # once, here: the workers do not say it again
                self.workers = WorkerPool(self.config.jobs, self.config.sandbox, self.hidden)
            return self.workers
        if self.cluster is None:
            from arena.run.cluster import ClusterPool

            self.cluster = ClusterPool(self.config.cluster, list(self.bots.values()), self.config.sandbox, run=self.run)
        return self.cluster

    def in_flight(self) -> int:
        """Games to keep running: `jobs` locally; on a cluster, enough for its worker threads."""
        return self.config.jobs if self.cluster is None else self.cluster.capacity()

    def close(self) -> None:
        """End the run's bot sessions and free the sandbox's warm slots (here; worker processes
        do it as they end, and every worker of a cluster when it is told), then end the
        worker processes and disconnect from the cluster."""
        try:
            close_slots(self.run)
            if self.box is not None:
                self.box.close()
        finally:
            try:
                if self.workers is not None:
                    self.workers.close()
            finally:
                if self.cluster is not None:
                    self.cluster.close()

    def next_game(self, queue: list[ScheduledGame], pool) -> tuple[ScheduledGame, GameSpec]:
        """The next game to play (`queue` is in reverse schedule order) and its spec: the
        first, unless the pool chooses among the next few (worker processes keep a bot
        slot's games on the worker that has the slot warm)."""
        choose = getattr(pool, "choose", None)
        if choose is None:
            game = queue.pop()
            return game, self.spec(game)
        window = queue[-LOOKAHEAD:][::-1]
        specs = [self.spec(game) for game in window]
        chosen = choose(specs)
        return queue.pop(len(queue) - 1 - chosen), specs[chosen]

    def play(self, games: Sequence[ScheduledGame], total: int) -> None:
        """Play `games` with `jobs` at once, storing each as it finishes."""
        done = self.store.done_keys()
        pending = [game for game in games if game.key not in done]
        self.done = len(self.store.done_keys())
        queue = list(reversed(pending))
        running: dict[Future, str] = {}
        failure: BaseException | None = None
        pool = self._pool()
        try:
            while queue or running:
                while queue and len(running) < self.in_flight() and not self.stop.is_set() and failure is None:
                    game, spec = self.next_game(queue, pool)
                    future = pool.submit(play_scheduled_game, spec, self.in_process, self.sandbox)
                    running[future] = game.key
                if not running:
                    break
                finished, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    running.pop(future)
                    try:
                        played = future.result()
                    except Exception as error:  # noqa: BLE001 - arena's own failure: stop after the games in flight
                        failure = failure or error
                        continue
                    try:
                        self.store.record(played.key, played.result, duration_s=played.duration_s, logs=played.logs)
                    except DuplicateResult:
                        continue  # already stored (a game that ran twice on a cluster): keep the first
                    deal = self.deals[played.key] if self.config.duplicate else None
                    self.ratings.add(rated_game(played.key, deal, played.result))
                    self.played += 1
                    self.done += 1
                    self.game_s += played.duration_s
                    self.startup_s += played.startup_s
                    if self.progress is not None:
                        self.progress(
                            Progress(
                                done=self.done,
                                total=total,
                                played=self.played,
                                key=played.key,
                                leader=self.leader(),
                                elapsed_s=time.monotonic() - self.began,
                            )
                        )
        except KeyboardInterrupt:
            # Ctrl-C: start nothing new, store what finishes, then say how far we got.
            self.stop.set()
            for future in list(running):
                try:
                    played = future.result()
                except BaseException:  # noqa: BLE001, S112 - a game cut short by Ctrl-C is not stored
                    continue
                try:
                    self.store.record(played.key, played.result, duration_s=played.duration_s, logs=played.logs)
                except DuplicateResult:
                    continue  # already stored: keep the first
                self.played += 1
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if failure is not None:
            raise stopped_by(failure)
        if self.stop.is_set():
            raise TournamentInterrupted(len(self.store.done_keys()), total, self.config.output_dir())


@dataclass(frozen=True)
class _Entry:
    bot: str
    score: float = 0.0
    conservative: float = 0.0


def run_tournament(
    config: TournamentConfig,
    *,
    progress: Callable[[Progress], None] | None = None,
    in_process: Mapping[str, SeatFactory] | None = None,
    allow_changes: bool = False,
    stop: threading.Event | None = None,
    sandbox: Sandbox | None = None,
    report: bool = True,
) -> TournamentOutcome:
    """Run (or resume) a tournament into its output folder; returns the standings.

    Raises TournamentError (bad bots, changed settings), TournamentInterrupted (Ctrl-C or
    `stop` set: every finished game is stored), or arena's own SandboxError. `report=False`
    skips the HTML site (benchmarks).
    """
    field_bots, challengers = resolve_bots(config, in_process)
    try:
        RatingSettings(**config.rating.model_dump())
    except RatingSettingsError as error:
        raise TournamentError([str(error)]) from None
    settings = settings_of(config, field_bots, challengers)
    fingerprint = fingerprint_of(settings)
    store = Store.open(config.output_dir(), create=True)
    try:
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
        box = None  # the sandbox this machine runs bots in (none: in-process bots, or a cluster)
        if folder_bots and not config.cluster:  # a cluster's workers run the bots, not this machine
            box = sandbox or sandbox_named(config.sandbox)
            # The output folder holds the store (with the deal secret) and the other bots'
            # logs; the other bots' folders are theirs: a bot sees only its own folder.
            box.hide_paths([config.output_dir(), *(bot.folder for bot in folder_bots)])  # the workers' too
            # Processes or containers a killed earlier run left behind go before new ones start.
            box.cleanup_leftovers()
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
        hidden = [config.output_dir(), *(bot.folder for bot in folder_bots)]
        runner = _Runner(config, store, key, field_bots, challengers, in_process, progress, stop, sandbox, hidden)
        runner.box = box
        try:
            if config.format == "swiss":
                total = runner.total()
                for round_no in range(1, config.rounds + 1):
                    games = runner.swiss_schedule(round_no)
                    runner.scheduled(games)
                    runner.play(games, total)
            else:
                games = runner.full_schedule()
                done = store.done_keys()
                runner.scheduled([game for game in games if game.key not in done] if allow_changes else games)
                total = len(store.games())
                runner.play(games, total)
        except ScheduleError as error:
            raise TournamentError([f"schedule: {error}"]) from None
        finally:
            runner.close()
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


def stopped_by(failure: BaseException) -> BaseException:
    """What a run (a tournament's or a league's) raises when arena's own failure stopped it
    after the games in flight: a sandbox's own failure (the engine, say) says what is safe."""
    from arena.sandbox import SandboxError

    if type(failure) is SandboxError:
        error = SandboxError(
            f"{failure}; the game was not stored and no bot was charged; every finished game "
            "is stored: run the same command to resume"
        )
        error.__cause__ = failure
        return error
    return failure


def run_key(config: TournamentConfig, store: Store) -> RunKey:
    """The run's key: the public key of `config.seed`, else the stored secret (`RunKey.of_store`)."""
    return RunKey.of_store(config.seed, store)


def render_report(out_dir: Path) -> list[str]:
    """Build the HTML site of the run (`arena.site.writer`); a failure is a note, never a lost
    run. A league renders its site with it too."""
    from arena.site.writer import render_site

    try:
        render_site(out_dir)
    except Exception as error:  # noqa: BLE001 - the results are stored; a failed site must not lose the run
        return [f"the HTML site could not be built ({type(error).__name__}: {error}); the results are stored"]
    return [f"site written to {out_dir / 'site'}"]
