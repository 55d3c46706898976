"""What a Docker bot costs: container start, removal, and a round trip of one message.

    python bench/docker_lifecycle.py [--starts N] [--round-trips N] [--json]

An echo bot (python3, standard library) is started N times in the docker sandbox; each
start is timed from `start()` to the first reply (create + attach + start + the bot's
python start-up), and each `close()` (kill + wait + remove). Then one container answers
many one-line messages, with stdin/stdout over named pipes (the default) and over the
attach socket; the same is done in the local sandbox for comparison. The
figures are in docs/performance.md ("Docker sandbox").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.sandbox import BotSpec, Limits, get_sandbox

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
MESSAGE = json.dumps({"type": "request", "id": 1, "legal": list(range(20))}).encode()


def percentile(values: list[float], fraction: float) -> float:
    """The value below which `fraction` of `values` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def time_starts(bot: BotSpec, count: int) -> tuple[list[float], list[float]]:
    """Seconds from start() to the first reply, and for close(), of `count` containers."""
    sandbox = get_sandbox("docker")
    starts, closes = [], []
    for _ in range(count):
        began = time.perf_counter()
        process = sandbox.start(bot, Limits())
        process.send_line(MESSAGE)
        process.receive_line(30)
        starts.append(time.perf_counter() - began)
        began = time.perf_counter()
        process.close()
        closes.append(time.perf_counter() - began)
    return starts, closes


def time_round_trips(sandbox_name: str, bot: BotSpec, count: int, **settings: str) -> list[float]:
    """Seconds per send_line + receive_line of one message, `count` times in one bot."""
    if sandbox_name == "local":
        settings["warn"] = False
    process = get_sandbox(sandbox_name, **settings).start(bot, Limits())
    try:
        process.send_line(MESSAGE)
        process.receive_line(30)  # start-up is not part of a round trip
        times = []
        for _ in range(count):
            began = time.perf_counter()
            process.send_line(MESSAGE)
            process.receive_line(5)
            times.append(time.perf_counter() - began)
        return times
    finally:
        process.close()


def main() -> None:
    """Run the measurements and print them (a table, or one JSON object with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--round-trips", type=int, default=5000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o755)
        (Path(folder) / "bot.py").write_text(ECHO)
        (Path(folder) / "bot.py").chmod(0o644)
        bot = BotSpec(name="echo", folder=Path(folder), command=("python3", "bot.py"))
        # Round trips first: the engine keeps working for a while after removing containers.
        docker_rtt = time_round_trips("docker", bot, args.round_trips, stdio="fifo")
        attach_rtt = time_round_trips("docker", bot, args.round_trips, stdio="attach")
        local_rtt = time_round_trips("local", bot, args.round_trips)
        starts, closes = time_starts(bot, args.starts)
    figures = {
        "docker_start_to_first_reply_median_ms": statistics.median(starts) * 1e3,
        "docker_start_to_first_reply_max_ms": max(starts) * 1e3,
        "docker_close_median_ms": statistics.median(closes) * 1e3,
        "docker_rtt_median_us": statistics.median(docker_rtt) * 1e6,
        "docker_rtt_p99_us": percentile(docker_rtt, 0.99) * 1e6,
        "docker_attach_rtt_median_us": statistics.median(attach_rtt) * 1e6,
        "docker_attach_rtt_p99_us": percentile(attach_rtt, 0.99) * 1e6,
        "local_rtt_median_us": statistics.median(local_rtt) * 1e6,
        "local_rtt_p99_us": percentile(local_rtt, 0.99) * 1e6,
    }
    figures = {name: round(value, 1) for name, value in figures.items()}
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:42} {value:10.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
