"""What each starter kit (kits/<lang>/) costs per decision in Docker, against the Python
kit's, and how long its build takes.

    python -m bench.kits [--decisions N] [--stream N] [--languages c,go,...] [--quick] [--json]

For each kit: a copy is built from scratch in the Docker sandbox (its `build` step in its
language's image: the build time, which includes the container's start), then started
and asked the same real requests N times each: a Three Thirteen discard with an 11-card
hand (the kit computes the least deadwood for every discard) and a 3UP 3DOWN request (a
random legal move: the protocol alone). Round trip = one decide() of the referee's seat:
encode, send, the bot parses, decides and answers, read and check. The kits take turns,
one decision each, so that all meet the same moments of a shared machine's load. "cpu
us" = the kit's own CPU per request, from a stream of --stream requests (Three Thirteen: a
twentieth) piped in at once, less a run with none (what the machine's load blurs least). Target (issue 26): every compiled kit at most the
Python kit's round trip. Results: docs/performance.md, "Starter kits". Needs the
language images (`arena images build`).
"""

from __future__ import annotations

import json
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from arena.config.botfolder import load_bot
from arena.game.protocol import MatchOver, Start, encode_request
from arena.langs.build import run_build
from arena.langs.kits import available, new_bot
from arena.play.executor import remote_bot
from arena.sandbox import Limits
from arena.sandbox.docker import DockerSandbox, engine_problem
from arena.store.seeds import RunKey
from bench import harness
from engine import get_game
from engine.players import random_action

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


def open_seat(box, folder: Path, game: str):
    """A referee seat for the kit in `folder`, started for one game of `game`."""
    rules = get_game(game).resolve_options({})
    seat = remote_bot(
        load_bot(folder).spec(), box, Limits(startup_s=60.0, time_bank_s=600.0), game=game, players=2,
        rules=rules, games=1, seed=RunKey.from_seed(1).bot_seed("match", "kit"),
    )
    seat.start_game(Start(game_number=1, seat=0, players=2, rules=rules))
    return seat


def round_trips(box, folders: dict[str, Path], game: str, observation, legal, count: int) -> dict[str, list[float]]:
    """Seconds per decide() round trip to each kit, `count` times after a warm-up. The kits
    take turns (one decision each, in an order that rotates), so that every kit meets the
    same moments of a shared machine's load, not one kit a quiet minute and another a busy one."""
    seats = {language: open_seat(box, folder, game) for language, folder in folders.items()}
    times: dict[str, list[float]] = {language: [] for language in seats}
    try:
        for seat in seats.values():
            for _ in range(20):  # warm-up (the JVM compiles, caches fill)
                seat.decide(observation, legal)
        order = list(seats)
        for turn in range(count):
            shift = turn % len(order)
            for language in order[shift:] + order[:shift]:
                began = time.perf_counter()
                seats[language].decide(observation, legal)
                times[language].append(time.perf_counter() - began)
        return times
    finally:
        for seat in seats.values():
            seat.finish(MatchOver(games=1))


def cpu_per_request_us(box, folder: Path, scratch: Path, game: str, count: int) -> float:
    """The kit's own CPU (user + system) per request, in microseconds: `count` requests piped
    in at once (the kit never waits for the referee), less a run with none. This is what a
    request costs the kit itself, whatever the machine's load does to the round trip."""
    spec = load_bot(folder).spec()
    command = " ".join(shlex.quote(word) for word in spec.command)
    run = "TIMEFORMAT='%3U %3S'; { time " + command + " < /bench/STREAM > /dev/null; } 2>&1"
    output = box.client.containers.run(
        box.image_for(spec), ["bash", "-c", run.replace("STREAM", "none.jsonl") + "; " + run.replace("STREAM", f"{game}.jsonl")],
        working_dir="/bot", network_mode="none", remove=True, labels={"arena.sandbox": "bench"},
        volumes={str(folder): {"bind": "/bot", "mode": "ro"}, str(scratch): {"bind": "/bench", "mode": "ro"}},
    ).decode().split()
    empty, full = float(output[0]) + float(output[1]), float(output[2]) + float(output[3])
    return (full - empty) / count * 1e6


def request_stream(game: str, observation, legal, count: int) -> bytes:
    """hello, start, `count` requests, match_over: what cpu_per_request_us pipes in."""
    lines = [json.dumps({"type": "hello", "game": game, "protocol": 1, "seed": 7, "players": 2}).encode(),
             json.dumps({"type": "start", "game_number": 1, "seat": 0, "players": 2, "seed": 5}).encode()]
    lines += [encode_request(number + 1, observation, legal, 1.0, 10.0) for number in range(count)]
    lines.append(json.dumps({"type": "match_over", "games": 1}).encode())
    return b"\n".join(lines) + b"\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="the Python and C kits, 30 decisions, a stream of 500")
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--stream", type=int, default=20000,
                        help="3UP 3DOWN requests piped in for the CPU figure (Three Thirteen: a twentieth)")
    parser.add_argument("--languages", default=",".join(available()))
    args = parser.parse_args(argv)
    if args.quick:
        args.decisions, args.stream = 30, 500
        args.languages = ",".join(language for language in ("python", "c") if language in args.languages.split(","))
    run = harness.Run()
    problem = engine_problem()
    if problem:
        sys.exit(f"bench.kits needs Docker: {problem}")
    box = DockerSandbox()
    requests = {"three-thirteen": three_thirteen_discard(), "3up3down": threeup_request()}
    rows: dict[str, dict] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="arena-bench-kits-") as scratch:
            streams = Path(scratch) / "streams"
            streams.mkdir()
            os.chmod(scratch, 0o755)
            (streams / "none.jsonl").write_bytes(request_stream("3up3down", {}, [], 0))
            # A Three Thirteen discard costs the Python kit ~4 ms: a twentieth as many of them.
            stream = {"3up3down": args.stream, "three-thirteen": max(50, args.stream // 20)}
            for game, (observation, legal) in requests.items():
                (streams / f"{game}.jsonl").write_bytes(request_stream(game, observation, legal, stream[game]))
            folders = {}
            for language in args.languages.split(","):
                folders[language] = new_bot(Path(scratch) / language, language)
                rows[language] = {"build_s": run_build(load_bot(folders[language]).spec(), box, fresh=True)}
            for game, (observation, legal) in requests.items():
                times = round_trips(box, folders, game, observation, legal, args.decisions)
                for language, folder in folders.items():
                    rows[language][game] = {
                        "median_ms": statistics.median(times[language]) * 1e3,
                        "p90_ms": sorted(times[language])[int(0.9 * len(times[language]))] * 1e3,
                        "cpu_us": cpu_per_request_us(box, folder, streams, game, stream[game]),
                    }
    finally:
        box.close()
    def show(rows: dict) -> None:
        python = rows.get("python")
        print(f"{'kit':6} {'build s':>7}  {'3313 ms':>7} {'p90':>5} {'vs py':>5} {'cpu us':>6}"
              f"  {'3u3d ms':>7} {'p90':>5} {'vs py':>5} {'cpu us':>6}")
        for language, row in rows.items():
            cells = [f"{language:6}", f"{row['build_s']:7.1f}" if row["build_s"] is not None else f"{'-':>7}"]
            for game in ("three-thirteen", "3up3down"):
                ratio = row[game]["median_ms"] / python[game]["median_ms"] if python else float("nan")
                cells += [f" {row[game]['median_ms']:7.3f}", f"{row[game]['p90_ms']:5.2f}", f"{ratio:5.2f}",
                          f"{row[game]['cpu_us']:6.0f}"]
            print(" ".join(cells))
        if python:
            for game in ("three-thirteen", "3up3down"):
                slower = [language for language in COMPILED if language in rows
                          and rows[language][game]["median_ms"] > python[game]["median_ms"]]
                print(f"target at {game} (compiled kits at most the Python kit's median):",
                      "met" if not slower else f"missed by {', '.join(slower)}")


    run.finish(args, rows, show)

if __name__ == "__main__":
    main()
