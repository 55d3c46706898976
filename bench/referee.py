"""What the referee costs per decision, in process: whole games through `play_game`.

    python bench/referee.py [--games 40] [--repeats 5] [--game 3up3down] [--players 4] [--json]

Four `InProcessBot` seats choose uniformly at random (one seeded rng per seat) among the
legal actions they receive through the same JSON request a bot process gets; the games
are dealt from the fixed seeds 0..N-1, default rules. Every repetition plays the same
games (same seeds, same choices, same decision count); the figure is the median over the
repetitions of games per second of this process's CPU time (one core), and µs per
decision. Wall-clock rates beside them show how busy the shared machine was. Figures in
docs/performance.md, "Referee".
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.referee import play_game  # noqa: E402
from arena.seats import InProcessBot  # noqa: E402
from engine import get_game  # noqa: E402


def random_seats(players: int, seed: int) -> list[InProcessBot]:
    """Seats that pick a legal action's index uniformly at random, each from its own rng."""
    seats = []
    for seat in range(players):
        rng = random.Random(f"bench-referee:{seed}:{seat}")
        seats.append(InProcessBot(lambda observation, legal, rng=rng: rng.randrange(len(legal)), f"random-{seat}"))
    return seats


def play_all(game: str, players: int, games: int) -> tuple[float, float, int]:
    """CPU seconds, wall seconds and decisions of `games` games dealt from seeds 0..games-1."""
    decisions = 0
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    for seed in range(games):
        result = play_game(game, random_seats(players, seed), seed=seed, game_number=seed + 1)
        assert not result.incidents, result.incidents
        decisions += len(result.replay.actions)
    return time.process_time() - cpu_start, time.perf_counter() - wall_start, decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per repetition (deal seeds 0..N-1)")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions; the median is reported")
    parser.add_argument("--game", default="3up3down")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    get_game(args.game)
    play_all(args.game, args.players, 3)  # warm-up: imports, pydantic, deck tables
    runs = [play_all(args.game, args.players, args.games) for _ in range(args.repeats)]
    decisions = runs[0][2]
    assert all(run[2] == decisions for run in runs), "the same seeds must make the same games"
    cpu = statistics.median(run[0] for run in runs)
    wall = statistics.median(run[1] for run in runs)
    report = {
        "game": args.game,
        "players": args.players,
        "games": args.games,
        "repeats": args.repeats,
        "decisions_per_game": round(decisions / args.games, 1),
        "python": sys.version.split()[0],
        "referee_inprocess_games_per_s": round(args.games / cpu, 2),
        "referee_inprocess_us_per_decision": round(cpu / decisions * 1e6, 1),
        "wall_games_per_s": round(args.games / wall, 2),
        "wall_us_per_decision": round(wall / decisions * 1e6, 1),
        "cpu_s_per_repeat": [round(run[0], 3) for run in runs],
    }
    if args.json:
        print(json.dumps(report))
        return
    for key, value in report.items():
        print(f"{key:36} {value}")


if __name__ == "__main__":
    main()
