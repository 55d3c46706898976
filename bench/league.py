"""League benchmark: how soon a newcomer settles, with the matchmaker and with random tables.

    python -m bench.league [--trials 100] [--warmups 10] [--jobs N] [--span 10 --span 30]
        [--real] [--json] [--quick]

A graded field of 30 players of known order at four seats. By default synthetic players
whose true skills are evenly spaced over a span, in two fields measured in one run: span 10
(20 to 30: the span the ratings of bench/rating_accuracy.py's 30 graded 3UP 3DOWN players cover
after 60 games each, so as dense as that field) and span 30 (three times as wide); each
game a draw of the TrueSkill model (every seat performs its skill plus N(0, beta^2) noise;
places by performance). `--span` (repeatable) picks other fields. `--real` plays real
3UP 3DOWN games of those graded players instead (the rule-of-thumb player that plays a
random legal action with probability p; about 4 ms a game in process, and slower to settle).

A league of them is warmed up (`--warmups` leagues of 30 batches per field, each batch one
table per four bots, matched by arena's matchmaker from the ratings of the batches up to
two before, as `arena league` does). Then a newcomer joins, its true strength drawn
uniformly over the field's, so its true place among the 31 is known. The league goes on,
batch after batch, and after every second batch (the league checks after every batch;
and once the newcomer's in-order sigma is at most SIGMA_GATE, 4: the report shows that
this decided nothing) its rank intervals are
computed from every game so far: arena's own ledger and posterior (`arena.ratings.ledger`), the
intervals as `arena.ratings.confidence.rank_interval_levels` computes them (2,000 draws of the
field; with numpy here, for speed: `place_intervals`) and arena's definition of settled
(`arena.ratings.confidence`: its 95% rank interval spans at most 7 places among 31). A trial
counts the newcomer's games until it is settled, and whether the settled interval (that
95% one) holds its true place, and the 90% band shown then too. Every trial is run twice,
from the same warmed league with the same newcomer: with arena's matchmaker
(`arena.schedule.matchmaker.make_tables`) and with random table filling (the same, every seat drawn
at random), side by side.

Targets, in every field: the matchmaker settles newcomers in at most 0.7x the games random
filling needs (median over trials), and the settled interval holds the newcomer's true
place in at least 90% of the matchmaker's trials that settled. A trial not settled after
`MAX_GAMES` newcomer games counts as that many. Figures in docs/performance.md, League.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from arena.ratings import confidence
from arena.ratings.confidence import LEVEL, SAMPLES, SETTLE_LEVEL, settled_span
from arena.ratings.ledger import RatedGame, RatingLedger
from arena.schedule.formats import ScheduledGame, deal_seed
from arena.schedule.matchmaker import RANDOM_SHARE, Candidate, make_tables
from bench import harness
from bench.players import GradedPlayer, graded_players, play_scheduled

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
# The span of the ratings of bench/rating_accuracy.py's 30 graded players after 60 games each
# (p = 0 about 30, p = 1 about 20): the synthetic field is as dense as the real one.
SPAN = 10.0
SPANS = (10.0, 30.0)  # the fields measured by default, one after the other in one run
# The settled check (the posterior sweep and the rank intervals, ~0.05 s) is skipped while
# the newcomer's in-order sigma is above this. It must not decide when a newcomer settles:
# the report counts the trials that settled at their first check (0 says it did not), and
# the highest sigma at which one settled (3.6 in the wide field). The previous gate, 1.2,
# with a check every second batch, did decide it in the wide field, where nearly every
# newcomer settled at its first check: that made the matchmaker look faster there.
SIGMA_GATE = 4.0
# Batches between checks. The league checks after every batch; every second batch halves
# the bench's time (a check's posterior sweep is most of it). A newcomer may settle a batch
# earlier in the league than here; docs/performance.md, League, has a wide-field run that
# checked every batch.
CHECK_EVERY = 2


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


def place_intervals(skills: dict[str, tuple[float, float]], bot: str, seed: int) -> dict[float, tuple[int, int]]:
    """`bot`'s rank intervals at LEVEL (the band shown) and SETTLE_LEVEL (what "settled"
    looks at) as arena.ratings.confidence.rank_interval_levels computes them (SAMPLES draws of every
    bot's skill; the 90% band runs from the 5th to the 95th percentile of the bot's place),
    with numpy: the pure-Python original costs about 0.1 s for 31 bots, which thousands of
    checks make the whole run's time."""
    import numpy

    names = sorted(skills)
    at = names.index(bot)
    means = numpy.array([skills[name][0] for name in names])
    spreads = numpy.array([skills[name][1] for name in names])
    draws = numpy.random.default_rng(seed).normal(means, spreads, size=(SAMPLES, len(names)))
    ahead = (draws > draws[:, [at]]).sum(axis=1)  # place - 1 in each draw
    counts = numpy.bincount(ahead, minlength=len(names))
    out = {}
    for level in (LEVEL, SETTLE_LEVEL):
        beyond = math.floor((1 - level) / 2 * SAMPLES) + 1
        low = int(numpy.argmax(numpy.cumsum(counts) >= beyond)) + 1
        high = len(names) - int(numpy.argmax(numpy.cumsum(counts[::-1]) >= beyond))
        out[level] = (low, high)
    return out


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
    batches = checks = 0
    while trial.games[NEWCOMER] < MAX_GAMES:
        for game in trial.play_batch():
            full.add(game)
        batches += 1
        if not trial.games[NEWCOMER] or full.ratings.rating(NEWCOMER).sigma > SIGMA_GATE or batches % CHECK_EVERY:
            continue
        checks += 1
        intervals = place_intervals(full.ratings.posterior(), NEWCOMER, batches)
        low, high = intervals[SETTLE_LEVEL]
        if high - low + 1 <= span:
            band = intervals[LEVEL]
            return {
                "games": trial.games[NEWCOMER], "batches": batches, "settled": True,
                "covered": low <= true_place <= high, "band_covered": band[0] <= true_place <= band[1],
                "true_place": true_place, "interval": [low, high], "band": list(band),
                "sigma": full.ratings.rating(NEWCOMER).sigma, "first_check": checks == 1,
            }
    return {"games": trial.games[NEWCOMER], "batches": batches, "settled": False, "covered": False,
            "band_covered": False, "true_place": true_place, "interval": None, "band": None, "sigma": None,
            "first_check": False}


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


def run(trials: int, warmups: int, jobs: int, spans: Sequence[float] = SPANS, real: bool = False) -> dict:
    """Every trial in every field (one pool for all), and each field's figures."""
    per = [trials // warmups + (1 if index < trials % warmups else 0) for index in range(warmups)]
    tasks = [(seed, count, span, real) for span in spans for seed, count in enumerate(per, start=1) if count]
    began = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(run_warmup, tasks))
    else:
        results = [run_warmup(task) for task in tasks]
    fields = []
    for span in spans:
        done = [row for task, rows in zip(tasks, results) if task[2] == span for row in rows]
        fields.append(field_report(done, span, real, warmups=sum(1 for task in tasks if task[2] == span)))
    return {
        "fields": fields, "seconds": time.perf_counter() - began, "field": FIELD, "seats": SEATS, "real": real,
        "max_games": MAX_GAMES, "met": all(f["targets"]["ratio"]["met"] and f["targets"]["coverage"]["met"] for f in fields),
    }


def field_report(done: Sequence[dict], span: float, real: bool, warmups: int) -> dict:
    """One field's figures and targets."""
    figures = {mode: summary([row[mode] for row in done]) for mode in MODES}
    ratio = figures["matchmaker"]["median_games"] / figures["random"]["median_games"]
    coverage = figures["matchmaker"]["coverage"]
    return {
        "trials": len(done), "warmups": warmups, "span": span, "real": real,
        "figures": figures, "ratio": ratio, "rows": done,
        "targets": {
            "ratio": {"target": RATIO_TARGET, "value": ratio, "met": ratio <= RATIO_TARGET},
            "coverage": {"target": COVERAGE_TARGET, "value": coverage, "met": coverage >= COVERAGE_TARGET},
        },
    }


def summary(rows: Sequence[dict]) -> dict:
    games = [row["games"] for row in rows]
    settled = [row for row in rows if row["settled"]]
    return {
        "median_games": statistics.median(games),
        "mean_games": statistics.fmean(games),
        "p90_games": sorted(games)[min(len(games) - 1, math.ceil(0.9 * len(games)) - 1)],
        "settled": len(settled) / len(rows),
        # Of the trials that settled: how often the settled interval (the SETTLE_LEVEL one
        # that was narrow enough) held the true place, and how often the band shown then did.
        "coverage": sum(row["covered"] for row in settled) / max(1, len(settled)),
        "band_coverage": sum(row["band_covered"] for row in settled) / max(1, len(settled)),
        "median_batches": statistics.median(row["batches"] for row in rows),
        # Whether SIGMA_GATE decided anything: settled at the first check made, and the
        # highest in-order sigma at which a newcomer settled.
        "first_check": sum(row["first_check"] for row in settled),
        "max_sigma": max((row["sigma"] for row in settled), default=None),
    }


def print_report(report: dict) -> None:
    kind = "graded 3UP 3DOWN players" if report["real"] else "synthetic players"
    print(
        f"League: a newcomer joins {report['field']} {kind} at {report['seats']} seats after {WARMUP_BATCHES} batches; "
        f"settled = its {SETTLE_LEVEL:.0%} rank interval spans at most {settled_span(report['field'] + 1)} places "
        f"(checked every {CHECK_EVERY} batches once its sigma is at most {SIGMA_GATE}); a newcomer not settled "
        f"after {report['max_games']} games counts as {report['max_games']}; {report['seconds']:.0f} s"
    )
    print(
        f"{'field':<20}{'filling':<12}{'median games':>13}{'mean':>7}{'90th pct':>9}{'settled':>9}"
        f"{f'{SETTLE_LEVEL:.0%} interval holds':>20}{f'{LEVEL:.0%} band holds':>16}{'1st check':>10}{'max sigma':>10}"
    )
    for field in report["fields"]:
        name = f"span {field['span']:g}, {field['trials']} trials"
        for mode in MODES:
            f = field["figures"][mode]
            print(
                f"{name if mode == MODES[0] else '':<20}{mode:<12}{f['median_games']:>13g}{f['mean_games']:>7.1f}"
                f"{f['p90_games']:>9}{f['settled']:>9.0%}{f['coverage']:>20.0%}{f['band_coverage']:>16.0%}"
                f"{f['first_check']:>10}{(f['max_sigma'] or 0):>10.2f}"
            )
    for field in report["fields"]:
        ratio, coverage = field["targets"]["ratio"], field["targets"]["coverage"]
        print(
            f"span {field['span']:g}: matchmaker / random, median games to settle: {ratio['value']:.2f} "
            f"(target <= {RATIO_TARGET}: {'met' if ratio['met'] else 'NOT met'}); the settled interval holds the "
            f"true place in {coverage['value']:.0%} of the matchmaker's trials (target >= {COVERAGE_TARGET:.0%}: "
            f"{'met' if coverage['met'] else 'NOT met'})"
        )
    graded = [f for f in report["fields"] if f["span"] == SPAN]
    if graded:  # the field the targets were set on: as dense as bench/rating_accuracy.py's graded one
        met = graded[0]["targets"]["ratio"]["met"] and graded[0]["targets"]["coverage"]["met"]
        print(f"both targets in the graded field (span {SPAN:g}): {'met' if met else 'NOT met'}")
    print(f"both targets in every field: {'met' if report['met'] else 'NOT met'}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="2 trials over 1 league, one field (span 10)")
    parser.add_argument("--trials", type=int, default=TRIALS, help="newcomers (each played with both fillings)")
    parser.add_argument("--warmups", type=int, default=WARMUPS, help="warmed leagues the trials share out")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    parser.add_argument(
        "--span", type=float, action="append",
        help="a synthetic field's skill span, repeatable (default: 10, as dense as the real one, and 30)",
    )
    parser.add_argument("--real", action="store_true", help="play real 3UP 3DOWN games of graded players (slow)")
    parser.add_argument(
        "--check-every", type=int, default=2, metavar="N",
        help="batches between settled checks (default 2; the league checks after every batch: 1)",
    )
    parser.add_argument(
        "--window", type=int, metavar="UPDATES",
        help="the confidence sweep's window (arena.ratings.confidence.WINDOW; default its own, "
        "10,000, more than any trial's games): a smaller one measures the bands past it",
    )
    args = parser.parse_args(argv)
    measured = harness.Run()
    if args.window is not None:
        if args.window < 1:
            parser.error("--window must be at least 1")
        confidence.WINDOW = args.window  # forked trials see it, as CHECK_EVERY
    if args.check_every < 1:
        parser.error("--check-every must be at least 1")
    global CHECK_EVERY
    CHECK_EVERY = args.check_every  # the trials' processes are forked from here: they see it
    if args.quick:
        args.trials, args.warmups, args.span = 2, 1, args.span or [10.0]
    if args.trials < 1 or not 1 <= args.warmups <= args.trials:
        parser.error("--trials must be at least 1 and --warmups between 1 and --trials")
    report = run(args.trials, args.warmups, args.jobs, tuple(args.span or SPANS), args.real)
    if args.json:  # the fields' rows are for the table only
        report = {**report, "fields": [{key: value for key, value in f.items() if key != "rows"} for f in report["fields"]]}
    measured.finish(args, report, print_report)


if __name__ == "__main__":
    main()
