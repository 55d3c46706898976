"""What the protocol costs per decision, and what a whole match costs, per sandbox.

    python -m bench.protocol [--decisions N] [--games N] [--game G] [--no-docker] [--quick] [--json]

Round trip = one `decide()` of the referee's seat: encode the request, send it, the bot
parses it and answers (bots/random, through the arena_bot helper), read and check the
answer. The request is a real 3up3down mid-game request. "in-process" runs the same
decide function in this process through the same JSON encoding, without a pipe. Then a
match of N games (default 100) between two random bots, local vs Docker: the container
start is paid once per bot per match. Docker figures are skipped when no engine is
reachable. Results: docs/performance.md, "Protocol and sandboxes".
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from arena.config.botfolder import load_bot
from arena.game.protocol import MatchOver, Start
from arena.game.seats import InProcessBot
from arena.play.executor import remote_bot
from arena.play.match import run_match
from arena.sandbox import Limits, get_sandbox
from arena.store.seeds import RunKey
from bench import harness
from engine import get_game
from engine.players import random_action

RANDOM_BOT = ROOT / "bots" / "random"


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def sample_request(game: str) -> tuple[dict, list[dict]]:
    """A mid-game observation and its legal actions (a few dozen moves in, fixed seed)."""
    state = get_game(game).new_game(2, {}, seed=3)
    rng = random.Random(3)
    for _ in range(30):
        if state.is_over:
            break
        state.apply(random_action(state, rng))
    return state.observation(state.current_player), state.legal_actions()


def time_decisions(seat, observation, legal, count: int) -> list[float]:
    """Seconds per decide() round trip, `count` times (after a short warm-up)."""
    for _ in range(50):
        seat.decide(observation, legal)
    times = []
    for _ in range(count):
        began = time.perf_counter()
        seat.decide(observation, legal)
        times.append(time.perf_counter() - began)
    return times


def remote_round_trips(sandbox_name: str, game: str, observation, legal, count: int) -> tuple[list[float], float]:
    """Round trips to bots/random in a sandbox, and its start-up (start to `ready`) in seconds."""
    sandbox = get_sandbox(sandbox_name, **({"warn": False} if sandbox_name == "local" else {}))
    limits = Limits()
    rules = get_game(game).resolve_options({})
    seat = remote_bot(
        load_bot(RANDOM_BOT).spec(), sandbox, limits, game=game, players=2, rules=rules, games=1,
        seed=RunKey.from_seed(1).bot_seed("match", "random"),
    )
    try:
        seat.start_game(Start(game_number=1, seat=0, players=2, rules=rules))
        return time_decisions(seat, observation, legal, count), seat.startup_s[0]
    finally:
        seat.finish(MatchOver(games=1))


def match_seconds(sandbox_name: str, game: str, games: int) -> tuple[float, int]:
    """Wall time of a match of `games` games between two random bots, and its decision count."""
    sandbox = get_sandbox(sandbox_name, **({"warn": False} if sandbox_name == "local" else {}))
    began = time.perf_counter()
    result = run_match(game, [RANDOM_BOT, RANDOM_BOT], games=games, seed=1, sandbox=sandbox)
    elapsed = time.perf_counter() - began
    assert all(not r.incidents for r in result.games), [r.incidents for r in result.games]
    return elapsed, sum(len(r.replay.actions) for r in result.games)


def docker_available() -> str | None:
    """None if the docker sandbox can run here, else why not."""
    from arena.sandbox.docker import engine_problem

    return engine_problem()


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="200 round trips, a match of 4 games")
    parser.add_argument("--decisions", type=int, default=2000, help="round trips per sandbox")
    parser.add_argument("--games", type=int, default=100, help="games in the timed match")
    parser.add_argument("--game", default="3up3down")
    parser.add_argument("--no-docker", action="store_true", help="skip the Docker figures")
    args = parser.parse_args(argv)
    if args.quick:
        args.decisions, args.games = 200, 4
    run = harness.Run()

    observation, legal = sample_request(args.game)
    sys.path.insert(0, str(RANDOM_BOT))  # the random bot's own decide, in this process
    import arena_bot  # noqa: F401 - the helper beside bots/random
    from bot import decide as random_decide  # bots/random/bot.py

    rng = random.Random(1)

    class Ctx:
        pass

    ctx = Ctx()
    ctx.rng = rng
    inprocess = InProcessBot(lambda obs, acts: random_decide(obs, acts, ctx), "in-process")
    report: dict[str, float | int | str | None] = {
        "game": args.game,
        "request_bytes": len(json.dumps({"observation": observation, "legal_actions": legal})),
        "decisions": args.decisions,
        "match_games": args.games,
    }
    times = time_decisions(inprocess, observation, legal, args.decisions)
    report["inprocess_rtt_median_us"] = statistics.median(times) * 1e6
    report["inprocess_rtt_p99_us"] = percentile(times, 0.99) * 1e6

    sandboxes = ["local"]
    why_not = None if args.no_docker else docker_available()
    if not args.no_docker and why_not is None:
        sandboxes.append("docker")
    for name in sandboxes:
        times, startup = remote_round_trips(name, args.game, observation, legal, args.decisions)
        report[f"{name}_rtt_median_us"] = statistics.median(times) * 1e6
        report[f"{name}_rtt_p99_us"] = percentile(times, 0.99) * 1e6
        report[f"{name}_startup_ms"] = startup * 1e3
        seconds, decisions = match_seconds(name, args.game, args.games)
        report[f"match{args.games}_{name}_s"] = seconds
        report[f"match{args.games}_{name}_decisions"] = decisions
    for name in ("docker",):
        report.setdefault(f"{name}_rtt_median_us", None)
        report.setdefault(f"match{args.games}_{name}_s", None)
    if why_not and not args.no_docker:
        report["docker_skipped"] = why_not[:200]

    def show(report: dict) -> None:
        for key, value in report.items():
            shown = f"{value:.1f}" if isinstance(value, float) else str(value)
            print(f"{key:32} {shown}")

    run.finish(args, report, show)


if __name__ == "__main__":
    main()
