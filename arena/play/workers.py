"""Worker processes for `arena run --jobs N`: the referee's work on more than one core.

One Python process plays one game's referee work (building observations, writing and
reading JSON, the engine) under one lock, the GIL: a few dozen games a second at most,
whatever `--jobs` says. `WorkerPool` runs `jobs` worker processes instead, each playing
one game at a time with `arena.play.executor.play_scheduled_game` (a pure function of a picklable
`GameSpec`, as on a cluster). The runner keeps everything else: the schedule, the store
(each result stored once, as it comes back), the ratings in schedule order, resume.

A worker is started with the run's sandbox settings (the sandbox's name and the paths a
bot may not see) and keeps its own sandbox, with whatever that keeps between games (warm
slots), for the whole run. It ignores Ctrl-C (the runner decides: start nothing new, store
what finishes), closes its sandboxes when it ends (`Sandbox.close()`: warm processes and
containers go with it), and ends by itself, closing them, if the runner dies (kill -9):
nothing of it outlives the run for long, and the next run's leftover clean-up takes what
a killed worker could not close.

A bot slot's warm process or container lives in one worker's sandbox, so the runner
asks the pool which of the next games the free worker should play (`choose`): the one
whose slots that worker already holds. Results do not depend on it (each game is a pure
function of its spec, and the runner rates in schedule order whatever order games end in).

Workers are started with multiprocessing's "spawn": a Python script of one's own that
calls `run_tournament` with more than one job must do so under
`if __name__ == "__main__":` (each worker imports the script's main module); the `arena`
command does.

Bots given as Python `Seat` factories (`in_process=`, tests and benchmarks) exist only in
the runner's process: a run with any of them, one job, or a sandbox object of the
caller's plays in threads of the runner's process instead.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from arena.play.executor import (
    AheadSlot,
    GameSpec,
    PlayedGame,
    close_sandboxes,
    play_scheduled_game,
    rotation_of,
    sandbox_named,
)
from arena.faults import SandboxError

# How often a worker checks that the runner is still there.
PARENT_CHECK_S = 0.5


class WorkerLost(SandboxError):
    """A worker process died (killed, out of memory); the games it was playing are not stored."""

    def __init__(self, error: BaseException):
        self.error = error
        super().__init__(
            f"a worker process that plays games ended abruptly ({error}); its game was not stored and "
            "no bot was charged; every finished game is stored: run the same command to resume"
        )


class WorkerPool:
    """`jobs` worker processes playing scheduled games for the whole run; `submit` as an
    executor, `choose` to keep a bot slot's games on one worker."""

    def __init__(self, jobs: int, sandbox: str, hidden: Sequence[Path] = ()):
        self.jobs = jobs
        # One single-process executor per worker ("lane"), so that the pool, not the
        # executor, decides which worker plays which game. spawn, not fork: the runner has
        # threads (a progress display, the sandbox's), and a forked child inherits their
        # locks in whatever state they were.
        context = multiprocessing.get_context("spawn")
        setup = (sandbox, [str(path) for path in hidden], os.getpid())
        self._lanes = [
            ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_start_worker, initargs=setup)
            for _ in range(jobs)
        ]
        self._lock = threading.Lock()
        self._busy = [0] * jobs
        self._owner: dict[tuple[str, str], int] = {}  # a bot slot (bot, rotation) -> the lane that has it
        self._rotations: list[set[str]] = [set() for _ in range(jobs)]
        self._passed: dict[str, int] = {}  # game key -> times `choose` took a later game instead
        self._window: list[GameSpec] = []  # the next games `choose` last saw
        self._readied: list[set[tuple[str, str]]] = [set() for _ in range(jobs)]  # slots each lane made or was told to make

    def _free_lane(self) -> int:
        with self._lock:
            return min(range(self.jobs), key=lambda lane: (self._busy[lane], lane))

    def choose(self, specs: Sequence[GameSpec]) -> int:
        """Which of the next games (in schedule order) the next free worker should play.

        Warm slots live in a worker's own sandbox: a slot's game played by another worker
        starts that bot cold there (and keeps a second warm process or container for it).
        So the free worker takes the game with the most bot slots it already has and the
        fewest another worker has (in duplicate play every slot of a game has the game's
        rotation, and a slot no worker holds yet counts as held by the worker of its
        rotation: rotation r goes to worker r mod jobs), then one of a rotation it plays,
        then the earliest. A game passed over as often as there are
        choices is taken next: no game waits for long.
        """
        if not specs:
            raise ValueError("choose among no games")
        first = specs[0].key
        if self._passed.get(first, 0) >= len(specs):
            chosen = 0
        else:
            lane = self._free_lane()
            with self._lock:
                scores = [self._score(lane, spec) for spec in specs]
            chosen = max(range(len(specs)), key=lambda index: (scores[index], -index))
        for spec in specs[:chosen]:
            self._passed[spec.key] = self._passed.get(spec.key, 0) + 1
        self._passed.pop(specs[chosen].key, None)
        self._window = list(specs)
        return chosen

    def _preferred(self, spec: GameSpec) -> int | None:
        """The lane a duplicate deal's rotation goes to before any of its slots is held:
        rotation r to lane r mod jobs, so that the lanes share the rotations out from the
        first games on (None for a game that is not one rotation of a deal)."""
        rotation = rotation_of(spec)
        if not spec.key.startswith(spec.deal + "-") or not rotation.isdigit():
            return None
        return int(rotation) % self.jobs

    def _score(self, lane: int, spec: GameSpec) -> tuple[int, int]:
        preferred = self._preferred(spec)
        owners = [self._owner.get(key, preferred) for key in slot_keys(spec)]
        mine = sum(owner == lane for owner in owners)
        theirs = sum(owner is not None and owner != lane for owner in owners)
        return mine - theirs, int(rotation_of(spec) in self._rotations[lane])

    def submit(self, fn, spec: GameSpec, in_process=None, sandbox=None) -> Future:
        """Play `spec` in the free worker (`fn` must be play_scheduled_game, with the worker's
        own sandbox); the future's result is its PlayedGame, WorkerLost if the worker died."""
        if fn is not play_scheduled_game or in_process or sandbox is not None:
            raise TypeError("worker processes play play_scheduled_game(spec) with their own sandbox only")
        lane = self._claim(spec)
        spec = self._with_ahead(lane, spec)
        outer: Future = Future()
        inner = self._lanes[lane].submit(play_scheduled_game, spec)

        def relay(done: Future) -> None:
            self._release(lane)
            if done.cancelled():
                outer.cancel()
                return
            error = done.exception()
            if error is None:
                outer.set_result(done.result())
            else:
                outer.set_exception(WorkerLost(error) if isinstance(error, BrokenProcessPool) else error)

        inner.add_done_callback(relay)
        return outer

    def _claim(self, spec: GameSpec) -> int:
        """The free lane, now playing `spec` (its slots are that lane's if nobody's yet)."""
        lane = self._free_lane()
        with self._lock:
            self._busy[lane] += 1
            for key in slot_keys(spec):
                self._owner.setdefault(key, lane)
            self._rotations[lane].add(rotation_of(spec))
        return lane

    def _with_ahead(self, lane: int, spec: GameSpec) -> GameSpec:
        """`spec`, telling its worker which warm slots of the coming games (the window
        `choose` last saw) will be that worker's and are not made yet: a warm Docker slot's
        container is made in the background while the game plays, not when its first game
        waits for it. Those slots become the lane's, as if it had played them."""
        if spec.sandbox != "docker" or not spec.warm_start or spec.bot_process != "per-game":
            return spec
        ahead: list[AheadSlot] = []
        with self._lock:
            readied = self._readied[lane]
            readied.update(slot_keys(spec))
            for coming in self._window:
                if coming.key == spec.key:
                    continue
                preferred = self._preferred(coming)
                rotation = rotation_of(coming)
                folder_bots = [bot for bot in coming.bots if bot.kind == "folder"]
                for bot, key in zip(folder_bots, slot_keys(coming), strict=True):
                    if key in readied or self._owner.get(key, preferred) != lane:
                        continue
                    self._owner[key] = lane
                    readied.add(key)
                    ahead.append(AheadSlot(bot=bot, rotation=rotation, players=len(coming.bots)))
        return spec.model_copy(update={"ahead": ahead}) if ahead else spec

    def _release(self, lane: int) -> None:
        with self._lock:
            self._busy[lane] -= 1

    def pids(self) -> list[int]:
        """The worker processes' ids (each started on its first game)."""
        return sorted(pid for lane in self._lanes for pid in (lane._processes or {}))

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """End of a batch (a Swiss round): nothing; the workers, and what their sandboxes keep
        warm, serve the next batch too. `close()` ends them."""

    def close(self) -> None:
        """Let the games in flight finish, then end the workers (each closes its sandboxes)."""
        # One after another: the others' games go on meanwhile, and each lane has one at most.
        for lane in self._lanes:
            lane.shutdown(wait=True, cancel_futures=True)


def slot_keys(spec: GameSpec) -> list[tuple[str, str]]:
    """The game's bot slots as the pool tells them apart: (bot, seat rotation of the deal)."""
    rotation = rotation_of(spec)
    return [(bot.id, rotation) for bot in spec.bots if bot.kind == "folder"]


def _start_worker(sandbox: str, hidden: list[str], parent: int) -> None:
    # The runner owns Ctrl-C: a worker finishes its game and is told to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sandbox == "local":
        from arena.sandbox.local import warn_not_isolated

        warn_not_isolated(say=False)  # the runner said it, once for the command
    sandbox_named(sandbox).hide_paths([Path(path) for path in hidden])
    # Run when the worker ends normally (the pool's shutdown): multiprocessing's exit hook.
    multiprocessing.util.Finalize(None, close_sandboxes, exitpriority=100)
    threading.Thread(target=_watch_parent, args=(parent,), name="arena-worker-parent", daemon=True).start()


def _watch_parent(parent: int) -> None:
    """End this worker, closing its sandboxes, once the runner is gone (killed)."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    try:
        close_sandboxes()
    finally:
        os._exit(1)


__all__ = ["PlayedGame", "WorkerLost", "WorkerPool"]
