"""Speed of Three Thirteen: the meld solver per hand, and whole games with random players.

    python -m bench.three_thirteen [--hands 5000] [--games 40] [--seed 1] [--quick] [--json]

Solver: `--hands` random 14-card hands from two decks, each with at least one wild (wild
rank drawn from 3..K; a hand that drew none gets one card swapped for a wild), timed one
by one in CPU time (wall clock too, for the solver): `best_arrangement` (the exact
optimum, arrangement included) and `going_out_discards` (the per-turn "which discards go
out" question).
Games: `--games` complete 4-player games, default rules (all eleven rounds, turn cap 200),
seeded random legal players, through the public API (`State.apply`); games/s is given by
the wall clock and per CPU second of this process (the fair figure on a busy machine).
One core; figures in docs/performance.md.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence

from bench import harness
from engine import get_game
from engine.players import random_action
from engine.three_thirteen import best_arrangement, card_id, going_out_discards


def random_hands(count: int, seed: int) -> list[tuple[list[int], int]]:
    """Random 14-card hands from two decks, each holding at least one wild."""
    rng = random.Random(seed)
    hands = []
    for _ in range(count):
        wild_rank = rng.randint(3, 13)
        hand = rng.sample(range(104), 14)
        if not any(c % 13 + 1 == wild_rank for c in hand):
            hand[rng.randrange(14)] = card_id(wild_rank, rng.randrange(4), rng.randrange(2))
        hands.append((hand, wild_rank))
    return hands


def percentile(sorted_values: list[float], fraction: float) -> float:
    """The value below which `fraction` of the (sorted) values lie."""
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def time_each(function, hands, clock=time.process_time) -> list[float]:
    """Milliseconds per call of `function(hand, wild_rank)`, sorted.

    The default clock is this process's CPU time: on a shared machine the wall clock
    also counts the moments the process waited for a core, which swamps a 0.1 ms call.
    """
    times = []
    for hand, wild_rank in hands:
        start = clock()
        function(hand, wild_rank)
        times.append((clock() - start) * 1000)
    times.sort()
    return times


def play_games(players: int, games: int, seed: int) -> dict:
    """Play `games` default games with random players; timing and round endings."""
    game = get_game("three-thirteen")
    decisions = 0
    reasons: dict[str, int] = {}
    start, cpu_start = time.perf_counter(), time.process_time()
    for index in range(games):
        state = game.new_game(players, seed=seed + index)
        rng = random.Random(seed + index)
        while not state.is_over:
            state.apply(random_action(state, rng))
            decisions += 1
        state.places()
        for result in state.round_results:
            reasons[result["reason"]] = reasons.get(result["reason"], 0) + 1
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return {
        "games": games,
        "seconds": elapsed,
        "games_per_s": games / elapsed,
        "games_per_cpu_s": games / cpu,
        "decisions_per_s": decisions / elapsed,
        "decisions_per_game": decisions / games,
        "round_endings": reasons,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="200 hands, 2 games")
    parser.add_argument("--hands", type=int, default=5000, help="random hands for the solver (default 5000)")
    parser.add_argument("--games", type=int, default=40, help="4-player games (default 40)")
    parser.add_argument("--seed", type=int, default=1, help="seed of hands and games (default 1)")
    args = parser.parse_args(argv)
    run = harness.Run()
    if args.quick:
        args.hands, args.games = 200, 2
    if args.hands < 10 or args.games < 1:
        parser.error("--hands must be at least 10 and --games at least 1")

    hands = random_hands(args.hands, args.seed)
    play_games(4, 2, seed=10_000)  # warm-up: imports and the solver's small lookup tables
    solver = time_each(best_arrangement, hands)
    solver_wall = time_each(best_arrangement, hands, clock=time.perf_counter)
    going_out = time_each(going_out_discards, hands)
    games = play_games(4, args.games, args.seed)
    result = {
        "hands": args.hands,
        "solver_median_ms": statistics.median(solver),
        "solver_p99_ms": percentile(solver, 0.99),
        "solver_max_ms": solver[-1],
        "solver_wall_median_ms": statistics.median(solver_wall),
        "solver_wall_p99_ms": percentile(solver_wall, 0.99),
        "going_out_median_ms": statistics.median(going_out),
        "going_out_p99_ms": percentile(going_out, 0.99),
        "going_out_mean_ms": statistics.fmean(going_out),
        "games_4p": games["games"],
        "games_per_s_4p": games["games_per_s"],
        "games_per_cpu_s_4p": games["games_per_cpu_s"],
        "decisions_per_s_4p": games["decisions_per_s"],
        "decisions_per_game_4p": games["decisions_per_game"],
        "round_endings_4p": games["round_endings"],
    }
    def show(result: dict) -> None:
        print(f"Three Thirteen benchmark (seed {args.seed})")
        print(f"  solver, {args.hands} random 14-card hands with wilds (best_arrangement), CPU time:")
        print(f"    median {result['solver_median_ms']:.3f} ms, p99 {result['solver_p99_ms']:.3f} ms, "
              f"max {result['solver_max_ms']:.3f} ms")
        print(f"    (wall clock: median {result['solver_wall_median_ms']:.3f} ms, "
              f"p99 {result['solver_wall_p99_ms']:.3f} ms)")
        print("  which discards go out (going_out_discards), same hands, CPU time:")
        print(f"    median {result['going_out_median_ms']:.4f} ms, p99 {result['going_out_p99_ms']:.3f} ms, "
              f"mean {result['going_out_mean_ms']:.4f} ms")
        print(f"  {games['games']} complete 4-player games, random players, default rules:")
        print(f"    {games['games_per_s']:.1f} games/s wall clock ({games['games_per_cpu_s']:.1f} per CPU second), "
              f"{games['decisions_per_s']:.0f} decisions/s, {games['decisions_per_game']:.0f} decisions/game")
        endings = ", ".join(f"{k} {v}" for k, v in sorted(games["round_endings"].items()))
        print(f"    how rounds ended: {endings}")


    run.finish(args, result, show)

if __name__ == "__main__":
    main()
