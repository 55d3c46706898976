"""Smoke test of bench/throughput.py: `--quick --json` plays a real column and prints the
figures docs/performance.md quotes; the engine CPU sampler reads real /proc entries."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "throughput.py"
KEYS = {
    "docker_warm_over_cold", "docker_warm_over_local_warm", "local_slot_over_cold", "local_warm_over_cold",
    "engine_cpu_s_per_docker_game", "referee_inprocess_games_per_s",
}


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_throughput", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_json_plays_one_round_and_has_every_figure(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "bench.throughput", "--quick", "--no-docker", "--only", "local_cold", "--json"], cwd=BENCH.parents[1],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(BENCH.parents[1])},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert KEYS <= set(report)
    cold = report["columns"]["local_cold"]
    assert cold["games"] == 8  # one design round of 8 bots at 4 seats, each table in 4 rotations
    assert report["games_per_s"]["local_cold"] == cold["games_per_s"] > 0
    assert report["games_per_s"]["docker_cold"] is None and report["engine_cpu_s_per_docker_game"] is None
    assert report["referee_inprocess_games_per_s"] > 0 and report["bot_start_cpu_s"] > 0
    # The referee as it was, measured in turn with it (None only without git history).
    assert report["referee_speedup"] is None or report["referee_speedup"] > 1


def test_the_field_is_eight_named_copies_of_the_example_bots(tmp_path):
    field = load_bench().make_field(tmp_path)
    names = [line.split('"')[1] for folder in field for line in (folder / "bot.toml").read_text().splitlines()
             if line.startswith("name = ")]
    assert names == [f"random-{n}" for n in range(1, 5)] + [f"threeup-heuristic-{n}" for n in range(1, 5)]


def test_engine_cpu_is_read_with_the_docker_benchmark_s_reader(monkeypatch):
    bench = load_bench()
    reader = bench.engine_cpu()
    lifecycle = sys.modules["bench_docker_lifecycle"]
    assert type(reader) is lifecycle.EngineCpu  # one definition of the engine's CPU
    # This very process stands in for an engine process: its own CPU time must be read.
    name = Path(f"/proc/{os.getpid()}/comm").read_text().strip()
    monkeypatch.setattr(lifecycle, "ENGINE_COMMANDS", (name,))
    with bench.engine_cpu() as engine:
        spent = sum(i * i for i in range(2_000_000))  # some CPU while it watches
    assert spent > 0
    assert 0.01 < engine.seconds < 30
