"""How sure are arena's answers? Simulated error rates of `arena match --sprt`.

    python bench/confidence.py [--runs 2000] [--quick] [--json] [--seed 1]
    python bench/confidence.py --measure 4000     # re-measure the pair structure below

The SPRT table: for ELO0/ELO1 = 0/10 (alpha = beta = 0.05), `--runs` simulated SPRT runs
whose true Elo difference is ELO0 and as many whose truth is ELO1. Each run draws pair
outcomes one pair at a time and applies the test after every pair, exactly as the
command does, until it accepts H0 or H1 (no cap but a safety one of 200,000 games, far
beyond any run). It prints how often it accepted H1 when the truth was ELO0 (target: at
most alpha + 1.5 percentage points) and H0 when the truth was ELO1 (at most beta + 1.5),
the mean and median games to a decision, and the share of runs that would still be
undecided at the command's default cap of 20,000 games (`arena.sprt.DEFAULT_GAMES`).
Figures in docs/performance.md.

The pair structure. A pentanomial distribution has four free parameters beyond its mean;
the error rates hardly depend on them, but the games needed do (through the variance of
the pair score), so they come from a real game rather than from a guess: two copies of
the example random bot's policy (a uniformly random legal action, bots/random) played
3UP 3DOWN pairs with the default rules, each deal from both seats (`measure_pairs`,
`--measure N`; MEASURED below is 4,000 pairs). Random against random is the one pair of
real bots whose true difference is known, 0, and whose games are not mirror images
(threeup-heuristic against itself plays every deal the same way from both seats; against
random it wins about 85%, too far from the 0 to 10 Elo asked about). Its counts are made
exactly symmetric (averaged with their mirror image, mean exactly 1/2), and a true
difference e is then the exponential tilt p_i ~ base_i * exp(lambda * a_i) whose mean is
s(e) = 1 / (1 + 10^(-e/400)): the distribution closest to the measured one (least
Kullback-Leibler divergence) with that mean, the same luck of the deal and draw rate,
shifted towards the stronger bot. 3UP 3DOWN with the default cap of 1000 turns has
almost no draws, and more 1-1 pairs than independent games would give (the deal often
decides): pair variance about 0.113 of the normalized score against 0.125.

The test after each pair is computed for all runs at once with numpy (the same formulas
as arena/sprt.py: maximum-likelihood theta by safeguarded Newton); every run's stopping
pair is then checked with `arena.sprt.sprt_status` itself (the decision there, none a
pair earlier), and the first few runs of each row pair by pair along their whole path.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.seeds import RunKey  # noqa: E402
from arena.sprt import (  # noqa: E402
    DEFAULT_GAMES,
    EMPTY_BUCKET,
    NORMALIZED,
    SprtSettings,
    elo_to_score,
    game_points,
    pair_bucket,
    sprt_status,
)

# Pentanomial counts [LL, LD, WL+DD, WD, WW] of random against random, 3UP 3DOWN, default
# rules: `python bench/confidence.py --measure 4000 --seed 1` (see the module docstring).
MEASURED = (889, 11, 2220, 8, 872)
SPRT_BOUNDS = (0.0, 10.0)
SPRT_MARGIN = 0.015  # the targets: alpha (beta) + 1.5 percentage points
SAFETY_CAP_PAIRS = 100_000
CHECKED_PATHS = 3  # runs per row re-checked pair by pair with arena.sprt


# ------------------------------------------------------------------ the pair structure


def measure_pairs(pairs: int, seed: int) -> tuple[int, int, int, int, int]:
    """Pentanomial counts of `pairs` 3UP 3DOWN pairs of two random players (default rules).

    Deal k is the deal seed of game pair k of a match with public seed `seed`; each player
    keeps one random source for the whole match, as a bot process does."""
    from engine import get_game
    from engine.players import random_action

    game = get_game("3up3down")
    key = RunKey.from_seed(seed)
    first, second = random.Random(f"{seed}/first"), random.Random(f"{seed}/second")
    counts = [0] * 5
    for k in range(1, pairs + 1):
        deal = key.deal_seed(f"match-{k:05d}")
        points = 0.0
        for seats in ((first, second), (second, first)):
            state = game.new_game(2, seed=deal)
            while not state.is_over:
                state.apply(random_action(state, seats[state.current_player]))
            points += game_points(state.places(), seats.index(first))
        counts[pair_bucket(points)] += 1
    return (counts[0], counts[1], counts[2], counts[3], counts[4])


def symmetric(counts: tuple[int, ...]) -> list[float]:
    """The counts averaged with their mirror image, as probabilities (mean exactly 1/2)."""
    mirrored = [(a + b) / 2 for a, b in zip(counts, reversed(counts))]
    total = sum(mirrored)
    return [value / total for value in mirrored]


def tilted(base: list[float], elo: float) -> list[float]:
    """The exponential tilt of `base` whose mean normalized pair score is s(elo)."""
    target = elo_to_score(elo)

    def shifted(slope: float) -> list[float]:
        weights = [p * np.exp(slope * a) for p, a in zip(base, NORMALIZED)]
        total = sum(weights)
        return [w / total for w in weights]

    low, high = -50.0, 50.0
    for _ in range(200):
        middle = (low + high) / 2
        mean = sum(p * a for p, a in zip(shifted(middle), NORMALIZED))
        low, high = (middle, high) if mean < target else (low, middle)
    return [float(p) for p in shifted((low + high) / 2)]


# ------------------------------------------------------------------ the SPRT, simulated


def _thetas(q: np.ndarray, s: float, start: np.ndarray) -> np.ndarray:
    """Per row of q, the root theta of sum_i q_i d_i / (1 + theta d_i) = 0, d_i = a_i - s."""
    d = np.array(NORMALIZED) - s
    low, high = np.full(len(q), -1 / d[-1]), np.full(len(q), -1 / d[0])
    theta = start.copy()
    for _ in range(200):
        t = d / (1 + theta[:, None] * d)
        value, slope = (q * t).sum(axis=1), (q * t * t).sum(axis=1)
        low = np.where(value > 0, theta, low)
        high = np.where(value < 0, theta, high)
        step = theta + value / slope
        step = np.where((step > low) & (step < high), step, (low + high) / 2)
        done = np.abs(step - theta) <= 1e-15 * np.maximum(1.0, np.abs(theta))
        theta = step
        if done.all():
            break
    return theta


def simulate_sprt(probabilities: list[float], settings: SprtSettings, runs: int, seed: int) -> dict:
    """`runs` SPRT runs on pairs drawn from `probabilities`; their decisions and lengths in pairs."""
    rng = np.random.default_rng(seed)
    lower, upper = settings.bounds
    s0, s1 = elo_to_score(settings.elo0), elo_to_score(settings.elo1)
    a = np.array(NORMALIZED)
    counts = np.zeros((runs, 5))
    theta0, theta1 = np.zeros(runs), np.zeros(runs)
    decisions = np.full(runs, "", dtype=object)
    lengths = np.zeros(runs, dtype=int)
    last = np.zeros(runs, dtype=int)  # each run's last pair's bucket, for the check
    paths: list[list[int]] = [[] for _ in range(min(CHECKED_PATHS, runs))]
    active = np.arange(runs)
    for pair in range(1, SAFETY_CAP_PAIRS + 1):
        buckets = rng.choice(5, size=len(active), p=probabilities)
        counts[active, buckets] += 1
        for position, run in enumerate(active[: len(paths)]):
            if run < len(paths):  # one of the runs checked pair by pair (active is in run order)
                paths[run].append(int(buckets[position]))
        regularized = np.where(counts[active] > 0, counts[active], EMPTY_BUCKET)
        total = regularized.sum(axis=1)
        q = regularized / total[:, None]
        theta0[active] = _thetas(q, s0, theta0[active])
        theta1[active] = _thetas(q, s1, theta1[active])
        llr = total * (q * (np.log1p(theta0[active, None] * (a - s0)) - np.log1p(theta1[active, None] * (a - s1)))).sum(axis=1)
        accepted = np.where(llr >= upper, "H1", np.where(llr <= lower, "H0", ""))
        stopped = accepted != ""
        decisions[active[stopped]] = accepted[stopped]
        lengths[active[stopped]] = pair
        last[active[stopped]] = buckets[stopped]
        active = active[~stopped]
        if not len(active):
            break
    lengths[active] = SAFETY_CAP_PAIRS
    _check_with_arena(counts, decisions, last, paths, settings)
    return {"decisions": list(decisions), "pairs": lengths.tolist()}


def _check_with_arena(counts: np.ndarray, decisions, last: np.ndarray, paths: list[list[int]], settings) -> None:
    """Every stopping pair agrees with arena.sprt, and the first runs' whole paths do."""
    for final, decision, bucket in zip(counts.astype(int).tolist(), decisions, last.tolist()):
        before = list(final)
        before[bucket] -= 1
        if sprt_status(final, settings).decision != (decision or None) or (
            decision and sprt_status(before, settings).decision is not None
        ):
            raise RuntimeError(f"the simulation and arena.sprt disagree at the counts {final} ({decision!r})")
    for number, path in enumerate(paths):
        running = [0] * 5
        for index, bucket in enumerate(path):
            running[bucket] += 1
            expected = decisions[number] if index == len(path) - 1 else ""
            if (sprt_status(running, settings).decision or "") != expected:
                raise RuntimeError(f"run {number}: arena.sprt decides otherwise at pair {index + 1} ({running})")


def sprt_table(runs: int, seed: int, base: tuple[int, ...] = MEASURED) -> dict:
    """The SPRT's error rates and games to a decision at ELO0/ELO1 = 0/10, truth ELO0 and ELO1."""
    settings = SprtSettings(*SPRT_BOUNDS)
    structure = symmetric(base)
    rows = []
    for truth, wrong, allowed in ((settings.elo0, "H1", settings.alpha), (settings.elo1, "H0", settings.beta)):
        probabilities = tilted(structure, truth)
        started = time.process_time()
        simulated = simulate_sprt(probabilities, settings, runs, seed + int(truth * 1000))
        games = [2 * pairs for pairs in simulated["pairs"]]
        wrong_share = simulated["decisions"].count(wrong) / runs
        rows.append({
            "true_elo": truth,
            "runs": runs,
            "wrong_decision": wrong,
            "wrong_rate": wrong_share,
            "target": allowed + SPRT_MARGIN,
            "met": wrong_share <= allowed + SPRT_MARGIN,
            "undecided": simulated["decisions"].count("") / runs,
            "mean_games": statistics.fmean(games),
            "median_games": statistics.median(games),
            "p90_games": sorted(games)[int(0.9 * (len(games) - 1))],
            "beyond_command_cap": sum(g > DEFAULT_GAMES for g in games) / runs,
            "pentanomial_probabilities": probabilities,
            "cpu_s": time.process_time() - started,
        })
    return {
        "elo0": settings.elo0, "elo1": settings.elo1, "alpha": settings.alpha, "beta": settings.beta,
        "measured_pairs": list(base), "rows": rows,
    }


def print_sprt_table(table: dict) -> None:
    """The SPRT table as text."""
    print(f"SPRT [{table['elo0']:g}, {table['elo1']:g}], alpha {table['alpha']:g}, beta {table['beta']:g}: "
          f"simulated pairs from the measured random-vs-random structure {table['measured_pairs']}")
    print(f"{'true Elo':>8}  {'runs':>5}  {'wrong decision':>20}  {'target':>7}  {'met':>3}  "
          f"{'mean games':>10}  {'median':>7}  {'p90':>7}  {'> ' + format(DEFAULT_GAMES, ','):>8}")
    for row in table["rows"]:
        wrong = f"{row['wrong_decision']} {row['wrong_rate']:.2%}"
        print(f"{row['true_elo']:>8g}  {row['runs']:>5}  {wrong:>20}  {row['target']:>7.1%}  "
              f"{'yes' if row['met'] else 'NO':>3}  {row['mean_games']:>10,.0f}  {row['median_games']:>7,.0f}  "
              f"{row['p90_games']:>7,}  {row['beyond_command_cap']:>8.1%}")
    print("  wrong decision: H1 accepted when the truth is ELO0, H0 when it is ELO1; games: to a decision;")
    print(f"  > {DEFAULT_GAMES:,}: runs still undecided at arena match --sprt's default cap, --games {DEFAULT_GAMES}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated SPRT runs per true Elo (default 2000)")
    parser.add_argument("--quick", action="store_true", help="200 runs per true Elo: a smoke run, not figures")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulation (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--measure", type=int, metavar="PAIRS",
                        help="measure the pair structure from PAIRS random-vs-random pairs and print it, nothing else")
    args = parser.parse_args()
    if args.measure is not None:
        started = time.process_time()
        counts = measure_pairs(args.measure, args.seed)
        print(json.dumps({"pairs": args.measure, "seed": args.seed, "pentanomial": counts,
                          "cpu_s": round(time.process_time() - started, 1)}))
        return
    runs = 200 if args.quick else args.runs
    if runs < 10:
        parser.error("--runs must be at least 10")
    tables = {"sprt": sprt_table(runs, args.seed)}
    if args.json:
        print(json.dumps(tables))
        return
    print_sprt_table(tables["sprt"])


if __name__ == "__main__":
    main()
