"""How sure are arena's answers? Simulated error rates of `arena match --sprt`.

    python -m bench.confidence [--runs 2000] [--quick] [--json] [--seed 1]
        [--tournaments 200] [--jobs N] [--only sprt|separation]
    python -m bench.confidence --measure 4000     # re-measure the pair structure below

Two tables: the SPRT table of `arena match --sprt` (below), and the separation table of
the standings' rank intervals (`separation_table`, at the end of this file: how often a
pair of graded bots shown as separated is in the wrong order, how often a band holds the
bot's true place, and the seconds for 64 bots and 10,000 games).

The SPRT table: for ELO0/ELO1 = 0/10 (alpha = beta = 0.05), `--runs` simulated SPRT runs
whose true Elo difference is ELO0 and as many whose truth is ELO1. Each run draws pair
outcomes one pair at a time and applies the test after every pair, exactly as the
command does, until it accepts H0 or H1 (no cap but a safety one of 200,000 games, far
beyond any run). It prints how often it accepted H1 when the truth was ELO0 (target: at
most alpha + 1.5 percentage points) and H0 when the truth was ELO1 (at most beta + 1.5),
the mean and median games to a decision, and the share of runs that would still be
undecided at the command's default cap of 20,000 games (`arena.ratings.sprt.DEFAULT_GAMES`).
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
as arena/ratings/sprt.py: maximum-likelihood theta by safeguarded Newton); every run's stopping
pair is then checked with `arena.ratings.sprt.sprt_status` itself (the decision there, none a
pair earlier), and the first few runs of each row pair by pair along their whole path.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence

try:
    import numpy as np
except ImportError:  # a benchmark's own need, not arena's: say how to get it
    sys.exit("bench/confidence.py needs numpy: pip install '.[bench]' (or pip install numpy)")


from arena.ratings.sprt import (
    DEFAULT_GAMES,
    EMPTY_BUCKET,
    NORMALIZED,
    SprtSettings,
    elo_to_score,
    game_points,
    pair_bucket,
    sprt_status,
)
from arena.store.seeds import RunKey
from bench import harness
from bench import players as graded

# Pentanomial counts [LL, LD, WL+DD, WD, WW] of random against random, 3UP 3DOWN, default
# rules: `python -m bench.confidence --measure 4000 --seed 1` (see the module docstring).
MEASURED = (889, 11, 2220, 8, 872)
SPRT_BOUNDS = (0.0, 10.0)
SPRT_MARGIN = 0.015  # the targets: alpha (beta) + 1.5 percentage points
SAFETY_CAP_PAIRS = 100_000
CHECKED_PATHS = 3  # runs per row re-checked pair by pair with arena.ratings.sprt


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
    """Every stopping pair agrees with arena.ratings.sprt, and the first runs' whole paths do."""
    for final, decision, bucket in zip(counts.astype(int).tolist(), decisions, last.tolist()):
        before = list(final)
        before[bucket] -= 1
        if sprt_status(final, settings).decision != (decision or None) or (
            decision and sprt_status(before, settings).decision is not None
        ):
            raise RuntimeError(f"the simulation and arena.ratings.sprt disagree at the counts {final} ({decision!r})")
    for number, path in enumerate(paths):
        running = [0] * 5
        for index, bucket in enumerate(path):
            running[bucket] += 1
            expected = decisions[number] if index == len(path) - 1 else ""
            if (sprt_status(running, settings).decision or "") != expected:
                raise RuntimeError(f"run {number}: arena.ratings.sprt decides otherwise at pair {index + 1} ({running})")


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


# ------------------------------------------------------------ how sure is the ranking
#
# The separation table: 16 graded 3UP 3DOWN players of bench/players.py (a rule-of-thumb
# player that plays a random legal action with probability p = 0, 1/15, ..., 1; the true
# order is by p) play round-robin and Swiss at four seats, in process. Each tournament is
# read at 12, 24 and 48 games per bot with arena's own confidence (RatingLedger.confidence:
# the skills given all the games, the 90% rank intervals): how often a pair shown as
# separated is in the wrong order (target: at most 10%), and how often a bot's interval
# holds its true place (nominal 90%). The same intervals drawn from the ratings as rated in
# order (no smoothing sweep) are measured beside them: the method arena does not use, and why.

SEPARATION_TOURNAMENTS = 200  # per format
SEPARATION_SIZES = (12, 24, 48)  # games per bot (one per round at four seats, 16 bots)
SEPARATION_FORMATS = ("round_robin", "swiss")
SEPARATION_TARGET = 0.10  # the most wrong-order pairs among those shown as separated
SPEED_BOTS, SPEED_GAMES, SPEED_TARGET_S = 64, 10_000, 2.0


def _judge(intervals: dict, order: list[str], true_order: list[str]) -> dict:
    """What one set of rank intervals gets right and wrong against the true order."""
    from arena.ratings.confidence import rank_groups, separated

    true_place = {bot: place for place, bot in enumerate(true_order, 1)}
    shown = wrong = 0
    for a, b in itertools.combinations(true_order, 2):  # a is truly ahead of b
        if separated(intervals[a], intervals[b]):
            shown += 1
            wrong += intervals[b].high < intervals[a].low
    return {
        "separated": shown,
        "wrong": wrong,
        "covered": sum(intervals[bot].low <= true_place[bot] <= intervals[bot].high for bot in true_order),
        "best_missed": intervals[true_order[0]].low > 1,
        "width": statistics.fmean(intervals[bot].high - intervals[bot].low + 1 for bot in true_order),
        "groups": max(rank_groups(order, intervals)) + 1,
    }


def _read(ledger, true_order: list[str]) -> dict:
    """Arena's intervals now, and the same drawn from the ratings as rated in order."""
    from arena.ratings.confidence import rank_intervals

    standings = ledger.table().standings
    order = [line.bot for line in standings]
    online = rank_intervals({line.bot: (line.mu, line.sigma) for line in standings})
    return {"arena": _judge(ledger.confidence().intervals, order, true_order), "in_order": _judge(online, order, true_order)}


def separation_run(task: tuple[str, int, tuple[int, ...]]) -> dict:
    """One tournament of the graded field, read at each size (games per bot)."""
    from arena.ratings.ledger import RatingLedger
    from arena.schedule.formats import round_robin

    fmt, seed, sizes = task
    players = {player.name: player for player in graded.graded_players(graded.ACCURACY_BOTS)}
    true_order = list(players)  # strongest first
    ledger = RatingLedger(bots=true_order, record=True)
    reads = {}
    if fmt == "round_robin":
        schedule = round_robin(true_order, graded.SEATS, seed=seed, rounds=max(sizes))
        for round_no, games in itertools.groupby(schedule, key=lambda game: game.round):
            for game in games:
                ledger.add(graded.play_scheduled(game, players))
            if round_no in sizes:
                reads[round_no] = _read(ledger, true_order)
    else:
        for round_no, _ in graded.play_swiss(players, ledger, seed, max(sizes), False):
            if round_no in sizes:
                reads[round_no] = _read(ledger, true_order)
    return reads


def separation_speed(bots: int = SPEED_BOTS, games: int = SPEED_GAMES, seed: int = 1) -> dict:
    """Seconds for the confidence of `bots` bots after `games` four-seat games (results drawn
    from fixed skills plus noise): the rating pass that keeps its updates, as `arena
    standings` makes it, then the smoothing sweep and the rank intervals."""
    from arena.ratings.confidence import rank_intervals
    from arena.ratings.ledger import RatedGame, RatingLedger

    rng = random.Random(f"speed/{seed}")
    names = [f"bot{index:02d}" for index in range(bots)]
    skill = {name: rng.gauss(0, 1) for name in names}
    tables = bots // 4
    results = []
    for number in range(games):
        round_no, table = divmod(number, tables)
        seated = tuple(rng.sample(names, 4))
        performance = [skill[name] + rng.gauss(0, 1) for name in seated]
        places = tuple(1 + sum(other > mine for other in performance) for mine in performance)
        results.append(RatedGame(f"{round_no + 1:05d}-{table + 1:05d}-0", seated, places))
    clocks = []

    def clock() -> None:
        clocks.append((time.perf_counter(), time.process_time()))

    clock()
    ledger = RatingLedger(bots=names, record=True)
    for result in results:
        ledger.add(result)
    ledger.table()
    clock()
    skills = ledger.ratings.posterior()
    clock()
    rank_intervals(skills)
    clock()
    (w0, c0), (w1, c1), (w2, c2), (w3, c3) = clocks
    return {
        "bots": bots, "games": games,
        "rating_pass_s": w1 - w0, "sweep_s": w2 - w1, "intervals_s": w3 - w2,
        "confidence_s": w3 - w1, "total_s": w3 - w0,
        "confidence_cpu_s": c3 - c1, "total_cpu_s": c3 - c0,
        "target_s": SPEED_TARGET_S, "met": w3 - w1 <= SPEED_TARGET_S,
        "load_average": os.getloadavg()[0],
    }


def separation_table(
    tournaments: int = SEPARATION_TOURNAMENTS, sizes: tuple[int, ...] = SEPARATION_SIZES, jobs: int = 1,
    speed_games: int = SPEED_GAMES,
) -> dict:
    """The separation table over `tournaments` tournaments per format, and the speed figure."""
    started = time.perf_counter()
    tasks = [(fmt, seed, tuple(sizes)) for fmt in SEPARATION_FORMATS for seed in range(1, tournaments + 1)]
    runs = graded.map_jobs(separation_run, tasks, jobs)
    rows = []
    for fmt in SEPARATION_FORMATS:
        reads = [run for (task_fmt, _, _), run in zip(tasks, runs) if task_fmt == fmt]
        for size in sizes:
            row = {"format": fmt, "games_per_bot": size, "tournaments": len(reads)}
            for method in ("arena", "in_order"):
                judged = [read[size][method] for read in reads]
                shown, wrong = sum(j["separated"] for j in judged), sum(j["wrong"] for j in judged)
                row[method] = {
                    "separated_pairs": shown,
                    "wrong_order": wrong,
                    "wrong_rate": wrong / shown if shown else 0.0,
                    "separated_per_tournament": shown / len(judged),
                    "tournaments_with_a_wrong_pair": sum(j["wrong"] > 0 for j in judged) / len(judged),
                    "coverage": sum(j["covered"] for j in judged) / (len(judged) * graded.ACCURACY_BOTS),
                    "best_missed": sum(j["best_missed"] for j in judged) / len(judged),
                    "mean_width": statistics.fmean(j["width"] for j in judged),
                    "mean_groups": statistics.fmean(j["groups"] for j in judged),
                }
            row["met"] = row["arena"]["wrong_rate"] <= SEPARATION_TARGET
            rows.append(row)
    return {
        "level": 0.9, "target_wrong_rate": SEPARATION_TARGET, "bots": graded.ACCURACY_BOTS, "seats": graded.SEATS,
        "pairs_per_tournament": graded.ACCURACY_BOTS * (graded.ACCURACY_BOTS - 1) // 2,
        "rows": rows, "speed": separation_speed(games=speed_games), "wall_s": time.perf_counter() - started,
    }


def print_separation_table(table: dict) -> None:
    """The separation table as text."""
    print(f"\nHow sure is the ranking: {table['bots']} graded 3UP 3DOWN players at {table['seats']} seats, "
          f"90% rank intervals, {table['rows'][0]['tournaments']} tournaments per format "
          f"({table['pairs_per_tournament']} pairs each)")
    print(f"{'format':>11} {'games':>5}  {'separated':>9}  {'wrong order':>15}  {'target':>6}  {'met':>3}  "
          f"{'coverage':>8}  {'best out':>8}  {'width':>5}  {'groups':>6}  {'in order: coverage':>18}  {'wrong':>7}")
    for row in table["rows"]:
        arena, online = row["arena"], row["in_order"]
        wrong = f"{arena['wrong_order']} ({arena['wrong_rate']:.2%})"
        print(f"{row['format']:>11} {row['games_per_bot']:>5}  {arena['separated_per_tournament']:>9.1f}  {wrong:>15}  "
              f"{table['target_wrong_rate']:>6.0%}  {'yes' if row['met'] else 'NO':>3}  {arena['coverage']:>8.3f}  "
              f"{arena['best_missed']:>8.1%}  {arena['mean_width']:>5.2f}  {arena['mean_groups']:>6.2f}  "
              f"{online['coverage']:>18.3f}  {online['wrong_rate']:>7.2%}")
    print("  separated: pairs per tournament whose intervals do not overlap; wrong order: of those, the pairs whose")
    print("  true order is the other way; coverage: share of bots whose true place is in its interval (nominal 0.9);")
    print("  best out: tournaments where the true best's interval leaves out first place; width: mean places per")
    print("  interval; groups: of bots not separated, in the standings' order; in order: the same intervals drawn")
    print("  from the ratings as rated in schedule order (no smoothing sweep), which arena does not use")
    speed = table["speed"]
    print(f"Speed, {speed['bots']} bots and {speed['games']:,} four-seat games: the rating pass keeping its updates "
          f"{speed['rating_pass_s']:.2f} s, then the confidence {speed['confidence_s']:.2f} s "
          f"(sweep {speed['sweep_s']:.2f} s, intervals {speed['intervals_s']:.2f} s; target {speed['target_s']:g} s: "
          f"{'met' if speed['met'] else 'NOT met'}); {speed['total_s']:.2f} s in all, load average {speed['load_average']:.1f}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="50 runs per true Elo, 2 tournaments of the smallest size, speed at 1,000 games")
    parser.add_argument("--runs", type=int, default=2000, help="simulated SPRT runs per true Elo (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulation (default 1)")
    parser.add_argument("--measure", type=int, metavar="PAIRS",
                        help="measure the pair structure from PAIRS random-vs-random pairs and print it, nothing else")
    parser.add_argument("--tournaments", type=int, default=SEPARATION_TOURNAMENTS,
                        help=f"separation table: tournaments per format (default {SEPARATION_TOURNAMENTS}; 2 with --quick)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="separation table: processes (default: one per CPU)")
    parser.add_argument("--only", choices=("sprt", "separation"), help="compute one table only")
    parser.add_argument("--window", type=int, metavar="UPDATES",
                        help="separation table: the confidence sweep's window (arena.ratings.confidence.WINDOW; "
                        "default its own, 10,000): a smaller one measures the bands past it")
    args = parser.parse_args(argv)
    run = harness.Run()
    if args.window is not None:
        if args.window < 1:
            parser.error("--window must be at least 1")
        from arena.ratings import confidence

        confidence.WINDOW = args.window  # the forked processes see it
    if args.measure is not None:
        started = time.process_time()
        counts = measure_pairs(args.measure, args.seed)
        print(json.dumps({"pairs": args.measure, "seed": args.seed, "pentanomial": counts,
                          "cpu_s": round(time.process_time() - started, 1)}))
        return
    runs = 50 if args.quick else args.runs
    if runs < 10:
        parser.error("--runs must be at least 10")
    tables = {}
    if args.only != "separation":
        tables["sprt"] = sprt_table(runs, args.seed)
    if args.only != "sprt":
        tournaments, sizes = (2, SEPARATION_SIZES[:1]) if args.quick else (args.tournaments, SEPARATION_SIZES)
        tables["separation"] = separation_table(tournaments, sizes, args.jobs, 1_000 if args.quick else SPEED_GAMES)

    def show(tables: dict) -> None:
        if "sprt" in tables:
            print_sprt_table(tables["sprt"])
        if "separation" in tables:
            print_separation_table(tables["separation"])

    run.finish(args, tables, show)


if __name__ == "__main__":
    main()
