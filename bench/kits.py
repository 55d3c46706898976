"""What each starter kit (kits/<lang>/) costs per decision in Docker, against the Python
kit's, and how long its build takes.

    python bench/kits.py [--decisions N] [--languages c,go,...] [--json]

For each kit: a copy is built from scratch in the Docker sandbox (its `build` step in its
language's image: the build time, which includes the container's start), then started
once and asked the same real requests N times each: a Three Thirteen discard with a
10-card hand (the kit computes the least deadwood for every discard) and a 3UP 3DOWN
request (a random legal move: the protocol alone). Round trip = one decide() of the
referee's seat: encode, send, the bot parses, decides and answers, read and check.
Target (issue 26): every compiled kit at most the Python kit's round trip.
Results: docs/performance.md, "Starter kits". Needs the language images
(`arena images build`).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.config.botfolder import load_bot  # noqa: E402
from arena.game.protocol import MatchOver, Start  # noqa: E402
from arena.langs.build import run_build  # noqa: E402
from arena.langs.kits import available, new_bot  # noqa: E402
from arena.run.play import remote_bot  # noqa: E402
from arena.sandbox import Limits  # noqa: E402
from arena.sandbox.docker import DockerSandbox, engine_problem  # noqa: E402
from arena.store.seeds import RunKey  # noqa: E402
from engine import get_game  # noqa: E402
from engine.players import random_action  # noqa: E402

COMPILED = ("c", "cpp", "rust", "go", "java")


def three_thirteen_discard() -> tuple[dict, list[dict]]:
    """A real Three Thirteen discard request with at least 10 cards in hand (fixed seed)."""
    state = get_game("three-thirteen").new_game(2, {}, seed=5)
    rng = random.Random(5)
    for _ in range(200_000):
        legal = state.legal_actions()
        hand = state.observation(state.current_player).get("hand") or []
        if len(hand) >= 11 and any(action["type"] == "discard" for action in legal):
            return state.observation(state.current_player), legal
        choices = [a for a in legal if a["type"] != "go_out"] or legal  # let the rounds grow
        state.apply(rng.choice(choices))
    raise RuntimeError("no 10-card discard found")


def threeup_request() -> tuple[dict, list[dict]]:
    """A mid-game 3UP 3DOWN request (fixed seed)."""
    state = get_game("3up3down").new_game(2, {}, seed=3)
    rng = random.Random(3)
    for _ in range(30):
        state.apply(random_action(state, rng))
    return state.observation(state.current_player), state.legal_actions()


def round_trips(box, folder: Path, game: str, observation, legal, count: int) -> list[float]:
    """Seconds per decide() round trip to the kit in `folder`, `count` times after a warm-up."""
    rules = get_game(game).resolve_options({})
    seat = remote_bot(
        load_bot(folder).spec(), box, Limits(startup_s=30.0, time_bank_s=60.0), game=game, players=2,
        rules=rules, games=1, seed=RunKey.from_seed(1).bot_seed("match", "kit"),
    )
    try:
        seat.start_game(Start(game_number=1, seat=0, players=2, rules=rules))
        for _ in range(20):  # warm-up (the JVM compiles, caches fill)
            seat.decide(observation, legal)
        times = []
        for _ in range(count):
            began = time.perf_counter()
            seat.decide(observation, legal)
            times.append(time.perf_counter() - began)
        return times
    finally:
        seat.finish(MatchOver(games=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--languages", default=",".join(available()))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    problem = engine_problem()
    if problem:
        sys.exit(f"bench/kits.py needs Docker: {problem}")
    box = DockerSandbox()
    requests = {"three-thirteen": three_thirteen_discard(), "3up3down": threeup_request()}
    rows = {}
    try:
        with tempfile.TemporaryDirectory(prefix="arena-bench-kits-") as scratch:
            for language in args.languages.split(","):
                folder = new_bot(Path(scratch) / language, language)
                built = run_build(load_bot(folder).spec(), box, fresh=True)
                row = {"build_s": built}
                for game, (observation, legal) in requests.items():
                    times = round_trips(box, folder, game, observation, legal, args.decisions)
                    row[game] = {"median_ms": statistics.median(times) * 1e3,
                                 "p90_ms": sorted(times)[int(0.9 * len(times))] * 1e3}
                rows[language] = row
    finally:
        box.close()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    python = rows.get("python")
    print(f"{'kit':7} {'build s':>8} {'3313 ms':>8} {'p90':>6} {'vs py':>6} {'3u3d ms':>8} {'p90':>6} {'vs py':>6}")
    for language, row in rows.items():
        cells = [f"{language:7}", f"{row['build_s']:8.1f}" if row["build_s"] is not None else f"{'-':>8}"]
        for game in ("three-thirteen", "3up3down"):
            ratio = row[game]["median_ms"] / python[game]["median_ms"] if python else float("nan")
            cells += [f"{row[game]['median_ms']:8.3f}", f"{row[game]['p90_ms']:6.2f}", f"{ratio:6.2f}"]
        print(" ".join(cells))
    if python:
        for game in ("three-thirteen", "3up3down"):
            slower = [language for language in COMPILED if language in rows
                      and rows[language][game]["median_ms"] > python[game]["median_ms"]]
            print(f"target at {game} (compiled kits at most the Python kit's median):",
                  "met" if not slower else f"missed by {', '.join(slower)}")

if __name__ == "__main__":
    main()
