"""League benchmark: how soon a newcomer settles, with the matchmaker and with random tables.

    python bench/league.py [--trials 100] [--warmups 10] [--jobs N] [--span 10] [--real]
        [--json] [--quick]

A graded field of 30 players of known order at four seats, as dense as bench/tournament.py's:
by default synthetic players whose true skills are evenly spaced over `--span` (10 rating
points, 20 to 30: the span the ratings of bench/tournament.py's 30 graded 3UP 3DOWN players
cover after 60 games each), each game a draw of the TrueSkill model (every seat performs its
skill plus N(0, beta^2) noise; places by performance). `--real` plays real 3UP 3DOWN games
of those graded players instead (the rule-of-thumb player that plays a random legal action
with probability p; about 4 ms a game in process, and slower to settle).

A league of them is warmed up (`--warmups` leagues of 30 batches, each batch one table per
four bots, matched by arena's matchmaker from the ratings of the batches up to two before,
as `arena league` does). Then a newcomer joins, its true strength drawn uniformly over the
field's, so its true place among the 31 is known. The league goes on, batch after batch,
and every second batch (once the newcomer's sigma is below 1.2) its 90% rank interval is
computed from every game so far: arena's own ledger and posterior (`arena.rating`), the
interval as `arena.confidence.rank_intervals` computes it (2,000 draws of the field, the
5th to 95th percentile of the place; with numpy here, for speed: `place_interval`) and
arena's definition of settled (at most 5 places among 31). A trial counts
the newcomer's games until it is settled, and whether the settled interval holds its true
place. Every trial is run twice, from the same warmed league with the same newcomer: with
arena's matchmaker (`arena.matchmaker.make_tables`) and with random table filling (the same,
every seat drawn at random), side by side.

Targets: the matchmaker settles newcomers in at most 0.7x the games random filling needs
(median over trials), and the settled interval holds the newcomer's true place in at least
90% of the trials that settled. A trial not settled after `MAX_GAMES` newcomer games counts
as that many. Figures in docs/performance.md, League.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tournament import GradedPlayer, graded_players, play_scheduled  # noqa: E402 - bench/tournament.py

from arena.confidence import LEVEL, SAMPLES, settled_span  # noqa: E402
from arena.matchmaker import RANDOM_SHARE, Candidate, make_tables  # noqa: E402
from arena.rating import RatedGame, RatingLedger  # noqa: E402
from arena.schedule import ScheduledGame, deal_seed  # noqa: E402

FIELD = 30
SEATS = 4
WARMUP_BATCHES = 30  # about 30 games per bot before the newcomer comes
MAX_GAMES = 150  # a newcomer not settled after this many games is a miss
TRIALS = 100
WARMUPS = 10
RATIO_TARGET = 0.7
COVERAGE_TARGET = 0.9
NEWCOMER = "new"
MODES = ("matchmaker", "random")
BETA = 25.0 / 6  # arena's rating beta: a synthetic game's performance noise
# The span of the ratings of bench/tournament.py's 30 graded players after 60 games each
# (p = 0 about 30, p = 1 about 20): the synthetic field is as dense as the real one.
SPAN = 10.0
# The settled check (the rating pass and the rank intervals, ~0.1 s) is skipped while the
# newcomer's sigma is above this: no newcomer of the pilot runs settled above 0.9.
SIGMA_GATE = 1.2
CHECK_EVERY = 2  # batches between checks: the games to settle are known to within a game or two


def synthetic_skills(count: int, span: float) -> dict[str, float]:
    """True skills of a synthetic graded field: evenly spaced over `span` (by default the span
    the real graded field's ratings cover) centred on 25, strongest first."""
    return {f"s{index:02d}": 25 + span / 2 - span * index / (count - 1) for index in range(count)}


def synthetic_game(scheduled: ScheduledGame, skills: dict[str, float], seed: int) -> RatedGame:
    """A game of the TrueSkill model: each seat performs its skill plus N(0, beta^2) noise."""
    rng = random.Random(f"bench-league-game/{seed}/{scheduled.key}")
    performance = [skills[bot] + rng.gauss(0.0, BETA) for bot in scheduled.table]
    order = sorted(range(len(performance)), key=lambda seat: -performance[seat])
    places = [0] * len(performance)
    for place, seat in enumerate(order, start=1):
        places[seat] = place
    return RatedGame(scheduled.key, scheduled.table, tuple(places))


class League:
    """The league's batches as `arena league` plays them, in process."""

    def __init__(self, players: dict, seed: int, fill: str):
        self.players = players  # name -> GradedPlayer (real games) or true skill (synthetic)
        self.seed = seed
        self.fill = fill
        self.batches: list[list[RatedGame]] = []  # every batch's games, in schedule order
        self.lag = RatingLedger(record=False)  # the matchmaker's view: batches up to b-2
        self.lag_through = 0
        self.games: Counter[str] = Counter()
        self.seat_use: Counter[tuple[str, int]] = Counter()

    def copy(self, fill: str) -> League:
        twin = League(dict(self.players), self.seed, fill)
        twin.batches = list(self.batches)
        twin.games, twin.seat_use = Counter(self.games), Counter(self.seat_use)
        for batch in twin.batches[: self.lag_through]:
            for game in batch:
                twin.lag.add(game)
        twin.lag_through = self.lag_through
        return twin

    def play_batch(self) -> list[RatedGame]:
        """Match and play the next batch; returns its games."""
        number = len(self.batches) + 1
        while self.lag_through < number - 2:
            for game in self.batches[self.lag_through]:
                self.lag.add(game)
            self.lag_through += 1
        bots = sorted(self.players)
        candidates = []
        for bot in bots:
            rating = self.lag.ratings.rating(bot)
            seats = tuple(self.seat_use[(bot, seat)] for seat in range(SEATS))
            candidates.append(Candidate(bot, float(rating.mu), float(rating.sigma), self.games[bot], seats))
        rng = random.Random(f"bench-league/{self.seed}/{self.fill}/{number}")
        tables = make_tables(candidates, SEATS, math.ceil(len(bots) / SEATS), rng, random_share=RANDOM_SHARE, fill=self.fill)
        played = []
        for table_no, table in enumerate(tables, start=1):
            deal = f"{number:05d}-{table_no:05d}"
            scheduled = ScheduledGame(number, table_no, 0, table, deal_seed(self.seed, deal))
            if isinstance(self.players[table[0]], float):
                played.append(synthetic_game(scheduled, self.players, self.seed))
            else:
                played.append(play_scheduled(scheduled, self.players))
            for seat, bot in enumerate(table):
                self.games[bot] += 1
                self.seat_use[(bot, seat)] += 1
        self.batches.append(played)
        return played


def warm_league(seed: int, span: float, real: bool = False) -> League:
    """The graded field after WARMUP_BATCHES batches of the matchmaker."""
    players = {player.name: player for player in graded_players(FIELD)} if real else synthetic_skills(FIELD, span)
    league = League(players, seed, "matchmaker")
    for _ in range(WARMUP_BATCHES):
        league.play_batch()
    return league


def place_interval(skills: dict[str, tuple[float, float]], bot: str, seed: int) -> tuple[int, int]:
    """`bot`'s 90% rank interval as arena.confidence.rank_intervals computes it (SAMPLES
    draws of every bot's skill, the 5th to 95th percentile of the bot's place), with numpy:
    the pure-Python original costs about 0.1 s for 31 bots, which thousands of checks make
    the whole run's time."""
    import numpy

    names = sorted(skills)
    at = names.index(bot)
    means = numpy.array([skills[name][0] for name in names])
    spreads = numpy.array([skills[name][1] for name in names])
    draws = numpy.random.default_rng(seed).normal(means, spreads, size=(SAMPLES, len(names)))
    ahead = (draws > draws[:, [at]]).sum(axis=1)  # place - 1 in each draw
    counts = numpy.bincount(ahead, minlength=len(names))
    beyond = math.floor((1 - LEVEL) / 2 * SAMPLES) + 1
    low = int(numpy.argmax(numpy.cumsum(counts) >= beyond)) + 1
    high = len(names) - int(numpy.argmax(numpy.cumsum(counts[::-1]) >= beyond))
    return low, high


def newcomer_trial(league: League, u: float, fill: str, span: float) -> dict:
    """A newcomer at strength u (0 strongest, 1 weakest, uniform) joins `league`; its games
    until settled, and the interval then."""
    trial = league.copy(fill)
    if isinstance(next(iter(trial.players.values())), float):
        skill = 25 + span / 2 - span * u
        true_place = 1 + sum(1 for other in trial.players.values() if other > skill)
        trial.players[NEWCOMER] = skill
    else:
        true_place = 1 + sum(1 for player in trial.players.values() if player.p < u)
        trial.players[NEWCOMER] = GradedPlayer(NEWCOMER, u)
    full = RatingLedger(record=True)
    for batch in trial.batches:
        for game in batch:
            full.add(game)
    span = settled_span(len(trial.players))
    batches = 0
    while trial.games[NEWCOMER] < MAX_GAMES:
        for game in trial.play_batch():
            full.add(game)
        batches += 1
        if not trial.games[NEWCOMER] or full.ratings.rating(NEWCOMER).sigma > SIGMA_GATE or batches % CHECK_EVERY:
            continue
        low, high = place_interval(full.ratings.posterior(), NEWCOMER, batches)
        if high - low + 1 <= span:
            return {
                "games": trial.games[NEWCOMER], "batches": batches, "settled": True,
                "covered": low <= true_place <= high, "true_place": true_place,
                "interval": [low, high], "sigma": full.ratings.rating(NEWCOMER).sigma,
            }
    return {"games": trial.games[NEWCOMER], "batches": batches, "settled": False, "covered": False,
            "true_place": true_place, "interval": None, "sigma": None}


def run_warmup(task: tuple[int, int, float, bool]) -> list[dict]:
    """One warmed league and `trials` newcomers, each with both fillings."""
    seed, trials, span, real = task
    league = warm_league(seed, span, real)
    rng = random.Random(f"bench-league-newcomers/{seed}")
    out = []
    for index in range(trials):
        p = rng.random()
        out.append({"seed": seed, "trial": index, "p": p, **{mode: newcomer_trial(league, p, mode, span) for mode in MODES}})
    return out


def run(trials: int, warmups: int, jobs: int, span: float = SPAN, real: bool = False) -> dict:
    """Every trial, and the table's figures."""
    per = [trials // warmups + (1 if index < trials % warmups else 0) for index in range(warmups)]
    tasks = [(seed, count, span, real) for seed, count in enumerate(per, start=1) if count]
    began = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            done = [row for rows in pool.map(run_warmup, tasks) for row in rows]
    else:
        done = [row for task in tasks for row in run_warmup(task)]
    figures = {mode: summary([row[mode] for row in done]) for mode in MODES}
    ratio = figures["matchmaker"]["median_games"] / figures["random"]["median_games"]
    return {
        "trials": len(done), "warmups": len(tasks), "field": FIELD, "span": span, "real": real, "seats": SEATS, "max_games": MAX_GAMES,
        "figures": figures, "ratio": ratio, "seconds": time.perf_counter() - began, "rows": done,
        "targets": {
            "ratio": {"target": RATIO_TARGET, "value": ratio, "met": ratio <= RATIO_TARGET},
            "coverage": {
                "target": COVERAGE_TARGET, "value": figures["matchmaker"]["coverage"],
                "met": figures["matchmaker"]["coverage"] >= COVERAGE_TARGET,
            },
        },
    }


def summary(rows: Sequence[dict]) -> dict:
    games = [row["games"] for row in rows]
    return {
        "median_games": statistics.median(games),
        "mean_games": statistics.fmean(games),
        "p90_games": sorted(games)[min(len(games) - 1, math.ceil(0.9 * len(games)) - 1)],
        "settled": sum(row["settled"] for row in rows) / len(rows),
        # Of the trials that settled: how often the settled interval held the true place.
        "coverage": sum(row["covered"] for row in rows) / max(1, sum(row["settled"] for row in rows)),
        "median_batches": statistics.median(row["batches"] for row in rows),
    }


def print_report(report: dict) -> None:
    kind = "graded 3UP 3DOWN players" if report["real"] else f"synthetic players (skills over {report['span']:g})"
    print(
        f"League: a newcomer joins {report['field']} {kind} at {report['seats']} seats after "
        f"{WARMUP_BATCHES} batches; {report['trials']} trials over {report['warmups']} warmed leagues; "
        f"settled = 90% rank interval of at most {settled_span(report['field'] + 1)} places; "
        f"{report['seconds']:.0f} s"
    )
    print(f"{'filling':<12}{'median games':>14}{'mean':>8}{'90th pct':>10}{'settled':>9}{'interval holds true place':>27}")
    for mode in MODES:
        f = report["figures"][mode]
        print(
            f"{mode:<12}{f['median_games']:>14g}{f['mean_games']:>8.1f}{f['p90_games']:>10}{f['settled']:>9.0%}"
            f"{f['coverage']:>27.0%}"
        )
    ratio, coverage = report["targets"]["ratio"], report["targets"]["coverage"]
    print(
        f"matchmaker / random, median games to settle: {ratio['value']:.2f} (target <= {RATIO_TARGET}: "
        f"{'met' if ratio['met'] else 'NOT met'}); the settled interval holds the true place in "
        f"{coverage['value']:.0%} of trials (target >= {COVERAGE_TARGET:.0%}: {'met' if coverage['met'] else 'NOT met'})"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=TRIALS, help="newcomers (each played with both fillings)")
    parser.add_argument("--warmups", type=int, default=WARMUPS, help="warmed leagues the trials share out")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    parser.add_argument("--quick", action="store_true", help="10 trials over 2 leagues (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--span", type=float, default=SPAN, help="the synthetic field's skill span (default: the real one's)")
    parser.add_argument("--real", action="store_true", help="play real 3UP 3DOWN games of graded players (slow)")
    args = parser.parse_args(argv)
    if args.quick:
        args.trials, args.warmups = 10, 2
    if args.trials < 1 or not 1 <= args.warmups <= args.trials:
        parser.error("--trials must be at least 1 and --warmups between 1 and --trials")
    report = run(args.trials, args.warmups, args.jobs, args.span, args.real)
    if args.json:
        print(json.dumps({key: value for key, value in report.items() if key != "rows"}, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
