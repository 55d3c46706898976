"""What a Docker bot costs: container start, removal, a round trip of one message, and
4-seat games with warm slots against cold containers, with the engine's CPU per game.

    python -m bench.docker_lifecycle [--starts N] [--round-trips N] [--games N] [--json]
    python -m bench.docker_lifecycle --only games [--games N]

An echo bot (python3, standard library) is started N times in the docker sandbox; each
start is timed from `start()` to the first reply (create + attach + start + the bot's
python start-up), and each `close()` (kill + wait + remove). Then one container answers
many one-line messages, with stdin/stdout over named pipes (the default), in a warm
slot's container (three pipes per process) and over the attach socket; the same is done
in the local sandbox for comparison.

Games: N 4-seat games, one after another, in each design in turn (cold: a container per
bot per game; warm: a slot per seat, a fresh process per game in the slot's container,
started by arena's launcher in the container, in fresh network and IPC namespaces),
after one game that is not counted (warm, it makes the four containers: its start is
printed as first_game_start_ms).
A game starts its four bots side by side, plays 232 one-line decisions in turn (a 3UP
3DOWN game's count) and closes the four one after another, as a game in a run does. Per
design: games/s, the game's start (the last of its four first replies), and the Docker
engine's CPU per game, read from /proc (`EngineCpu`: dockerd, containerd, the shims and
any runc caught running) and, with --engine-cgroup, counted by the kernel
(`EngineCgroupCpu`, runc included). The figures are in docs/performance.md ("Docker sandbox").
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from arena.sandbox import BotSpec, Limits, get_sandbox
from bench import harness

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
MESSAGE = json.dumps({"type": "request", "id": 1, "legal": list(range(20))}).encode()


# The Docker engine's processes by their command name (/proc/PID/stat, at most 15 characters).
ENGINE_COMMANDS = ("dockerd", "containerd", "containerd-shim", "runc", "docker-proxy")
DECISIONS = 232  # one 4-seat 3UP 3DOWN game, as the issue measured it
SEATS = 4


def _cpu_of(pid: str) -> tuple[str, str, float] | None:
    """(command, start time, utime+stime in seconds) of a process, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as source:
            stat = source.read()
    except OSError:
        return None
    command = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat.rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime is field 14, stime 15, starttime 22
    return command, fields[19], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def engine_cpu_seconds() -> float:
    """The CPU seconds (user + system) the Docker engine's processes running now have used:
    dockerd, containerd, the containerd shims (one per container) and any runc running.
    A process that has ended is not counted: see `EngineCpu` to follow shims that end."""
    total = 0.0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            seen = _cpu_of(pid)
            if seen is not None and seen[0].startswith(ENGINE_COMMANDS):
                total += seen[2]
    return total


class EngineCpu:
    """The Docker engine's CPU seconds over a stretch of time, from /proc.

    dockerd, containerd and the shims are read at the start and the end, and every
    `every_s` in between (a thread), so that a shim ending with its container (the cold
    design) is counted up to its last reading. runc runs for milliseconds at a time,
    reaped by the shim: its time is counted when a reading finds it running, and is
    otherwise missed (it goes to the shim's children's time, which also holds the bots').
    Other users of the engine count too: measure on a machine where nothing else uses it.

        with EngineCpu() as engine:
            ...
        engine.seconds
    """

    def __init__(self, every_s: float = 0.02):
        self.every_s = every_s
        self.seconds = 0.0
        self._first: dict[tuple[str, str], float] = {}
        self._last: dict[tuple[str, str], float] = {}
        self._known: dict[str, tuple[str, str] | None] = {}  # pid -> key, or None: not the engine's
        self._began = False  # after the first reading, a new process counts from 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="engine-cpu", daemon=True)

    def _read(self) -> None:
        pids = [pid for pid in os.listdir("/proc") if pid.isdigit()]
        for pid in pids:
            if pid in self._known and self._known[pid] is None:
                continue
            seen = _cpu_of(pid)
            if seen is None:
                continue
            command, started, cpu = seen
            if not command.startswith(ENGINE_COMMANDS):
                self._known[pid] = None
                continue
            key = (pid, started)
            self._known[pid] = key
            self._first.setdefault(key, 0.0 if self._began else cpu)
            self._last[key] = cpu
        alive = set(pids)
        self._known = {pid: key for pid, key in self._known.items() if pid in alive}

    def _follow(self) -> None:
        while not self._stop.wait(self.every_s):
            self._read()

    def __enter__(self) -> EngineCpu:
        self._read()
        self._began = True
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._read()
        self.seconds = sum(cpu - self._first.get(key, 0.0) for key, cpu in self._last.items())


CPUACCT = Path("/sys/fs/cgroup/cpuacct")
ENGINE_GROUP = "arena-bench-engine"


class EngineCgroupCpu:
    """The Docker engine's CPU seconds over a stretch of time, counted by the kernel.

    For the stretch, dockerd, containerd and the shims are moved into a cpuacct cgroup of
    their own (`ENGINE_GROUP`), so that everything they and their children (runc, whose
    time `EngineCpu` mostly misses) run is counted, up to the moment a container's init
    joins the container's own cgroup; then they are put back where they were. Only where
    cpuacct is a cgroup v1 hierarchy of its own: there it limits nothing, so the move
    changes no scheduling, only the accounting (`available()` says). Other users of the
    engine count too.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self._home: dict[str, str] = {}  # pid -> its cpuacct cgroup before the move
        self._group = CPUACCT / ENGINE_GROUP

    @staticmethod
    def available() -> bool:
        """True if cpuacct is mounted alone at /sys/fs/cgroup/cpuacct (and we are root)."""
        if os.geteuid() != 0:
            return False
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if fields[1] == str(CPUACCT) and fields[2] == "cgroup":
                return [o for o in fields[3].split(",") if o in ("cpu", "cpuacct")] == ["cpuacct"]
        return False

    def _engine_pids(self) -> list[str]:
        return [
            pid for pid in os.listdir("/proc")
            if pid.isdigit() and (seen := _cpu_of(pid)) is not None
            and seen[0].startswith(ENGINE_COMMANDS)
        ]

    @staticmethod
    def _cpuacct_of(pid: str) -> str | None:
        try:
            for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
                _, controllers, path = line.split(":", 2)
                if "cpuacct" in controllers.split(","):
                    return path
        except OSError:
            pass
        return None

    def _usage(self) -> float:
        return int((self._group / "cpuacct.usage").read_text()) / 1e9

    def __enter__(self) -> EngineCgroupCpu:
        self._group.mkdir(exist_ok=True)
        for pid in self._engine_pids():
            home = self._cpuacct_of(pid)
            if home is None or home.startswith("/docker"):
                continue
            self._home[pid] = home
            try:
                (self._group / "cgroup.procs").write_text(pid)
            except OSError:
                self._home.pop(pid)  # it ended meanwhile
        self._start = self._usage()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = self._usage() - self._start
        default = next(iter(self._home.values()), "/")  # where containerd was: its new shims go back there
        for pid in (self._group / "cgroup.procs").read_text().split():
            home = CPUACCT / self._home.get(pid, default).lstrip("/")
            try:
                (home / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        try:
            self._group.rmdir()
        except OSError:
            pass  # a process on its way out: the next run reuses the group


def play_games(sandbox, bot: BotSpec, games: int, warm: bool, cgroup: bool = False) -> dict[str, float]:
    """`games` 4-seat games one after another (see the module's docstring); their figures."""
    limits = Limits()
    starts: list[float] = []

    def start(seat: int):
        began = time.perf_counter()
        process = sandbox.start(bot, limits, slot=f"seat{seat}" if warm else None)
        process.send_line(MESSAGE)  # the hello
        process.receive_line(30)
        return process, time.perf_counter() - began

    def play_one() -> float:
        started = list(pool.map(start, range(SEATS)))
        for decision in range(DECISIONS):
            process = started[decision % SEATS][0]
            process.send_line(MESSAGE)
            process.receive_line(5)
        for process, _ in started:
            process.close()
        return max(seconds for _, seconds in started)

    with ThreadPoolExecutor(SEATS) as pool:
        # One game first, not counted: warm, it makes the slots' containers (once per run).
        first_start = play_one()
        time.sleep(1)
        cpu_before = time.process_time()
        counted = EngineCgroupCpu() if cgroup else contextlib.nullcontext()
        with EngineCpu() as engine, counted:
            began = time.perf_counter()
            for _ in range(games):
                starts.append(play_one())
            elapsed = time.perf_counter() - began
        cpu_after = time.process_time()
    sandbox.close()
    return {
        "first_game_start_ms": first_start * 1e3,
        "games_per_s": games / elapsed,
        "start_median_ms": statistics.median(starts) * 1e3,
        "start_max_ms": max(starts) * 1e3,
        "engine_cpu_s_per_game": engine.seconds / games,
        "arena_cpu_s_per_game": (cpu_after - cpu_before) / games,
    } | ({"engine_cgroup_cpu_s_per_game": counted.seconds / games} if cgroup else {})


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


def time_round_trips(
    sandbox_name: str, bot: BotSpec, count: int, slot: str | None = None, **settings: str
) -> list[float]:
    """Seconds per send_line + receive_line of one message, `count` times in one bot."""
    if sandbox_name == "local":
        settings["warn"] = False
    sandbox = get_sandbox(sandbox_name, **settings)
    process = sandbox.start(bot, Limits(), slot=slot)
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
        sandbox.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the measurements and print them (a table, or one JSON object with --json)."""
    parser = harness.parser(__doc__, quick="3 starts, 200 round trips, 2 games a design")
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--round-trips", type=int, default=5000)
    parser.add_argument("--games", type=int, default=20, help="4-seat games per design")
    parser.add_argument("--only", choices=["games"], help="only the 4-seat games")
    parser.add_argument(
        "--engine-cgroup",
        action="store_true",
        help="also count the engine's CPU with a cpuacct cgroup (EngineCgroupCpu: exact, "
        "runc included; moves the engine's processes between accounting groups meanwhile)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.starts, args.round_trips, args.games = 3, 200, 2
    run = harness.Run()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o755)
        (Path(folder) / "bot.py").write_text(ECHO)
        (Path(folder) / "bot.py").chmod(0o644)
        bot = BotSpec(name="echo", folder=Path(folder), command=("python3", "bot.py"))
        if args.only != "games":
            # Round trips first: the engine keeps working for a while after removing containers.
            docker_rtt = time_round_trips("docker", bot, args.round_trips, stdio="fifo")
            warm_rtt = time_round_trips("docker", bot, args.round_trips, slot="rtt")
            attach_rtt = time_round_trips("docker", bot, args.round_trips, stdio="attach")
            local_rtt = time_round_trips("local", bot, args.round_trips)
            starts, closes = time_starts(bot, args.starts)
            figures.update(static_figures(starts, closes, docker_rtt, attach_rtt, local_rtt))
            figures["docker_warm_rtt_median_us"] = round(statistics.median(warm_rtt) * 1e6, 1)
            figures["docker_warm_rtt_p99_us"] = round(percentile(warm_rtt, 0.99) * 1e6, 1)
        if args.games:
            for design, warm in (("cold", False), ("warm", True)):
                time.sleep(2)  # let the engine settle after the last removals
                cgroup = args.engine_cgroup and EngineCgroupCpu.available()
                sandbox = get_sandbox("docker")
                played = play_games(sandbox, bot, args.games, warm, cgroup)
                figures.update({f"{design}_{name}": value for name, value in played.items()})
            figures["warm_over_cold_games_per_s"] = figures["warm_games_per_s"] / figures["cold_games_per_s"]
    figures = {name: round(value, 3) for name, value in figures.items()}

    def show(figures: dict) -> None:
        for name, value in figures.items():
            print(f"{name:42} {value:10.3f}")

    run.finish(args, figures, show)
    sys.stdout.flush()


def static_figures(starts, closes, docker_rtt, attach_rtt, local_rtt) -> dict[str, float]:
    """The start, close and round-trip figures in milliseconds and microseconds."""
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
    return {name: round(value, 1) for name, value in figures.items()}


if __name__ == "__main__":
    main()
