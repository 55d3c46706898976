"""python -m bench.engine runs and reports the figures docs/performance.md quotes (tiny run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_benchmark_prints_the_agreed_json_keys():
    done = subprocess.run(
        [sys.executable, "-m", "bench.engine", "--games", "3", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    for key in ("games_per_s_2p", "games_per_s_4p", "games_per_s_6p", "decisions_per_s_4p", "peak_rss_mb"):
        assert isinstance(report[key], (int, float)) and report[key] > 0, key
    assert report["game"] == "3up3down" and report["games"] == 3
