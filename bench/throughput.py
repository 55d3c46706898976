"""Tournament throughput, warm and cold, local and Docker, side by side in one run.

    python -m bench.throughput [--rounds 4 | --complete] [--jobs 2] [--repeats 1] [--no-docker] [--json]
    python -m bench.throughput --quick        # a smoke test: one round, a few games

The field is 8 bots, copies of the example bots in bots/ (4 of `random`, 4 of
`threeup-heuristic`, both Python), at 4 seats, a round-robin of design rounds with
duplicate deals (every bot plays once a round, each table in all 4 rotations: 8 games a
round, and each bot slot, a bot in one seat rotation, once a round), default 3UP 3DOWN
rules, `--jobs 2`, the seed 1: the same games in every column. `--complete` plays the
whole round-robin instead, as `arena run` does by default for such a field: all 70
tables of 4, each in its 4 rotations, 280 games, each bot slot used 35 times. Each column is one
`run_tournament` into a fresh folder, timed from the call to its return (worker start-up,
image checks and the first, cold, start of every slot included); games/s is games stored
over those seconds. With `--repeats R` the columns run in turn R times and each figure is
the median.

Columns (tournament settings `warm_start` and `bot_process`; a column whose setting this
arena does not have prints n/a, and without them every game starts cold, as before):

    local_cold     local sandbox, warm_start = false: a new process per bot per game
    local_warm     local, warm_start = true, bot_process = "per-game": a fresh process per
                   game, started ahead of need
    local_slot     local, bot_process = "per-slot": one process per bot slot for the run
    local_slot_threads   the same, played in threads of one process (a sandbox object
                   passed to run_tournament) instead of worker processes: what the
                   workers are worth
    docker_cold    docker sandbox, warm_start = false: a new container per bot per game
    docker_warm    docker, warm_start = true, bot_process = "per-game": a container per
                   slot for the run, a fresh process in it per game
    runsc_cold     docker_cold under runtime = "runsc" (gVisor's kernel; the two docker
    runsc_warm     columns above are runtime = "runc"): warm_start asked, but under runsc
                   every game gets a fresh container (README, "Where a bot runs"). n/a
                   where the engine has no runsc (.ci/docker-up registers it)

runsc_cost_over_runc (warm and cold): runc's games/s over runsc's, the time a game costs
under runsc for one under runc; the docker sandbox's default runtime is runsc only where
the warm figure is at most 1.5 (docs/performance.md, "Runtimes").

Beside them: the Docker engine's CPU per game (dockerd, containerd and the
containerd-shims, read from /proc every 20 ms while the column runs by
bench/docker_lifecycle.py's `EngineCpu`; runc when caught running; other users of the
same engine count too), the
CPU one local bot start costs (`random` started, `hello` answered and closed, from this
process's children's CPU time), and the in-process referee (bench/referee.py's figure),
beside the referee of commit b8a7c88 measured in turn with it (`--baseline`).
Figures and targets in docs/performance.md, "Throughput".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from arena.game.protocol import MatchOver
from arena.play.executor import remote_bot
from arena.play.tournament import TournamentConfig, run_tournament, validate_config
from arena.sandbox import BotSpec, Limits, get_sandbox
from bench import harness

FIELD = [("random", 4), ("threeup-heuristic", 4)]
ROUND = 8  # games of one design round: 2 tables of 4, each in 4 rotations
COLUMNS: dict[str, dict] = {
    "local_cold": {"sandbox": "local", "warm_start": False, "bot_process": "per-game"},
    "local_warm": {"sandbox": "local", "warm_start": True, "bot_process": "per-game"},
    "local_slot": {"sandbox": "local", "warm_start": True, "bot_process": "per-slot"},
    "local_slot_threads": {"sandbox": "local", "warm_start": True, "bot_process": "per-slot"},
    "docker_cold": {"sandbox": "docker", "runtime": "runc", "warm_start": False, "bot_process": "per-game"},
    "docker_warm": {"sandbox": "docker", "runtime": "runc", "warm_start": True, "bot_process": "per-game"},
    "runsc_cold": {"sandbox": "docker", "runtime": "runsc", "warm_start": False, "bot_process": "per-game"},
    "runsc_warm": {"sandbox": "docker", "runtime": "runsc", "warm_start": True, "bot_process": "per-game"},
}
# Settings whose absence means "every game starts cold" (the design before warm starts).
COLD = {"warm_start": False, "bot_process": "per-game"}
# The referee before its hot path was made cheaper (bench/referee.py --baseline).
BASELINE = "b8a7c88"


def make_field(folder: Path) -> list[Path]:
    """8 bot folders: copies of the example bots, each with its own name."""
    folders = []
    for example, copies in FIELD:
        for number in range(1, copies + 1):
            target = folder / f"{example}-{number}"
            shutil.copytree(ROOT / "bots" / example, target, ignore=shutil.ignore_patterns("__pycache__"))
            toml = target / "bot.toml"
            toml.write_text(toml.read_text().replace(f'name = "{example}"', f'name = "{example}-{number}"', 1))
            for path in [target, *target.rglob("*")]:  # the bots run as nobody when arena runs as root
                path.chmod(0o755 if path.is_dir() else 0o644)
            folders.append(target)
    folder.chmod(0o755)
    return folders


def column_settings(name: str) -> tuple[dict | None, str]:
    """The settings of a column this arena can run (None: n/a) and a note."""
    wanted = COLUMNS[name]
    known = TournamentConfig.model_fields
    settings = {"sandbox": wanted["sandbox"]}
    if "runtime" in wanted:
        if "runtime" not in known:
            return None, "this arena has no setting runtime"
        settings["runtime"] = wanted["runtime"]
    missing = []
    for key in ("warm_start", "bot_process"):
        if key in known:
            settings[key] = wanted[key]
        elif wanted[key] != COLD[key]:
            missing.append(key)
    if missing:
        return None, f"this arena has no setting {' or '.join(missing)}"
    return settings, ""


def engine_cpu():
    """bench/docker_lifecycle.py's `EngineCpu` (the engine's processes read from /proc every
    20 ms; runc counted when caught running, a shim's reaped children, which are the
    container's processes, not counted)."""
    return bench_module("docker_lifecycle").EngineCpu()


def cpu_now() -> float:
    """CPU seconds of this process and of its children it has waited for (workers, local bots)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_column(
    name: str, settings: dict, field: list[Path], args: argparse.Namespace, out: Path, idle: float | None = None
) -> dict:
    """One tournament of the column's settings: games, seconds, games/s, CPU (and the engine's)."""
    config = validate_config(
        {
            "name": f"throughput {name}",
            "game": "3up3down",
            "seats": 4,
            "format": "round-robin",
            **({"rounds": args.rounds} if args.rounds else {}),  # 0: the whole round-robin
            "duplicate": True,
            "seed": 1,
            "jobs": args.jobs,
            "bots": [str(folder) for folder in field],
            "output": str(out),
            **settings,
        }
    )
    # Threads of this process instead of worker processes: the runner plays in threads when
    # it is given a sandbox object.
    sandbox = get_sandbox(settings["sandbox"]) if name.endswith("_threads") else None
    docker = settings["sandbox"] == "docker"
    cpu = cpu_now()
    first_round: list[float] = []  # seconds when 8 games are stored
    later_engine = engine_cpu() if docker else None  # the engine from then on

    def progress(update) -> None:
        if update.played == ROUND and not first_round:
            first_round.append(time.perf_counter() - began)
            if later_engine is not None:
                later_engine.__enter__()

    with engine_cpu() if docker else contextlib.nullcontext() as engine:
        began = time.perf_counter()
        try:
            outcome = run_tournament(config, sandbox=sandbox, report=False, progress=progress)
        finally:
            if sandbox is not None:
                sandbox.close()
            if later_engine is not None and first_round:
                later_engine.__exit__(None, None, None)
        wall = time.perf_counter() - began
    figures = {
        "games": outcome.played,
        "seconds": round(wall, 2),
        "games_per_s": round(outcome.played / wall, 3),
        "cpu_s_per_game": round((cpu_now() - cpu) / outcome.played, 3),
        "startup_share": round(outcome.startup_s / outcome.game_s, 3) if outcome.game_s else None,
        # From the 9th stored game on: every slot has played once (made its container, started
        # its first process); what a long run pays per game.
        "games_per_s_after_round_1": None,
    }
    later = outcome.played - ROUND
    if first_round and later > 0:
        figures["games_per_s_after_round_1"] = round(later / (wall - first_round[0]), 3)
    if docker:
        figures["engine_cpu_s_per_game"] = round(engine.seconds / outcome.played, 3)
        if idle is not None:  # less what the engine spent for others meanwhile, at its idle rate
            figures["engine_cpu_s_per_game_net"] = round(max(0.0, engine.seconds - idle * wall) / outcome.played, 3)
        figures["engine_cpu_s_per_game_after_round_1"] = (
            round(later_engine.seconds / later, 3) if first_round and later > 0 else None
        )
    return figures


def bot_start_cpu(starts: int) -> float:
    """Median CPU seconds one local start of `random` costs: start, `hello` answered, closed."""
    sandbox = get_sandbox("local")
    spec = BotSpec(name="random", folder=ROOT / "bots" / "random", command=("python3", "bot.py"))
    costs = []
    for number in range(starts):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        seat = remote_bot(spec, sandbox, Limits(), game="3up3down", players=4, rules={}, games=1, seed=number)
        seat.ensure_started()
        seat.finish(MatchOver(games=1))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        costs.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    sandbox.close()
    return statistics.median(costs)


def bench_module(name: str):
    """bench/NAME.py as a module (bench/ is not a package, and its engine.py would shadow
    the engine package on the path)."""
    import importlib.util

    if f"bench_{name}" in sys.modules:
        return sys.modules[f"bench_{name}"]
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def referee_figures(quick: bool) -> dict:
    """The in-process referee now and, in the same run, as it was (bench/referee.py
    --baseline): games/s of each, in turn, and their ratio; this tree alone if the older
    commit cannot be read (no git history)."""
    bench = bench_module("referee")
    games, repeats = (8, 1) if quick else (30, 3)
    try:
        side = bench.side_by_side(
            argparse.Namespace(baseline=BASELINE, games=games, repeats=repeats, game="3up3down", players=4)
        )
    except Exception as error:  # noqa: BLE001 - the baseline is extra; the figure of now is not
        now = bench.measure("3up3down", 4, games, repeats)
        return {"referee_inprocess_games_per_s": now["referee_inprocess_games_per_s"], "baseline": f"n/a ({error})"}
    return side


def docker_problem() -> str | None:
    """Why the Docker columns cannot run here, or None."""
    try:
        from arena.sandbox.docker import engine_problem
    except ImportError as error:  # the docker package is not installed
        return str(error)
    return engine_problem()


def runsc_problem() -> str | None:
    """Why the runsc columns cannot run (the engine has no runsc), or None."""
    import docker

    runtimes = (docker.from_env(timeout=30).info().get("Runtimes") or {}).keys()
    return None if "runsc" in runtimes else "the engine has no runsc runtime (.ci/docker-up)"


def median(values: list) -> float | None:
    """The median of the values that are not None (None if none is)."""
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def _rounded(value):
    """A median as the figures are kept: games a whole number, the rest to 4 places."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 1 else round(value, 4)
    return value


def ratio(top: float | None, bottom: float | None) -> float | None:
    return round(top / bottom, 2) if top and bottom else None


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="1 round, few referee games")
    parser.add_argument("--rounds", type=int, default=4, help="design rounds (8 games each)")
    parser.add_argument(
        "--complete", action="store_true",
        help="the whole round-robin instead of design rounds: every table of 4 of the 8 bots "
        "(70), each in its 4 rotations: 280 games a column, as `arena run` plays by default",
    )
    parser.add_argument("--jobs", type=int, default=2, help="games at once")
    parser.add_argument("--repeats", type=int, default=1, help="runs of every column, in turn; medians")
    parser.add_argument("--only", nargs="+", choices=sorted(COLUMNS), help="run only these columns")
    parser.add_argument("--no-docker", action="store_true", help="skip the Docker columns")
    args = parser.parse_args(argv)
    run = harness.Run()
    if args.quick:
        args.rounds, args.repeats = 1, 1
    elif args.complete:
        args.rounds = 0
    names = args.only or list(COLUMNS)
    notes: dict[str, str] = {}
    problem = None if args.no_docker else docker_problem()
    runs: dict[str, list[dict]] = {name: [] for name in names}
    idle = None
    if not args.no_docker and problem is None and any(COLUMNS[name]["sandbox"] == "docker" for name in names):
        # What the engine spends with none of our containers: other users of the same engine.
        with engine_cpu() as engine:
            time.sleep(1.0 if args.quick else 5.0)
        idle = round(engine.seconds / (1.0 if args.quick else 5.0), 3)
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as folder:
        base = Path(folder)
        base.chmod(0o755)
        field = make_field(base / "bots")
        for repeat in range(args.repeats):
            for name in names:
                settings, note = column_settings(name)
                if settings is not None and settings["sandbox"] == "docker" and (args.no_docker or problem):
                    settings, note = None, "--no-docker" if args.no_docker else problem
                if settings is not None and settings.get("runtime") == "runsc" and runsc_problem():
                    settings, note = None, runsc_problem()
                if settings is None:
                    notes[name] = note
                    continue
                if not args.json:
                    print(f"  {name} (run {repeat + 1} of {args.repeats}) ...", file=sys.stderr, flush=True)
                runs[name].append(run_column(name, settings, field, args, base / f"{name}-{repeat}", idle))
    columns = {
        name: {key: _rounded(median([run[key] for run in done])) for key in done[0]}
        for name, done in runs.items()
        if done
    }
    rate = {name: figures["games_per_s"] for name, figures in columns.items()}
    steady = {name: figures["games_per_s_after_round_1"] for name, figures in columns.items()}
    referee = referee_figures(args.quick)
    start_cpu = bot_start_cpu(3 if args.quick else 10)
    report = {
        "rounds": args.rounds or "complete",
        "games_per_column": next(iter(columns.values()))["games"] if columns else None,
        "jobs": args.jobs,
        "repeats": args.repeats,
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "games_per_s": {name: rate.get(name) for name in COLUMNS},
        "docker_warm_over_cold": ratio(rate.get("docker_warm"), rate.get("docker_cold")),
        "docker_warm_over_local_warm": ratio(rate.get("docker_warm"), rate.get("local_warm")),
        "local_slot_over_cold": ratio(rate.get("local_slot"), rate.get("local_cold")),
        "local_warm_over_cold": ratio(rate.get("local_warm"), rate.get("local_cold")),
        "runsc_cost_over_runc_warm": ratio(rate.get("docker_warm"), rate.get("runsc_warm")),
        "runsc_cost_over_runc_cold": ratio(rate.get("docker_cold"), rate.get("runsc_cold")),
        "workers_over_threads": ratio(rate.get("local_slot"), rate.get("local_slot_threads")),
        "after_round_1": {
            "docker_warm_over_cold": ratio(steady.get("docker_warm"), steady.get("docker_cold")),
            "docker_warm_over_local_warm": ratio(steady.get("docker_warm"), steady.get("local_warm")),
            "local_slot_over_cold": ratio(steady.get("local_slot"), steady.get("local_cold")),
            "local_warm_over_cold": ratio(steady.get("local_warm"), steady.get("local_cold")),
            "runsc_cost_over_runc_warm": ratio(steady.get("docker_warm"), steady.get("runsc_warm")),
            "runsc_cost_over_runc_cold": ratio(steady.get("docker_cold"), steady.get("runsc_cold")),
            "engine_cpu_s_per_docker_game": columns.get("docker_warm", {}).get("engine_cpu_s_per_game_after_round_1"),
        },
        "engine_cpu_s_per_docker_game": columns.get("docker_warm", {}).get("engine_cpu_s_per_game"),
        "engine_cpu_s_per_docker_cold_game": columns.get("docker_cold", {}).get("engine_cpu_s_per_game"),
        "engine_cpu_s_per_docker_game_net": columns.get("docker_warm", {}).get("engine_cpu_s_per_game_net"),
        "engine_cpu_s_per_docker_cold_game_net": columns.get("docker_cold", {}).get("engine_cpu_s_per_game_net"),
        "engine_idle_cpu_s_per_s": idle,
        "bot_start_cpu_s": round(start_cpu, 3),
        "referee_inprocess_games_per_s": referee["referee_inprocess_games_per_s"],
        "referee_baseline_games_per_s": referee.get("baseline_games_per_s"),
        "referee_speedup": referee.get("speedup"),
        "columns": columns,
        "n/a": notes,
    }
    def show(report: dict) -> None:
        shape = f"{args.rounds} design rounds" if args.rounds else "the whole round-robin"
        print(f"{report['games_per_column']} games a column ({shape}: 8 bots, 4 seats, duplicate deals), --jobs {args.jobs}, "
              f"{args.repeats} run(s) each; load average {report['load_average']}")
        print(f"{'column':20} {'games/s':>8} {'s':>7} {'CPU-s/game':>10} {'start share':>11} {'engine CPU-s/game':>17}"
              f" | after round 1: {'games/s':>7} {'engine':>7}")
        for name in COLUMNS:
            if name not in columns:
                print(f"{name:20} {'n/a':>8}   {notes.get(name, 'not run (--only)')}")
                continue
            figures = columns[name]
            engine = figures.get("engine_cpu_s_per_game")
            share = figures["startup_share"]
            later, later_engine = figures["games_per_s_after_round_1"], figures.get("engine_cpu_s_per_game_after_round_1")
            print(
                f"{name:20} {figures['games_per_s']:8.2f} {figures['seconds']:7.1f} {figures['cpu_s_per_game']:10.3f} "
                f"{'' if share is None else f'{share:.0%}':>11} {'' if engine is None else f'{engine:.3f}':>17}"
                f" | {'':15} {'' if later is None else f'{later:7.2f}'} {'' if later_engine is None else f'{later_engine:7.3f}'}"
            )
        targets = [
            ("docker_warm_over_cold", ">= 3"),
            ("docker_warm_over_local_warm", ">= 0.8"),
            ("local_slot_over_cold", ">= 4"),
            ("local_warm_over_cold", "(printed)"),
            ("workers_over_threads", "(printed)"),
            ("runsc_cost_over_runc_warm", "<= 1.5 for runsc as the default"),
            ("runsc_cost_over_runc_cold", "(printed)"),
            ("engine_cpu_s_per_docker_game", "<= 0.35"),
            ("engine_cpu_s_per_docker_cold_game", "(printed)"),
            ("engine_idle_cpu_s_per_s", "(the engine's CPU with no game of ours, per second)"),
            ("engine_cpu_s_per_docker_game_net", "<= 0.35 (less the idle rate over the column's time)"),
            ("engine_cpu_s_per_docker_cold_game_net", "(printed)"),
            ("bot_start_cpu_s", "(printed)"),
            ("referee_inprocess_games_per_s", ">= 34 (2x about 17)"),
            ("referee_baseline_games_per_s", f"(the same at {BASELINE}, in turn)"),
            ("referee_speedup", ">= 2"),
        ]
        for key, target in targets:
            value = report[key]
            later = report["after_round_1"].get(key)
            shown = f"   after round 1: {later}" if key in report["after_round_1"] else ""
            print(f"{key:36} {'n/a' if value is None else value:>8}   target {target}{shown}")

    run.finish(args, report, show)


if __name__ == "__main__":
    main()
