"""The runner's overhead per game: scheduling, rating and storage beside playing.

    python -m bench.runner_overhead [--quick] [--overhead-bots N] [--overhead-games N]
        [--progress-games N] [--subprocess-rounds N] [--json]

Overhead: the real runner (`arena.play.tournament.run_tournament`) with 64 in-process bots and
5,000 four-seat games: the time per game spent in scheduling, rating and storage (each
part timed by wrapping what the runner calls), beside the time spent playing and the bare
engine time of the same games; again with a progress callback; then local subprocess bots,
where everything that is not playing is a share of the tournament's wall time.
"""

from __future__ import annotations

import inspect
import itertools
import math
import random
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import harness
from bench.players import (
    GAME,
    SEATS,
    TOP,
    GradedPlayer,
    graded_players,
    heuristic_action,
)
from engine.api import Action, Observation
from engine.registry import get_game

# The tournament targets this benchmark checks (docs/performance.md, Tournaments).
OVERHEAD_TARGET_MS = 2.0
SUBPROCESS_SHARE_TARGET = 0.05


class PartTimer:
    """Wall-clock seconds per part of the runner, summed over threads (outermost call only).

    Wall, not CPU: the store's fsync is waiting, not computing. A call made inside another
    timed call (the store's reads inside `standings`) counts for the outer part only.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}  # CPU of the calling thread, for a loaded machine
        self._inside = threading.local()
        self._lock = threading.Lock()

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function`, timed into `part`."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            if getattr(self._inside, "busy", False):
                return function(*args, **kwargs)
            self._inside.busy = True
            start, start_cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed, cpu = time.perf_counter() - start, time.thread_time() - start_cpu
                self._inside.busy = False
                with self._lock:
                    self.seconds[part] = self.seconds.get(part, 0.0) + elapsed
                    self.cpu_seconds[part] = self.cpu_seconds.get(part, 0.0) + cpu

        return timed

    def ms_per(self, part: str, count: int) -> float:
        """Milliseconds of `part` per one of `count` (games)."""
        return 1000 * self.seconds.get(part, 0.0) / count

    def cpu_ms_per(self, part: str, count: int) -> float:
        """CPU milliseconds of `part` per one of `count` (games)."""
        return 1000 * self.cpu_seconds.get(part, 0.0) / count


def store_methods(store_class: type) -> list[str]:
    """Every public method of the store, and its constructor (a new method is timed too)."""
    return [
        name
        for name, value in vars(store_class).items()
        if inspect.isfunction(value) and (name == "__init__" or not name.startswith("_")) and name != "standings"
    ]



@contextmanager
def instrumented_runner(timer: PartTimer, played: list[Any]):
    """Time the real runner's parts by wrapping what it calls; keep each played game's record.

    Scheduling: the schedule functions; rating: the rating ledger the runner feeds as games
    finish (`RatingLedger.add`/`table`, the in-order buffer around it) and reading the
    stored results into ratings (`rated_games`, `stored_standings`); storage: every other store method; play: `play_scheduled_game` (as the one runner,
    arena.play.runner, calls it)
    (referee, bots, engine). The HTML site is not built (`report=False`): it is the report,
    not the tournament.
    """
    import arena.play.tournament as runner
    from arena.ratings.ledger import RatingLedger
    from arena.ratings.results import OrderedLedger
    from arena.store.db import Store

    def keep(spec: Any, *args: Any, **kwargs: Any) -> Any:
        game = play(spec, *args, **kwargs)
        played.append(game.result)
        return game

    import arena.play.runner as loop  # the one loop under a tournament and a league plays each game

    play = loop.play_scheduled_game
    patches: list[tuple[Any, str, Any]] = [(loop, "play_scheduled_game", timer.wrap("play", keep))]
    patches += [(runner, name, timer.wrap("schedule", getattr(runner, name))) for name in ("round_robin", "swiss_round", "gauntlet")]
    patches += [(runner, name, timer.wrap("rating", getattr(runner, name))) for name in ("rated_games", "stored_standings")]
    patches += [(RatingLedger, name, timer.wrap("rating", getattr(RatingLedger, name))) for name in ("add", "table")]
    # The buffer that feeds the ledger in schedule order.
    patches += [(OrderedLedger, name, timer.wrap("rating", getattr(OrderedLedger, name))) for name in ("schedule", "add")]
    patches += [(Store, name, timer.wrap("storage", getattr(Store, name))) for name in store_methods(Store)]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
    try:
        for owner, name, replacement in patches:
            setattr(owner, name, replacement)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def graded_seat_factory(player: GradedPlayer) -> Callable[[], Any]:
    """A factory of InProcessBot seats playing as `player` (the runner makes one per game)."""
    from arena.game.seats import InProcessBot

    games = itertools.count()

    def make() -> Any:
        rng = random.Random(f"bench-overhead/{player.name}/{next(games)}")

        def decide(observation: Observation, legal: list[Action]) -> Action:
            if rng.random() < player.p:
                return legal[rng.randrange(len(legal))]
            return heuristic_action(observation, legal)

        return InProcessBot(decide, player.name)

    return make


def timed_run(config_data: dict[str, Any], in_process: dict[str, Any] | None, progress: bool) -> dict[str, Any]:
    """Run one tournament through `arena.play.tournament.run_tournament`, its time split by part."""
    from arena.play.tournament import run_tournament, validate_config

    timer, played = PartTimer(), []
    with tempfile.TemporaryDirectory() as out:
        config = validate_config({**config_data, "output": str(Path(out) / "run")})
        with instrumented_runner(timer, played):
            began, began_cpu = time.perf_counter(), time.thread_time()
            outcome = run_tournament(
                config, in_process=in_process, progress=(lambda _: None) if progress else None, report=False
            )
            wall, main_cpu = time.perf_counter() - began, time.thread_time() - began_cpu
    games = outcome.played
    if games != outcome.total:
        raise RuntimeError(f"the runner stored {games} of {outcome.total} games")
    engine = get_game(GAME)
    start = time.perf_counter()
    for result in played:
        engine.replay(result.players, result.rules, result.seed, [step.action for step in result.replay.actions])
    engine_s = time.perf_counter() - start
    figures = {part: timer.ms_per(part, games) for part in ("schedule", "rating", "storage", "play")}
    parts = figures["schedule"] + figures["rating"] + figures["storage"]
    total = 1000 * wall / games - figures["play"]  # everything but playing
    return {
        "bots": len(outcome.standings.standings),
        "games": games,
        "wall_s": wall,
        "progress_display": progress,
        "schedule_ms_per_game": figures["schedule"],
        "rating_ms_per_game": figures["rating"],
        "storage_ms_per_game": figures["storage"],
        # The runner's overhead: scheduling, rating and storage.
        "overhead_ms_per_game": parts,
        # The same three in CPU time: what they cost on a machine nobody else is using.
        "overhead_cpu_ms_per_game": sum(timer.cpu_ms_per(part, games) for part in ("schedule", "rating", "storage")),
        "cpu_ms_per_game": {part: timer.cpu_ms_per(part, games) for part in ("schedule", "rating", "storage")},
        # The rest of the wall time not spent playing: the runner's own bookkeeping (game
        # specs, futures, progress) and waiting for the main thread to be scheduled again.
        "other_ms_per_game": total - parts,
        "total_overhead_ms_per_game": total,
        # CPU of the runner's thread (everything but the games, which run in pool threads).
        "runner_thread_cpu_ms_per_game": 1000 * main_cpu / games,
        "play_ms_per_game": figures["play"],
        "engine_ms_per_game": 1000 * engine_s / games,
        "overhead_share": parts * games / 1000 / wall,
        "total_overhead_share": total * games / 1000 / wall,
        "top3_by_rating": [line.bot for line in outcome.standings.standings[:TOP]],
    }


def overhead_in_process(bot_count: int, game_count: int, progress: bool, seed: int = 1) -> dict[str, Any]:
    """In-process graded bots (p spread over [0, 1]), about `game_count` four-seat round-robin games."""
    players = graded_players(bot_count)
    rounds = math.ceil(game_count / (bot_count // SEATS))
    config = {"game": GAME, "seats": SEATS, "rounds": rounds, "seed": seed}
    return timed_run(config, {player.name: graded_seat_factory(player) for player in players}, progress)


def overhead_subprocess(folders: Sequence[Path], copies: int, rounds: int, progress: bool, seed: int = 1) -> dict[str, Any]:
    """`copies` copies of each bot folder in the local sandbox (the runner starts a fresh process per bot per game)."""
    with tempfile.TemporaryDirectory() as bots_dir:
        copied = []
        for folder in folders:
            for copy in range(copies):  # a tournament lists each folder once
                copied.append(shutil.copytree(folder, Path(bots_dir) / f"{folder.name}-{copy}"))
        config = {"game": GAME, "seats": SEATS, "rounds": rounds, "seed": seed, "bots": [str(f) for f in copied]}
        return timed_run(config, None, progress)


# ---------------------------------------------------------------------- main

BOTS_DIR = Path(__file__).resolve().parents[1] / "bots"
SUBPROCESS_FOLDERS = (BOTS_DIR / "threeup-heuristic", BOTS_DIR / "random")
SUBPROCESS_COPIES = 4


def print_report(report: dict[str, Any]) -> None:
    """The overhead tables and the PASS/MISS lines, for people."""
    runs = (
        ("in-process bots", report.get("overhead")),
        ("local subprocess bots", report.get("subprocess")),
        ("in-process bots", report.get("overhead_with_progress")),
    )
    for label, figures in runs:
        if not figures:
            continue
        print(
            f"Overhead, {label}: {figures['bots']} bots, {figures['games']} four-seat games, "
            f"{figures['wall_s']:.1f} s wall, progress display {'on' if figures['progress_display'] else 'off'} "
            "(wall ms per game)"
        )
        for name, key in (
            ("scheduling", "schedule_ms_per_game"),
            ("rating", "rating_ms_per_game"),
            ("storage", "storage_ms_per_game"),
            ("overhead: scheduling + rating + storage", "overhead_ms_per_game"),
            ("  the same in CPU time", "overhead_cpu_ms_per_game"),
            ("rest of the runner (specs, futures, waits)", "other_ms_per_game"),
            ("all but playing", "total_overhead_ms_per_game"),
            ("runner thread CPU (all but playing)", "runner_thread_cpu_ms_per_game"),
            ("playing (referee, bots, engine)", "play_ms_per_game"),
            ("bare engine (same games re-simulated)", "engine_ms_per_game"),
        ):
            print(f"  {name:44} {figures[key]:9.3f}")
        print(
            f"  share of the wall time: overhead {100 * figures['overhead_share']:.2f}%, "
            f"all but playing {100 * figures['total_overhead_share']:.2f}%"
        )
    print()
    for check in report["targets"]:
        verdict = "PASS" if check["pass"] else "MISS"
        print(f"  {verdict}  {check['target']}  [{check['detail']}]")


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="64 games of in-process bots, 1 round of subprocess bots, no progress run")
    parser.add_argument("--overhead-bots", type=int, default=64)
    parser.add_argument("--overhead-games", type=int, default=None, help="default 5000; 64 with --quick")
    parser.add_argument("--subprocess-rounds", type=int, default=None, help="rounds of 8 local bots (default 25; 1 with --quick)")
    parser.add_argument(
        "--progress-games", type=int, default=None,
        help="games of a second in-process run with a progress callback, as `arena run` shows one "
        "(default 1000; 0 skips it, as does --quick)",
    )
    args = parser.parse_args(argv)
    run = harness.Run()
    overhead_games = args.overhead_games if args.overhead_games is not None else (64 if args.quick else 5000)
    subprocess_rounds = args.subprocess_rounds if args.subprocess_rounds is not None else (1 if args.quick else 25)
    progress_games = args.progress_games if args.progress_games is not None else (0 if args.quick else 1000)
    if overhead_games < 1 or subprocess_rounds < 1 or progress_games < 0:
        parser.error("--overhead-games and --subprocess-rounds must be at least 1, --progress-games 0 or more")
    # The runner as a Python API (no progress callback, as `arena run --quiet`).
    inproc = overhead_in_process(args.overhead_bots, overhead_games, progress=False)
    sub = overhead_subprocess(SUBPROCESS_FOLDERS, SUBPROCESS_COPIES, subprocess_rounds, progress=False)
    report: dict[str, Any] = {"overhead_ms_per_game": inproc["overhead_ms_per_game"], "overhead": inproc, "subprocess": sub}
    targets = [
        {
            "target": f"overhead <= {OVERHEAD_TARGET_MS} ms per game (in-process bots)",
            "detail": f"{inproc['overhead_ms_per_game']:.3f} ms",
            "margin": round(OVERHEAD_TARGET_MS - inproc["overhead_ms_per_game"], 4),
            "pass": inproc["overhead_ms_per_game"] <= OVERHEAD_TARGET_MS,
        },
        {
            "target": f"all but playing <= {100 * SUBPROCESS_SHARE_TARGET:g}% of wall time (local subprocess bots)",
            "detail": f"{100 * sub['total_overhead_share']:.2f}% (scheduling + rating + storage alone "
            f"{100 * sub['overhead_share']:.2f}%)",
            "margin": round(SUBPROCESS_SHARE_TARGET - sub["total_overhead_share"], 4),
            "pass": sub["total_overhead_share"] <= SUBPROCESS_SHARE_TARGET,
        },
    ]
    if progress_games:
        shown = overhead_in_process(args.overhead_bots, progress_games, progress=True)
        report["overhead_with_progress"] = shown
        targets.append(
            {
                "target": f"overhead <= {OVERHEAD_TARGET_MS} ms per game with a progress display "
                f"(in-process bots, {shown['games']} games)",
                "detail": f"{shown['overhead_ms_per_game']:.3f} ms",
                "margin": round(OVERHEAD_TARGET_MS - shown["overhead_ms_per_game"], 4),
                "pass": shown["overhead_ms_per_game"] <= OVERHEAD_TARGET_MS,
            }
        )
    report["targets"] = targets
    run.finish(args, report, print_report)


if __name__ == "__main__":
    main()
