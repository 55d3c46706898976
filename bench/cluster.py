"""Cluster benchmark: games per second on a Dask LocalCluster of 1, 2 and 4 worker processes.

    python -m bench.cluster [--workers 1 2 4] [--cycles N] [--max-turns N] [--no-local] [--quick] [--json]

The same round-robin (3UP 3DOWN, three seats, four local-sandbox bots: the example bots
random and threeup-heuristic plus two renamed copies of random; `--cycles` complete cycles
of the four tables) is played through the real runner (`arena.play.tournament.run_tournament`)
on a LocalCluster with N worker processes of one thread each on loopback, and, for
comparison, in the local pool with `--jobs N`. For each it reports:

- `wall_gps`: games over the whole run (connecting, shipping the bots, every game);
- `steady_gps`: games per second between the first and the last stored game (the rate a
  long tournament approaches);
- `game_s_mean`: a game's own duration where it was played (starting its bots included);
- for the cluster, `cluster_start_s`: starting the LocalCluster (not part of a run: a real
  cluster is started once).

Every bot game starts three bot processes; on a 2-core machine these compete for the same
cores whatever the number of workers, so expect the rate to stop growing at 2 workers.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.play.tournament import Progress, run_tournament, validate_config
from bench import harness

ROOT = Path(__file__).resolve().parents[1]


def make_bots(base: Path) -> list[Path]:
    """Four bot folders: random, threeup-heuristic and two renamed copies of random."""
    folders = []
    for name, source in (("random", "random"), ("heuristic", "threeup-heuristic"), ("ann", "random"), ("bob", "random")):
        folder = base / name
        shutil.copytree(ROOT / "bots" / source, folder, ignore=shutil.ignore_patterns("__pycache__"))
        toml = (folder / "bot.toml").read_text().replace(f'name = "{source}"', f'name = "{name}"')
        (folder / "bot.toml").write_text(toml)
        folders.append(folder)
    return folders


def play(bots: Sequence[Path], out: Path, cycles: int, max_turns: int, **where: Any) -> dict[str, float]:
    """One run; its games, wall time and steady rate (first to last stored game)."""
    stored_at: list[float] = []

    def progress(update: Progress) -> None:
        stored_at.append(time.monotonic())

    config = validate_config(
        {
            "game": "3up3down", "seats": 3, "bots": [str(b) for b in bots], "seed": 2026, "cycles": cycles,
            "rules": {"max_turns": max_turns}, "output": str(out), **where,
        }
    )
    began = time.monotonic()
    outcome = run_tournament(config, progress=progress, report=False)
    wall = time.monotonic() - began
    assert outcome.complete and outcome.played == outcome.total, "the benchmark run did not finish"
    steady = (len(stored_at) - 1) / (stored_at[-1] - stored_at[0]) if len(stored_at) > 1 else 0.0
    return {"games": outcome.total, "wall_s": round(wall, 2), "wall_gps": round(outcome.total / wall, 2),
            "steady_gps": round(steady, 2), "game_s_mean": round(outcome.game_s / max(outcome.played, 1), 3)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="1 worker, 1 cycle of 40-turn games")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="worker processes (default 1 2 4)")
    parser.add_argument("--cycles", type=int, default=10, help="round-robin cycles of the 4 tables (default 10: 40 games)")
    parser.add_argument("--max-turns", type=int, default=400, help="the game's turn cap (default 400, the game's default)")
    parser.add_argument("--no-local", action="store_true", help="skip the local-pool comparison")
    args = parser.parse_args(argv)
    if args.quick:
        args.workers, args.cycles, args.max_turns = [1], 1, 40
    run = harness.Run()

    from distributed import LocalCluster

    rows = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-cluster-") as tmp:
        bots = make_bots(Path(tmp) / "bots")
        for n in args.workers:
            if not args.no_local:
                local = play(bots, Path(tmp) / f"local-{n}", args.cycles, args.max_turns, jobs=n)
                rows.append({"where": "local pool", "n": n, **local})
            began = time.monotonic()
            # Dashboard off; the scheduler's plain HTTP server on a free loopback port, not 8787.
            with LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            ) as cluster:
                start_s = time.monotonic() - began
                remote = play(bots, Path(tmp) / f"cluster-{n}", args.cycles, args.max_turns,
                              cluster=cluster.scheduler_address)
            rows.append({"where": "cluster", "n": n, **remote, "cluster_start_s": round(start_s, 2)})
    def show(report: dict) -> None:
        print(f"{'where':<11} {'N':>2} {'games':>5} {'wall s':>7} {'wall g/s':>9} {'steady g/s':>10} {'game s':>7}  start s")
        for row in report["runs"]:
            print(
                f"{row['where']:<11} {row['n']:>2} {row['games']:>5} {row['wall_s']:>7.2f} {row['wall_gps']:>9.2f} "
                f"{row['steady_gps']:>10.2f} {row['game_s_mean']:>7.3f}  {row.get('cluster_start_s', '')}"
            )

    run.finish(args, {"runs": rows}, show)

if __name__ == "__main__":
    main()
