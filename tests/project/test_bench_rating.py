"""Smoke tests of the rating benches (bench/rating_accuracy.py, bench/runner_overhead.py, and
the graded players they share, bench/players.py): `--quick --json` runs and says what the
tournament targets ask for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import players as graded
from bench import rating_accuracy

ROOT = Path(__file__).resolve().parents[2]


def quick(name: str) -> dict:
    run = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--quick", "--json"], cwd=ROOT, check=False, capture_output=True,
        text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_kendall_tau_counts_agreeing_pairs():
    bench = graded
    order = ["a", "b", "c", "d"]
    assert bench.kendall_tau(order, order) == 1.0
    assert bench.kendall_tau(order, order[::-1]) == -1.0
    # One adjacent swap: 5 of the 6 pairs agree, 1 disagrees.
    assert bench.kendall_tau(order, ["a", "c", "b", "d"]) == (5 - 1) / 6


def test_graded_players_spread_p_over_zero_to_one_strongest_first():
    bench = graded
    players = bench.graded_players(16)
    assert [player.p for player in players] == [index / 15 for index in range(16)]
    assert len({player.name for player in players}) == 16
    close = bench.graded_players(16, p_max=0.03)  # the close field of the duplicate study
    assert [player.p for player in close] == [0.03 * index / 15 for index in range(16)]


def test_quick_json_has_the_runner_s_overhead_in_process_and_with_subprocess_bots():
    report = quick("runner_overhead")
    assert 0 < report["overhead_ms_per_game"] < 1000
    inproc, sub = report["overhead"], report["subprocess"]
    assert inproc["bots"] == 64 and inproc["games"] == 64
    assert sub["bots"] == 8 and sub["games"] == 2
    for figures in (inproc, sub):
        parts = figures["schedule_ms_per_game"] + figures["rating_ms_per_game"] + figures["storage_ms_per_game"]
        assert abs(parts - figures["overhead_ms_per_game"]) < 1e-9
        assert 0 < parts <= figures["total_overhead_ms_per_game"] + 1e-9
        assert 0 < figures["engine_ms_per_game"] < figures["play_ms_per_game"]
        assert 0 < figures["overhead_share"] <= figures["total_overhead_share"] < 1
    targets = report["targets"]
    assert len(targets) == 2  # no progress run in --quick
    assert all(isinstance(check["pass"], bool) and check["target"] for check in targets)
    assert report["machine"]["cpus"] >= 1


def test_quick_json_has_tau_by_format_duplicate_and_games_per_bot():
    report = quick("rating_accuracy")
    assert set(report["tau"]) == {"round_robin", "swiss"}
    for fmt in ("round_robin", "swiss"):
        assert set(report["tau"][fmt]) == {"plain", "duplicate"}
        for mode in ("plain", "duplicate"):
            assert set(report["tau"][fmt][mode]) == {"12", "24"}
            for size in ("12", "24"):
                assert -1 <= report["tau"][fmt][mode][size] <= 1
                assert 0 <= report["top3_overlap"][fmt][mode][size] <= 1
                assert report["top3_exact"][fmt][mode][size] in (0.0, 0.5, 1.0)  # 2 seeds
    # Graded bots are far from random: the ratings find much of the true order.
    assert report["tau"]["round_robin"]["plain"]["24"] > 0.3
    targets = report["targets"]
    assert len(targets) == 6  # the accuracy targets
    assert all(isinstance(check["pass"], bool) and check["target"] for check in targets)


def test_plackett_luce_order_follows_consistent_places_and_weighs_opponents():
    bench = rating_accuracy
    result = bench.RatedGame
    games = [result(f"{n:05d}-00001-0", ("c", "a", "b"), (3, 1, 2)) for n in range(1, 6)]
    assert bench.plackett_luce_order(games, ["a", "b", "c"]) == ["a", "b", "c"]
    # d beat a once; e beat c once: beating the stronger bot is worth more.
    games += [result("00006-00001-0", ("d", "a"), (1, 2)), result("00006-00002-0", ("e", "c"), (1, 2))]
    order = bench.plackett_luce_order(games, ["a", "b", "c", "d", "e"])
    assert order.index("d") < order.index("e")
