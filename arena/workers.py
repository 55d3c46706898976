"""Worker processes for `arena run --jobs N`: the referee's work on more than one core.

One Python process plays one game's referee work (building observations, writing and
reading JSON, the engine) under one lock, the GIL: a few dozen games a second at most,
whatever `--jobs` says. `WorkerPool` runs `jobs` worker processes instead, each playing
one game at a time with `arena.play.play_scheduled_game` (a pure function of a picklable
`GameSpec`, as on a cluster). The runner keeps everything else: the schedule, the store
(each result stored once, as it comes back), the ratings in schedule order, resume.

A worker is started with the run's sandbox settings (the sandbox's name and the paths a
bot may not see) and keeps its own sandbox, with whatever that keeps between games (warm
slots), for the whole run. It ignores Ctrl-C (the runner decides: start nothing new, store
what finishes), closes its sandboxes when it ends (`Sandbox.close()`: warm processes and
containers go with it), and ends by itself, closing them, if the runner dies (kill -9):
nothing of it outlives the run for long, and the next run's leftover clean-up takes what
a killed worker could not close.

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

from arena.play import (
    GameSpec,
    PlayedGame,
    close_sandboxes,
    play_scheduled_game,
    sandbox_named,
)
from arena.sandbox import SandboxError

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
    """`jobs` worker processes playing scheduled games, for the whole run; `submit` as an executor."""

    def __init__(self, jobs: int, sandbox: str, hidden: Sequence[Path] = ()):
        self.jobs = jobs
        # spawn, not fork: the runner has threads (a progress display, the sandbox's), and a
        # forked child inherits their locks in whatever state they were.
        self._executor = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(sandbox, [str(path) for path in hidden], os.getpid()),
        )

    def submit(self, fn, spec: GameSpec, in_process=None, sandbox=None) -> Future:
        """Play `spec` in a worker (`fn` must be play_scheduled_game, with the worker's own
        sandbox); the future's result is its PlayedGame, WorkerLost if the worker died."""
        if fn is not play_scheduled_game or in_process or sandbox is not None:
            raise TypeError("worker processes play play_scheduled_game(spec) with their own sandbox only")
        outer: Future = Future()
        inner = self._executor.submit(play_scheduled_game, spec)

        def relay(done: Future) -> None:
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

    def pids(self) -> list[int]:
        """The worker processes' ids (started on first use)."""
        return sorted(self._executor._processes or {})

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """End of a batch (a Swiss round): nothing; the workers, and what their sandboxes keep
        warm, serve the next batch too. `close()` ends them."""

    def close(self) -> None:
        """Let the games in flight finish, then end the workers (each closes its sandboxes)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def _start_worker(sandbox: str, hidden: list[str], parent: int) -> None:
    # The runner owns Ctrl-C: a worker finishes its game and is told to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
