"""Speed of the 3UP 3DOWN engine: random legal players, in process, through the public API.

    python -m bench.engine [--games 400] [--game 3up3down] [--quick] [--json]

Plays `--games` complete games at 2, 4 and 6 players (deal seeds 0..N-1, default rules)
and prints games/s, decisions/s, decisions per game, the peak resident memory and how
much the resident memory grew over the second half of the 4-player games (it should stay
flat: a finished game leaves nothing behind). The rates are per second of this process's
CPU time, i.e. of one core, so that other work on a shared machine does not skew them;
wall-clock rates are printed beside them. Figures in docs/performance.md.
"""

from __future__ import annotations

import os
import random
import resource
import time
from collections.abc import Sequence

from bench import harness
from engine import get_game
from engine.players import random_action


def resident_mb() -> float:
    """Current resident memory in MB (Linux /proc), else the peak as a fallback."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return peak_rss_mb()


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB (ru_maxrss is in KB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def play(game_name: str, players: int, games: int, watch_memory: bool = False) -> dict:
    """Play `games` random games; return timing and (optionally) memory growth."""
    game = get_game(game_name)
    decisions = 0
    rss_half = rss_end = 0.0
    start = time.perf_counter()
    cpu_start = time.process_time()
    for seed in range(games):
        state = game.new_game(players, seed=seed)
        rng = random.Random(seed)
        while not state.is_over:
            state.apply(random_action(state, rng))
            decisions += 1
        state.places()
        if watch_memory and seed == games // 2:
            rss_half = resident_mb()
    cpu = time.process_time() - cpu_start
    elapsed = time.perf_counter() - start
    if watch_memory:
        rss_end = resident_mb()
    return {
        "players": players,
        "games": games,
        "cpu_seconds": cpu,
        "wall_seconds": elapsed,
        "games_per_s": games / cpu,
        "decisions_per_s": decisions / cpu,
        "wall_games_per_s": games / elapsed,
        "decisions_per_game": decisions / games,
        "rss_growth_mb": rss_end - rss_half,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="20 games per player count")
    parser.add_argument("--games", type=int, default=400, help="games per player count (default 400)")
    parser.add_argument("--game", default="3up3down", help="registered game name (default 3up3down)")
    args = parser.parse_args(argv)
    if args.quick:
        args.games = 20
    if args.games < 2:
        parser.error("--games must be at least 2")
    run = harness.Run()
    play(args.game, 4, 5)  # warm-up: imports, deck tables
    runs = {players: play(args.game, players, args.games, watch_memory=players == 4) for players in (2, 4, 6)}
    report = {
        "game": args.game,
        "games": args.games,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "rss_growth_second_half_4p_mb": round(runs[4]["rss_growth_mb"], 2),
    }
    for players, one in runs.items():
        report[f"games_per_s_{players}p"] = round(one["games_per_s"], 1)
        report[f"decisions_per_s_{players}p"] = round(one["decisions_per_s"])
        report[f"decisions_per_game_{players}p"] = round(one["decisions_per_game"], 1)
        report[f"wall_games_per_s_{players}p"] = round(one["wall_games_per_s"], 1)

    def show(report: dict) -> None:
        print(f"{args.game}: {args.games} games per row, random legal players, one core")
        print(f"{'players':>7} {'games/s':>9} {'decisions/s':>12} {'decisions/game':>15} {'wall games/s':>13}")
        for players, one in runs.items():
            print(
                f"{players:>7} {one['games_per_s']:>9.1f} {one['decisions_per_s']:>12.0f} "
                f"{one['decisions_per_game']:>15.1f} {one['wall_games_per_s']:>13.1f}"
            )
        growth = report["rss_growth_second_half_4p_mb"]
        verdict = "flat" if growth < 1.0 else "GROWING: a finished game leaves something behind"
        print(f"peak RSS {report['peak_rss_mb']} MB; RSS growth over the second half of the 4-player games "
              f"{growth} MB ({verdict})")

    run.finish(args, report, show)


if __name__ == "__main__":
    main()
