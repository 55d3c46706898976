"""What the referee costs per decision, in process: whole games through `play_game`.

    python -m bench.referee [--games 40] [--repeats 5] [--game 3up3down] [--players 4] [--json]
    python -m bench.referee --baseline b8a7c88   # this tree and an older commit, in turn

Four `InProcessBot` seats choose uniformly at random (one seeded rng per seat) among the
legal actions they receive through the same JSON request a bot process gets; the games
are dealt from the fixed seeds 0..N-1, default rules. Every repetition plays the same
games (same seeds, same choices, same decision count); the figure is the median over the
repetitions of games per second of this process's CPU time (one core), and µs per
decision. Wall-clock rates beside them show how busy the shared machine was. Figures in
docs/performance.md, "Referee".

`--baseline REV` measures this tree and commit REV side by side in one run: REV's `arena`
and `engine` are unpacked into a temporary folder (`git archive`), and each repetition
runs once per tree, in turn, in a fresh process (this script, told where to import from
with `--tree`); the ratio of the medians is printed (`speedup`). b8a7c88 is the referee as
it was before any of its hot path was made cheaper.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "--tree" in sys.argv:  # another tree's arena and engine (the --baseline runs)
    sys.path.insert(0, sys.argv[sys.argv.index("--tree") + 1])
else:
    sys.path.insert(0, str(ROOT))

from arena.game.referee import play_game
from arena.game.seats import InProcessBot
from bench import harness
from engine import get_game


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


def measure(game: str, players: int, games: int, repeats: int) -> dict:
    """The figures of `repeats` repetitions of the same `games` games in this process."""
    get_game(game)
    play_all(game, players, 3)  # warm-up: imports, pydantic, deck tables
    runs = [play_all(game, players, games) for _ in range(repeats)]
    decisions = runs[0][2]
    assert all(run[2] == decisions for run in runs), "the same seeds must make the same games"
    cpu = statistics.median(run[0] for run in runs)
    wall = statistics.median(run[1] for run in runs)
    return {
        "game": game,
        "players": players,
        "games": games,
        "repeats": repeats,
        "decisions_per_game": round(decisions / games, 1),
        "python": sys.version.split()[0],
        "referee_inprocess_games_per_s": round(games / cpu, 2),
        "referee_inprocess_us_per_decision": round(cpu / decisions * 1e6, 1),
        "wall_games_per_s": round(games / wall, 2),
        "wall_us_per_decision": round(wall / decisions * 1e6, 1),
        "cpu_s_per_repeat": [round(run[0], 3) for run in runs],
    }


def unpack(revision: str, into: Path) -> Path:
    """`arena` and `engine` of a commit of this repository, unpacked under `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "arena", "engine"], check=True, capture_output=True
    ).stdout
    tree = into / revision
    tree.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    return tree


def one_run(tree: Path, args: argparse.Namespace) -> dict:
    """One repetition in a fresh process importing arena from `tree`."""
    command = [
        sys.executable, "-m", "bench.referee", "--tree", str(tree), "--json", "--repeats", "1",
        "--games", str(args.games), "--game", args.game, "--players", str(args.players),
    ]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT).stdout)


def side_by_side(args: argparse.Namespace) -> dict:
    """This tree and `args.baseline`, one repetition of each in turn; medians and their ratio."""
    with tempfile.TemporaryDirectory(prefix="bench-referee-") as folder:
        old = unpack(args.baseline, Path(folder))
        now: list[dict] = []
        before: list[dict] = []
        for _ in range(args.repeats):
            now.append(one_run(ROOT, args))
            before.append(one_run(old, args))
    assert {run["decisions_per_game"] for run in now} == {run["decisions_per_game"] for run in before}, (
        "both trees must play the same games"
    )
    rate = statistics.median(run["referee_inprocess_games_per_s"] for run in now)
    old_rate = statistics.median(run["referee_inprocess_games_per_s"] for run in before)
    return {
        "game": args.game,
        "players": args.players,
        "games": args.games,
        "repeats": args.repeats,
        "decisions_per_game": now[0]["decisions_per_game"],
        "baseline": args.baseline,
        "referee_inprocess_games_per_s": rate,
        "baseline_games_per_s": old_rate,
        "speedup": round(rate / old_rate, 2),
        "referee_inprocess_us_per_decision": statistics.median(run["referee_inprocess_us_per_decision"] for run in now),
        "baseline_us_per_decision": statistics.median(run["referee_inprocess_us_per_decision"] for run in before),
        "games_per_s_each": [run["referee_inprocess_games_per_s"] for run in now],
        "baseline_games_per_s_each": [run["referee_inprocess_games_per_s"] for run in before],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="4 games, 1 repeat")
    parser.add_argument("--games", type=int, default=40, help="games per repetition (deal seeds 0..N-1)")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions; the median is reported")
    parser.add_argument("--game", default="3up3down")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--baseline", metavar="REV", help="also measure this commit, in turn with this tree")
    parser.add_argument("--tree", help=argparse.SUPPRESS)  # where to import arena from (--baseline's runs)
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.repeats = 4, 1
    run = harness.Run()
    if args.baseline:
        report = side_by_side(args)
    else:
        report = measure(args.game, args.players, args.games, args.repeats)
    def show(report: dict) -> None:
        for key, value in report.items():
            print(f"{key:36} {value}")

    run.finish(args, report, show)


if __name__ == "__main__":
    main()
