"""The one loop of a tournament and a league: play scheduled games, `jobs` at once, and
store each as it finishes.

A tournament and a league differ only in where their games come from: a fixed schedule
(round-robin, gauntlet; Swiss round after round, each once the one before is stored) or
the matchmaker's batches (`arena.league.ladder`). Both are a `Runner` that says, through a
few methods, what to play next (`refill` fills `queue`), when nothing more will come
(`finished`), what a stored game changes (`game_stored`) and which failures are a bot's,
not arena's (`failed`). Everything else is the runner's, and so the same in both:

- the sandbox (`open_sandbox`): the sandbox the settings name (or the caller's), told the
  paths no bot may read, its leftovers from a killed run cleaned up;
- where games play (`executor`): threads of this process; `jobs` worker processes
  (`arena.play.workers`) when every bot is a program and the sandbox is the settings' own;
  or a Dask cluster (`arena.play.cluster`);
- each game's `GameSpec` (`spec`): limits, sandbox, `bot_process` (per-game or per-slot),
  `warm_start`, the run's slots;
- Ctrl-C (start nothing new, store what finishes, raise nothing here: the caller sees
  `stop` set), arena's own failure (stop after the games in flight, `stopped_by`), and the
  end of the run (`close`: the run's bot sessions, warm slots, workers, cluster).

`render_report` builds a run's site (a failure is a note, never a lost run).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from arena.config.field import BotRef, SeatFactory
from arena.config.tournament_file import RunConfig
from arena.diskfull import is_full
from arena.play.executor import (
    GameSpec,
    PlayedGame,
    close_slots,
    play_scheduled_game,
    sandbox_named,
    store_game,
)
from arena.sandbox import Sandbox
from arena.store.db import DuplicateResult, Store
from arena.store.keys import ScheduledGame
from arena.store.seeds import RunKey

# Games the worker pool may choose among for its next game (schedule order otherwise).
LOOKAHEAD = 16
# How long the loop waits for a game to finish before it looks again (at `stop`, say).
WAIT_S = 0.2


class Runner:
    """One run of games: the loop, the sandbox, the pool, the specs (see the module docstring)."""

    # A subclass's name for its threads ("arena-game", "arena-league").
    thread_name = "arena-game"

    def __init__(
        self,
        config: RunConfig,
        store: Store,
        key: RunKey,
        *,
        in_process: Mapping[str, SeatFactory] | None = None,
        stop: threading.Event | None = None,
        sandbox: Sandbox | None = None,
    ):
        self.config = config  # a TournamentConfig or a LeagueConfig: the runner reads what both have
        self.store = store
        self.key = key  # the run's RunKey: deal and bot seeds come from it, and nothing else
        self.in_process = dict(in_process or {})
        self.stop = stop or threading.Event()
        # A full disk is waited out (arena.diskfull), until Ctrl-C: then a game that cannot
        # be stored is left to the resume.
        store.space.stop = self.stop
        self.sandbox = sandbox  # a sandbox object of the caller's (tests), else the settings name one
        # This run's slots (arena.play.executor): a session never outlives its run, nor serves another.
        self.run_id = uuid.uuid4().hex[:12]
        self.bots: dict[str, BotRef] = {}  # every bot the run may seat, by id
        self.hidden: list[Path] = []  # what a bot may not read (the workers' sandboxes are told too)
        self.queue: list[ScheduledGame] = []  # games to play, the next one last
        self.box: Sandbox | None = None  # the sandbox whose warm slots the run frees at its end
        self.cluster = None  # arena.play.cluster.ClusterPool: connected on first use, once per run
        self.workers = None  # arena.play.workers.WorkerPool: started on first use, once per run
        self._threads: ThreadPoolExecutor | None = None
        self.began = time.monotonic()
        self.played = 0  # games this run stored
        self.idle_s = WAIT_S  # how long to wait when nothing plays and more may come

    # -- what a tournament or a league says ------------------------------------------------

    def refill(self) -> None:
        """Put the games that may be played now in `queue` (the next one last)."""

    def finished(self) -> bool:
        """True when nothing more will be scheduled (the loop ends once nothing plays)."""
        return True

    def bot_games(self, bot: str) -> int:
        """The bot's games in the run, an upper bound (a per-slot bot's `hello.games`)."""
        return 1

    def failed(self, game: ScheduledGame, error: Exception) -> bool:
        """A game failed with arena's error: True when it was a bot's doing and the run goes
        on without the game; False (the default) stops the run after the games in flight."""
        return False

    def game_stored(self, game: ScheduledGame, played: PlayedGame, drained: bool) -> None:
        """A game was stored by this run (`drained`: while stopping after Ctrl-C)."""

    def folders_only(self) -> bool:
        """True when every bot the run may seat is a program (worker processes may play)."""
        return all(bot.kind == "folder" for bot in self.bots.values())

    def cluster_bots(self) -> list[BotRef]:
        """The bots to ship to the cluster when it connects."""
        return list(self.bots.values())

    # -- the sandbox, the pool, the specs ----------------------------------------------------

    def open_sandbox(self) -> Sandbox | None:
        """The sandbox this machine runs bots in, made ready (none on a cluster: its workers
        run the bots): told `hidden` (the output folder holds the store, with the deal
        secret, and every bot's logs; a bot sees only its own folder), and cleared of the
        processes or containers a killed earlier run left behind."""
        if self.config.cluster:
            return None
        self.box = self.sandbox or sandbox_named(self.config.sandbox, self.config.runtime)
        self.box.hide_paths(self.hidden)
        self.box.cleanup_leftovers()
        return self.box

    def uses_workers(self) -> bool:
        """Play in worker processes (`arena.play.workers`): more than one job, every bot a
        program, and the sandbox named by the settings (an object of the caller's stays in
        this process)."""
        return self.config.jobs > 1 and self.sandbox is None and self.folders_only()

    def executor(self):
        """Where the run's games play: the cluster, worker processes or threads (made once)."""
        if self.config.cluster:
            if self.cluster is None:
                from arena.play.cluster import ClusterPool

                self.cluster = ClusterPool(self.config.cluster, self.cluster_bots(), self.config.sandbox, run=self.run_id)
            return self.cluster
        if self.uses_workers():
            if self.workers is None:
                from arena.play.workers import WorkerPool

                if self.config.sandbox == "local":
                    from arena.sandbox.local import warn_not_isolated

                    warn_not_isolated()  # once, here: the workers do not say it again
                self.workers = WorkerPool(self.config.jobs, self.config.sandbox, self.hidden)
            return self.workers
        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=self.config.jobs, thread_name_prefix=self.thread_name)
        return self._threads

    def in_flight(self) -> int:
        """Games to keep running: `jobs` locally; on a cluster, enough for its worker threads."""
        return self.config.jobs if self.cluster is None else self.cluster.capacity()

    def spec(self, game: ScheduledGame) -> GameSpec:
        """The GameSpec of a scheduled game: every setting of the run's goes in it."""
        c = self.config
        return GameSpec(
            key=game.key,
            deal=game.deal,
            seed=game.seed,
            game=c.game,
            rules=c.rules,
            bots=[self.bots[bot_id] for bot_id in game.table],
            bot_seeds=[self.key.bot_seed(game.key, bot_id) for bot_id in game.table],
            limits=c.limits,
            sandbox=c.sandbox,
            runtime=c.runtime,
            bot_process=c.bot_process,
            warm_start=c.warm_start,
            run=self.run_id,
            bot_games=[self.bot_games(bot_id) for bot_id in game.table],
        )

    def next_game(self, pool) -> tuple[ScheduledGame, GameSpec]:
        """The next game to play and its spec: the first, unless the pool chooses among the
        next few (worker processes keep a bot slot's games on the worker that has the slot
        warm)."""
        choose = getattr(pool, "choose", None)
        if choose is None:
            game = self.queue.pop()
            return game, self.spec(game)
        window = self.queue[-LOOKAHEAD:][::-1]
        specs = [self.spec(game) for game in window]
        chosen = choose(specs)
        return self.queue.pop(len(self.queue) - 1 - chosen), specs[chosen]

    # -- the loop ------------------------------------------------------------------------

    def play(self) -> None:
        """Play until nothing more comes, `stop` is set, Ctrl-C (`stop` is set then) or
        arena's own failure (raised, `stopped_by`, after the games in flight are stored)."""
        running: dict[Future, ScheduledGame] = {}
        failure: BaseException | None = None
        pool = self.executor()
        try:
            while True:
                stopping = failure is not None or self.stop.is_set()
                if not stopping:
                    self.refill()
                    while self.queue and len(running) < self.in_flight():
                        game, spec = self.next_game(pool)
                        running[pool.submit(play_scheduled_game, spec, self.in_process, self.sandbox)] = game
                if not running:
                    if stopping or self.finished():
                        break
                    self.stop.wait(self.idle_s)
                    continue
                finished, _ = wait(running, timeout=WAIT_S, return_when=FIRST_COMPLETED)
                for future in finished:
                    game = running.pop(future)
                    try:
                        played = future.result()
                    except Exception as error:  # noqa: BLE001 - arena's own failure: stop after the games in flight
                        if not self.failed(game, error):
                            failure = failure or error
                        continue
                    self.commit(game, played)
        except KeyboardInterrupt:
            # Ctrl-C: start nothing new, store what finishes.
            self.stop.set()
            for future, game in list(running.items()):
                try:
                    played = future.result()
                except BaseException:  # noqa: BLE001, S112 - a game cut short by Ctrl-C is not stored
                    continue
                self.commit(game, played, drained=True)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if failure is not None:
            raise stopped_by(failure)

    def commit(self, game: ScheduledGame, played: PlayedGame, drained: bool = False) -> None:
        """Store a finished game once (a game that ran twice on a cluster keeps the first)."""
        try:
            store_game(self.store, played)
        except DuplicateResult:
            return
        except Exception as error:
            if drained and is_full(error):
                return  # stopping on a full disk: the resume plays it again
            raise
        self.played += 1
        self.game_stored(game, played, drained)

    def close(self) -> None:
        """End the run's bot sessions and free the sandbox's warm slots (here; worker
        processes do it as they end, and every worker of a cluster when it is told), then
        end the worker processes and disconnect from the cluster."""
        try:
            close_slots(self.run_id)
            if self.box is not None:
                self.box.close()
        finally:
            try:
                if self.workers is not None:
                    self.workers.close()
            finally:
                if self.cluster is not None:
                    self.cluster.close()


def stopped_by(failure: BaseException) -> BaseException:
    """What a run (a tournament's or a league's) raises when arena's own failure stopped it
    after the games in flight: a sandbox's own failure (the engine, say) says what is safe."""
    from arena.faults import SandboxError

    if type(failure) is SandboxError:
        error = SandboxError(
            f"{failure}; the game was not stored and no bot was charged; every finished game "
            "is stored: run the same command to resume"
        )
        error.__cause__ = failure
        return error
    return failure


def render_report(out_dir: Path, broken_bots: Sequence[tuple[str, str]] = ()) -> list[str]:
    """Build the HTML site of a run's folder (`arena.site.render_site`, the site's one entry
    for a runner; `broken_bots`: a league's registry folders that cannot join); a failure
    is a note, never a lost run."""
    from arena.site import render_site

    try:
        render_site(out_dir, broken_bots=broken_bots)
    except Exception as error:  # noqa: BLE001 - the results are stored; a failed site must not lose the run
        return [f"the HTML site could not be built ({type(error).__name__}: {error}); the results are stored"]
    return [f"site written to {out_dir / 'site'}"]
