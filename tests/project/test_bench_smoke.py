"""Every bench runs: `python -m bench.NAME --quick --json` exits 0 and prints one JSON object
of figures with the machine they were measured on (bench/harness.py). A bench that no
longer runs is found here, not when someone needs its figures (bench/report.py had stopped
running when the site's data scripts changed, and nobody knew)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.needs import need_docker

ROOT = Path(__file__).resolve().parents[2]
# Benches with a smoke test of their own that checks their figures too
# (tests/project/test_bench_throughput.py, test_bench_rating.py).
OWN_TEST = {"throughput", "rating_accuracy", "runner_overhead"}
NEEDS_DOCKER = {"kits", "docker_lifecycle"}
BENCHES = sorted(
    path.stem for path in (ROOT / "bench").glob("*.py")
    if path.stem not in {"__init__", "harness", "players"} | OWN_TEST
)
MACHINE = {"cpus", "load_1min_before", "load_1min_after", "python", "commit", "began_utc", "wall_s", "cpu_s"}


def test_every_bench_is_on_the_harness():
    for name in BENCHES + sorted(OWN_TEST):
        text = (ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8")
        assert "harness.parser(" in text and ".finish(" in text, f"bench/{name}.py does not use bench/harness.py"
        assert "sys.path.insert(0, str(Path(__file__)" not in text, f"bench/{name}.py edits sys.path to find arena"


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=pytest.mark.docker) if name in NEEDS_DOCKER else name for name in BENCHES]
)
def test_a_quick_run_prints_its_figures_and_the_machine(name, tmp_path):
    if name in NEEDS_DOCKER:
        need_docker()
    saved = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--quick", "--json", "--save", str(saved)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    printed = json.loads(done.stdout[done.stdout.index("{"):])  # a bench may say a line before its figures
    assert MACHINE <= set(printed["machine"]), printed["machine"]
    assert printed["machine"]["cpu_s"] >= 0 and printed["machine"]["cpus"] >= 1
    figures = {key: value for key, value in printed.items() if key != "machine"}
    assert figures, "no figures"
    assert json.loads(saved.read_text(encoding="utf-8")) == printed


def test_a_bench_s_help_says_how_to_run_it():
    done = subprocess.run([sys.executable, "-m", "bench.engine", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m bench.engine [-h] [--quick] [--json] [--save FILE]")
