"""Rating accuracy: how well ratings find the true order of a graded field.

    python -m bench.rating_accuracy [--quick] [--seeds N] [--jobs N] [--experiments] [--json]
        [--tt-seeds N] [--close-seeds N]

Rating accuracy: 16 graded 3UP 3DOWN players (a rule-of-thumb player that plays a random
legal action with probability p, p = 0, 1/15, ..., 1; lower p is stronger) play round-robin
and Swiss, each plain and duplicate, at four seats. After 12, 24, 48 and 96 games per bot
the standings (best conservative rating first) are compared with the true order: Kendall
tau, and whether the top three are the true top three. Averaged over `--seeds` tournaments.

Each tournament is played once at 96 games per bot and read at 12/24/48 on the way: a
schedule's first R rounds are a tournament of R rounds. For round-robin they are the first
R rounds of the design; for Swiss this is exact, because a Swiss round is paired from the
standings and history so far only (nothing depends on how many rounds will follow), so the
first R rounds of a 96-round Swiss are the very games an R-round Swiss plays.
The players are in-process and call the engine directly (no referee, no protocol): this
measures the schedule and rating pipeline, not the sandbox. A game's outcome depends only
on its deal seed, its seating and its rotation, never on the order games are played in.
A diagnostic measures how much of a seat's place the deal decides (all that duplicate play
can cancel); `--experiments` runs rating and pairing variants that are not arena's code.

The duplicate target is asked again on Three Thirteen, where the cards decide more: 16
graded players of a Three Thirteen rule of thumb (same p spread), round-robin only,
duplicate at 12 and 24 games per bot against plain at 24 and 48, `--tt-seeds` seeds
(default 6; its games are slower), with the same deal-luck diagnostic.

Duplicate play is for fields where the cards are most of the luck: strong, nearly
deterministic bots of nearly equal strength. The close-field study asks the duplicate
question there, on both games: 16 graded players of p = 0 to 0.15 (3UP 3DOWN) or 0.03
(Three Thirteen; a random move costs more there), round-robin, duplicate
at 12, 24 and 48 games per bot against plain at 24, 48 and 96, `--close-seeds` seeds.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import statistics
from collections.abc import Sequence
from typing import Any

from arena.ratings.ledger import RatedGame, RatingLedger, RatingSettings, RatingTable
from arena.schedule.formats import (
    ScheduledGame,
    deal_seed,
    key_order,
    rotate,
    round_robin,
    swiss_round,
)
from bench import harness
from bench.players import (
    ACCURACY_BOTS,
    GAME,
    SEATS,
    THREE_THIRTEEN,
    TOP,
    GradedPlayer,
    graded_players,
    kendall_tau,
    map_jobs,
    play_scheduled,
    play_swiss,
)
from engine.registry import get_game

TT_SEEDS = 6  # its tournaments are slower (about 0.1 s a game): fewer seeds, fewer sizes
TT_SIZES = (12, 24)  # duplicate at 12 and 24 against plain at 24 and 48 (plain is near 1 by then)
# The duplicate question in a close field: 16 nearly deterministic players of nearly equal
# strength (p = 0 to CLOSE_P_MAX[game]), where the cards are most of the luck, on both
# games. Each game's range is about as hard to order: plain round-robin reaches a tau of
# about 0.3 at 96 games per bot (a random move costs more in Three Thirteen).
CLOSE_P_MAX = {GAME: 0.15, THREE_THIRTEEN: 0.03}
CLOSE_SIZES = (12, 24, 48)  # duplicate at these against plain at 24, 48 and 96
CLOSE_SEEDS = 24
# Tournaments per accuracy cell: a mean top-three overlap of 96 has a standard error of
# about 0.015, small enough to tell a real lead of 0.03 from noise (24 was not).
ACCURACY_SEEDS = 96
GAMES_PER_BOT = (12, 24, 48, 96)
FORMATS = ("round_robin", "swiss")
MODES = ("plain", "duplicate")
SWISS_TAU_SLACK = 0.03

# The deal-luck diagnostic: equal players of these p, each deal replayed with fresh randomness.
LUCK_PS = (0.1, 0.5, 1.0)
LUCK_DEALS = 100
LUCK_REPLAYS = 4
TT_LUCK_PS = (0.1, 0.5)
TT_LUCK_DEALS = 40


def order_quality(table: RatingTable, true_order: Sequence[str]) -> dict[str, float]:
    """Tau, top-three overlap (0..1) and whether the top three are exactly the true ones."""
    return order_quality_of([line.bot for line in table.standings], true_order)


def games_per_round(duplicate: bool) -> int:
    """Games each bot plays per round with 16 bots at four seats (four rotations when duplicate)."""
    return SEATS if duplicate else 1


def accuracy_run(fmt: str, duplicate: bool, seed: int, sizes: Sequence[int]) -> dict[int, dict[str, float]]:
    """One tournament of `fmt`, read at each size (games per bot): quality of its standings."""
    players = {player.name: player for player in graded_players(ACCURACY_BOTS)}
    true_order = list(players)  # strongest first
    per_round = games_per_round(duplicate)
    checkpoints = {size // per_round: size for size in sizes}
    last_round = max(checkpoints)
    ledger = RatingLedger(duplicate=duplicate, bots=true_order)
    quality: dict[int, dict[str, float]] = {}
    if fmt == "round_robin":
        schedule = round_robin(true_order, SEATS, seed=seed, rounds=last_round, duplicate=duplicate)
        for round_no, games in itertools.groupby(schedule, key=lambda game: game.round):
            for game in games:
                ledger.add(play_scheduled(game, players))
            if round_no in checkpoints:
                quality[checkpoints[round_no]] = order_quality(ledger.table(), true_order)
        return quality
    for round_no, _ in play_swiss(players, ledger, seed, last_round, duplicate):
        if round_no in checkpoints:
            quality[checkpoints[round_no]] = order_quality(ledger.table(), true_order)
    return quality


def accuracy_seed(task: tuple[int, Sequence[int]]) -> dict[str, dict[str, dict[int, dict[str, float]]]]:
    """Every format and mode for one tournament seed (one unit of work for --jobs)."""
    seed, sizes = task
    return {
        fmt: {mode: accuracy_run(fmt, mode == "duplicate", seed, sizes) for mode in MODES} for fmt in FORMATS
    }


def run_accuracy(seeds: int, sizes: Sequence[int], jobs: int) -> dict[str, Any]:
    """Every seed's runs, then per format, mode and size the mean of each measure."""
    tasks = [(seed, tuple(sizes)) for seed in range(1, seeds + 1)]
    runs = map_jobs(accuracy_seed, tasks, jobs)
    means: dict[str, Any] = {}
    for measure in ("tau", "top3_overlap", "top3_exact"):
        means[measure] = {
            fmt: {
                mode: {str(size): statistics.fmean(run[fmt][mode][size][measure] for run in runs) for size in sizes}
                for mode in MODES
            }
            for fmt in FORMATS
        }
    # The spread of tau between seeds, so a reader can tell a real gap from noise.
    means["tau_stderr"] = {
        fmt: {
            mode: {
                str(size): statistics.stdev(run[fmt][mode][size]["tau"] for run in runs) / math.sqrt(len(runs))
                if len(runs) > 1
                else 0.0
                for size in sizes
            }
            for mode in MODES
        }
        for fmt in FORMATS
    }
    # The same for the top-three overlap averaged over the sizes (what the Swiss target compares).
    means["top3_mean_stderr"] = {
        fmt: {
            mode: statistics.stdev(
                statistics.fmean(run[fmt][mode][size]["top3_overlap"] for size in sizes) for run in runs
            )
            / math.sqrt(len(runs))
            if len(runs) > 1
            else 0.0
            for mode in MODES
        }
        for fmt in FORMATS
    }
    return means


def accuracy_targets(means: dict[str, Any], sizes: Sequence[int]) -> list[dict[str, Any]]:
    """The accuracy targets, each checked against the measured means: PASS or MISS."""
    tau, overlap = means["tau"], means["top3_overlap"]
    checks = []
    for fmt in FORMATS:
        # Duplicate at n games per bot against plain at 2n: at least as good means duplicate
        # reaches that tau with at most half the games.
        pairs = [(n, 2 * n) for n in sizes if 2 * n in sizes]
        worst = min(tau[fmt]["duplicate"][str(n)] - tau[fmt]["plain"][str(m)] for n, m in pairs)
        checks.append(
            {
                "target": f"{fmt}: duplicate at n games/bot >= plain at 2n in tau",
                "detail": ", ".join(
                    f"{n}: {tau[fmt]['duplicate'][str(n)]:.3f} vs {tau[fmt]['plain'][str(m)]:.3f}" for n, m in pairs
                ),
                "margin": round(worst, 4),
                "pass": worst >= 0,
            }
        )
    for mode in MODES:
        worst = min(tau["swiss"][mode][str(n)] - tau["round_robin"][mode][str(n)] for n in sizes)
        checks.append(
            {
                "target": f"{mode}: Swiss tau >= round-robin tau - {SWISS_TAU_SLACK} at every size",
                "detail": ", ".join(
                    f"{n}: {tau['swiss'][mode][str(n)]:.3f} vs {tau['round_robin'][mode][str(n)]:.3f}" for n in sizes
                ),
                "margin": round(worst + SWISS_TAU_SLACK, 4),
                "pass": worst >= -SWISS_TAU_SLACK,
            }
        )
        swiss = statistics.fmean(overlap["swiss"][mode][str(n)] for n in sizes)
        robin = statistics.fmean(overlap["round_robin"][mode][str(n)] for n in sizes)
        # Ahead means ahead by more than the noise: one standard error of the difference.
        spread = math.hypot(means["top3_mean_stderr"]["swiss"][mode], means["top3_mean_stderr"]["round_robin"][mode])
        checks.append(
            {
                "target": f"{mode}: Swiss ahead of round-robin on the top three (mean overlap over sizes, "
                "by more than one standard error of the difference)",
                "detail": f"{swiss:.3f} vs {robin:.3f}, difference {swiss - robin:+.3f} ± {spread:.3f}",
                "margin": round(swiss - robin - spread, 4),
                "pass": swiss - robin > spread,
            }
        )
    return checks


def deal_luck_share(p: float, deals: int, replays: int, game: str = GAME) -> float:
    """Share of the variance of a seat's place that its deal and seat explain, four equal players.

    Four players of the same `p` play each deal `replays` times with fresh randomness. The
    variance within a (deal, seat) is the players' own noise; what the (deal, seat) means
    vary beyond that is the luck of the deal, the only part duplicate play can cancel.
    """
    engine = get_game(game)
    player = GradedPlayer("equal", p, game)
    within, means = [], []
    for deal in range(deals):
        places = []
        for replay in range(replays):
            state = engine.new_game(SEATS, None, deal)
            rngs = [random.Random(f"luck/{deal}/{replay}/{seat}") for seat in range(SEATS)]
            while not state.is_over:
                seat = state.current_player
                state.apply(player.act(state, rngs[seat]))
            places.append(state.places())
        for seat in range(SEATS):
            seen = [game[seat] for game in places]
            within.append(statistics.variance(seen))
            means.append(statistics.fmean(seen))
    noise = statistics.fmean(within)
    luck = max(0.0, statistics.pvariance(means) - noise / replays)
    return luck / (luck + noise)


# ------------------------------------------------- the duplicate question, Three Thirteen


def duplicate_study_seed(task: tuple[str, int, Sequence[int], float]) -> dict[str, dict[int, dict[str, float]]]:
    """One seed: round-robin plain to twice the largest size, duplicate to the largest, one game."""
    game, seed, sizes, p_max = task
    players = {player.name: player for player in graded_players(ACCURACY_BOTS, game, p_max)}
    true_order = list(players)
    out: dict[str, dict[int, dict[str, float]]] = {}
    for mode, reads in (("plain", sorted({*sizes, *(2 * n for n in sizes)})), ("duplicate", sorted(sizes))):
        duplicate = mode == "duplicate"
        per_round = games_per_round(duplicate)
        schedule = round_robin(true_order, SEATS, seed=seed, rounds=max(reads) // per_round, duplicate=duplicate)
        ledger = RatingLedger(duplicate=duplicate, bots=true_order)
        out[mode] = {}
        for round_no, games in itertools.groupby(schedule, key=lambda game: game.round):
            for game_to_play in games:
                ledger.add(play_scheduled(game_to_play, players))
            if round_no * per_round in reads:
                out[mode][round_no * per_round] = order_quality(ledger.table(), true_order)
    return out


def run_duplicate_study(game: str, seeds: int, sizes: Sequence[int], jobs: int, p_max: float = 1.0) -> dict[str, Any]:
    """Mean tau (and its standard error) of round-robin plain and duplicate on `game`, per size.

    The field is 16 graded players of p = 0 to `p_max`: 1 is the wide field of the main
    study, CLOSE_P_MAX a close one (nearly deterministic players of nearly equal strength).
    """
    tasks = [(game, seed, tuple(sizes), p_max) for seed in range(1, seeds + 1)]
    runs = map_jobs(duplicate_study_seed, tasks, jobs)
    figures: dict[str, Any] = {"game": game, "seeds": seeds, "p_max": p_max}
    for mode in ("plain", "duplicate"):
        reads = sorted(runs[0][mode])
        figures[mode] = {
            str(size): {
                "tau": statistics.fmean(run[mode][size]["tau"] for run in runs),
                "tau_stderr": statistics.stdev(run[mode][size]["tau"] for run in runs) / math.sqrt(len(runs))
                if len(runs) > 1
                else 0.0,
                "top3_overlap": statistics.fmean(run[mode][size]["top3_overlap"] for run in runs),
            }
            for size in reads
        }
    return figures


def duplicate_study_target(figures: dict[str, Any], sizes: Sequence[int]) -> dict[str, Any]:
    """The duplicate target on the study's game: duplicate at n games per bot >= plain at 2n."""
    duplicate, plain = figures["duplicate"], figures["plain"]
    worst = min(duplicate[str(n)]["tau"] - plain[str(2 * n)]["tau"] for n in sizes)
    field = "p = 0 to 1" if figures["p_max"] == 1 else f"close field, p = 0 to {figures['p_max']:g}"
    return {
        "target": f"{figures['game']} ({field}), round_robin: duplicate at n games/bot >= plain at 2n in tau",
        "detail": ", ".join(
            f"{n}: {duplicate[str(n)]['tau']:.3f} vs {plain[str(2 * n)]['tau']:.3f}" for n in sizes
        ),
        "margin": round(worst, 4),
        "pass": worst >= 0,
    }


# ---------------------------------------------------------------- experiments
#
# Variants that are not arena's code, run to see whether the rating or the pairing could
# close a missed target (`--experiments`; docs/performance.md gives the figures).


def rank_only_swiss(standings: Sequence[Any], round_no: int, seed: int, duplicate: bool) -> list[ScheduledGame]:
    """A Swiss round paired by rank alone (repeated table-mates allowed), seats turned each round."""
    order = random.Random(f"rank-only/{seed}/{round_no}")
    tiebreak = {line.bot: order.random() for line in standings}
    ranked = [line.bot for line in sorted(standings, key=lambda e: (-e.score, -e.conservative, tiebreak[e.bot]))]
    games = []
    for table_no, start in enumerate(range(0, len(ranked), SEATS), 1):
        table = rotate(tuple(ranked[start : start + SEATS]), round_no % SEATS)
        seed_of_deal = deal_seed(seed, f"{round_no:05d}-{table_no:05d}")
        for rotation in range(SEATS if duplicate else 1):
            games.append(ScheduledGame(round_no, table_no, rotation, rotate(table, rotation), seed_of_deal))
    return games


def experiment_seed(task: tuple[int, Sequence[int]]) -> dict[str, dict[int, dict[str, float]]]:
    """One seed of every variant: duplicate round-robin rated four ways, Swiss paired three ways."""
    seed, sizes = task
    players = {player.name: player for player in graded_players(ACCURACY_BOTS)}
    true_order = list(players)
    beta = RatingSettings().beta
    variants = {  # name: (duplicate schedule, rating settings)
        "round_robin plain (arena)": (False, RatingSettings()),
        "round_robin duplicate, per hand (arena's default)": (True, RatingSettings()),
        "round_robin duplicate, per deal by total of places": (True, RatingSettings(duplicate_update="deal")),
        "round_robin duplicate, per rotation": (True, RatingSettings(duplicate_update="rotation")),
        "round_robin duplicate, per deal, beta / 2": (True, RatingSettings(beta=beta / 2, duplicate_update="deal")),
    }
    played = {}
    for duplicate in (False, True):
        per_round = games_per_round(duplicate)
        schedule = round_robin(true_order, SEATS, seed=seed, rounds=max(sizes) // per_round, duplicate=duplicate)
        played[duplicate] = [play_scheduled(game, players) for game in schedule]
    out: dict[str, dict[int, dict[str, float]]] = {}
    for name, (duplicate, settings) in variants.items():
        ledger = RatingLedger(settings, duplicate=duplicate, bots=true_order)
        per_round = games_per_round(duplicate)
        out[name] = {}
        for round_no, results in itertools.groupby(played[duplicate], key=lambda result: key_order(result.key)[0]):
            for result in results:
                ledger.add(result)
            if round_no * per_round in sizes:
                out[name][round_no * per_round] = order_quality(ledger.table(), true_order)
    for duplicate in (False, True):
        mode = "duplicate" if duplicate else "plain"
        per_round = games_per_round(duplicate)
        for label, repeat_cost in (("repeats avoided first (cost 10^6, the rule before)", 1e6), ("paired by rank alone", None)):
            name = f"swiss {mode}, {label}"
            ledger = RatingLedger(duplicate=duplicate, bots=true_order)
            history: list[ScheduledGame] = []
            out[name] = {}
            for round_no in range(1, max(sizes) // per_round + 1):
                standings = ledger.table().standings
                if repeat_cost is None:
                    games = rank_only_swiss(standings, round_no, seed, duplicate)
                else:
                    games = swiss_round(
                        standings, SEATS, round=round_no, seed=seed, history=history, duplicate=duplicate,
                        repeat_cost=repeat_cost,
                    )
                history += games
                for game in games:
                    ledger.add(play_scheduled(game, players))
                if round_no * per_round in sizes:
                    out[name][round_no * per_round] = order_quality(ledger.table(), true_order)
    # Is the information there? Plain round-robin and arena's plain Swiss, the same games,
    # read by a batch Plackett-Luce fit of all games so far instead of TrueSkill's one pass.
    swiss_played = [
        result
        for _, results in play_swiss(players, RatingLedger(bots=true_order), seed, max(sizes), duplicate=False)
        for result in results
    ]
    for name, results in (("round_robin plain", played[False]), ("swiss plain (arena)", swiss_played)):
        out[f"{name}, read by a batch Plackett-Luce fit"] = {
            size: order_quality_of(plackett_luce_order(results[: size * ACCURACY_BOTS // SEATS], true_order), true_order)
            for size in sizes
        }
    return out


def plackett_luce_order(results: Sequence[RatedGame], bots: Sequence[str], iterations: int = 60) -> list[str]:
    """Bots by a Plackett-Luce fit of the places of all `results` (Hunter's MM algorithm).

    A batch estimate (every game weighed with everything known at the end), to compare with
    TrueSkill's single pass. Each bot also gets one virtual win and one loss against a dummy
    of strength 1, so an unbeaten bot has a finite strength. Ties are broken by seat order.
    """
    strength = {bot: 1.0 for bot in bots}
    rankings = [[bot for _, _, bot in sorted(zip(result.places, range(len(result.bots)), result.bots))] for result in results]
    wins = {bot: 1.0 for bot in bots}
    for ranking in rankings:
        for bot in ranking[:-1]:
            wins[bot] += 1
    for _ in range(iterations):
        denominator = {bot: 2.0 / (strength[bot] + 1.0) for bot in bots}
        for ranking in rankings:
            tails = list(itertools.accumulate(strength[bot] for bot in reversed(ranking)))[::-1]
            share = 0.0
            for stage, bot in enumerate(ranking):
                if stage < len(ranking) - 1:
                    share += 1.0 / tails[stage]
                denominator[bot] += share
        strength = {bot: wins[bot] / denominator[bot] for bot in bots}
    return sorted(bots, key=lambda bot: (-strength[bot], bot))


def order_quality_of(rated: Sequence[str], true_order: Sequence[str]) -> dict[str, float]:
    """`order_quality` for an order of bots instead of a rating table."""
    overlap = len(set(rated[:TOP]) & set(true_order[:TOP])) / TOP
    return {"tau": kendall_tau(true_order, rated), "top3_overlap": overlap, "top3_exact": float(overlap == 1.0)}


# Tables of four graded players for `duplicate_worth`: game, the four p, deals.
WORTH_TABLES = (
    (GAME, (0.0, 0.3, 0.6, 1.0), 300),
    (GAME, (0.0, 0.05, 0.1, 0.15), 300),
    (GAME, (0.0, 0.01, 0.02, 0.03), 300),
    (THREE_THIRTEEN, (0.0, 0.05, 0.1, 0.15), 40),
    (THREE_THIRTEEN, (0.0, 0.01, 0.02, 0.03), 40),
)


def duplicate_worth(task: tuple[str, tuple[float, ...], int]) -> dict[str, Any]:
    """How many plain games one duplicate game is worth at one table of four graded players.

    The measure is the place difference between the strongest and the weakest player. Plain:
    `deals` x 4 games, each a fresh deal and a random seating. Duplicate: `deals` deals, each
    played in its four rotations, the difference averaged over them. Worth = the variance of
    one plain game's difference over four times that of one deal's mean (a deal is four
    games): 2 means a duplicate game tells as much as two plain ones.
    """
    game, ps, deals = task
    players = [GradedPlayer(f"w{index}", p, game) for index, p in enumerate(ps)]
    engine = get_game(game)

    def play(seated: list[int], seed: int, tag: str) -> list[int]:
        state = engine.new_game(SEATS, None, seed)
        rngs = [random.Random(f"worth/{tag}/{seed}/{seat}") for seat in range(SEATS)]
        while not state.is_over:
            seat = state.current_player
            state.apply(players[seated[seat]].act(state, rngs[seat]))
        return state.places()

    seating = random.Random(f"worth/{game}/{ps}")
    plain, duplicate = [], []
    for deal in range(deals):
        for game_no in range(SEATS):
            seated = list(range(SEATS))
            seating.shuffle(seated)
            places = play(seated, 10**6 + SEATS * deal + game_no, "plain")
            place_of = {player: places[seat] for seat, player in enumerate(seated)}
            plain.append(place_of[0] - place_of[SEATS - 1])
        total = [0] * SEATS
        for rotation in range(SEATS):
            seated = [(seat + rotation) % SEATS for seat in range(SEATS)]
            for seat, place in enumerate(play(seated, 2 * 10**6 + deal, f"rotation{rotation}")):
                total[seated[seat]] += place
        duplicate.append((total[0] - total[SEATS - 1]) / SEATS)
    worth = statistics.variance(plain) / (SEATS * statistics.variance(duplicate))
    return {"game": game, "ps": list(ps), "deals": deals, "worth": round(worth, 3)}


def run_experiments(seeds: int, sizes: Sequence[int], jobs: int) -> dict[str, dict[str, dict[str, float]]]:
    """Mean tau and top-three overlap of every variant, per size."""
    tasks = [(seed, tuple(sizes)) for seed in range(1, seeds + 1)]
    runs = map_jobs(experiment_seed, tasks, jobs)
    return {
        name: {
            measure: {str(size): statistics.fmean(run[name][size][measure] for run in runs) for size in sizes}
            for measure in ("tau", "top3_overlap")
        }
        for name in runs[0]
    }


def print_study(study: dict[str, Any]) -> None:
    """A duplicate study's rows: plain and duplicate, tau ± s.e. / top-three overlap per size."""
    for mode in ("plain", "duplicate"):
        cells = "  ".join(
            f"{size}: {cell['tau']:.3f} ±{cell['tau_stderr']:.2f} / {cell['top3_overlap']:.2f}"
            for size, cell in study[mode].items()
        )
        print(f"  {mode:10} {cells}")


def print_report(report: dict[str, Any]) -> None:
    """The accuracy tables and the PASS/MISS lines, for people."""
    if "tau" in report:
        sizes = report["sizes"]
        print()
        print(
            f"Rating accuracy: {ACCURACY_BOTS} graded bots (p = 0, 1/15, ..., 1), four seats, "
            f"mean of {report['seeds']} seeds"
        )
        head = "".join(f"{size:>14}" for size in sizes)
        print(f"  {'Kendall tau (± s.e.)':26}{head}")
        for fmt in FORMATS:
            for mode in MODES:
                cells = "".join(
                    f"{report['tau'][fmt][mode][str(size)]:>8.3f} ±{report['tau_stderr'][fmt][mode][str(size)]:.2f}"
                    for size in sizes
                )
                print(f"  {fmt + ', ' + mode:26}{cells}")
        print(f"  {'top three (overlap / all)':26}{head}")
        for fmt in FORMATS:
            for mode in MODES:
                cells = "".join(
                    f"{report['top3_overlap'][fmt][mode][str(size)]:>8.2f} / {report['top3_exact'][fmt][mode][str(size)]:.2f}"
                    for size in sizes
                )
                print(f"  {fmt + ', ' + mode:26}{cells}")
    if "deal_luck_share" in report:
        shares = ", ".join(f"p={p}: {100 * share:.0f}%" for p, share in report["deal_luck_share"].items())
        print(f"  Share of a seat's place variance due to the deal (four equal players): {shares}")
    if "three_thirteen" in report:
        study = report["three_thirteen"]
        print()
        print(
            f"The duplicate question on Three Thirteen: {ACCURACY_BOTS} graded bots, round-robin, four seats, "
            f"mean of {study['seeds']} seeds (tau ± s.e. / top-three overlap)"
        )
        print_study(study)
        shares = ", ".join(f"p={p}: {100 * share:.0f}%" for p, share in study["deal_luck_share"].items())
        print(f"  Share of a seat's place variance due to the deal (four equal players): {shares}")
    for game, study in report.get("close_field", {}).items():
        print()
        print(
            f"The duplicate question in a close field, {game}: {ACCURACY_BOTS} graded bots of p = 0 to "
            f"{study['p_max']:g}, round-robin, four seats, mean of {study['seeds']} seeds (tau ± s.e. / top-three overlap)"
        )
        print_study(study)
    if "experiments" in report:
        sizes = report.get("sizes") or list(next(iter(report["experiments"].values()))["tau"])
        print()
        print("Experiments (not arena's code): tau / top-three overlap")
        print(f"  {'':66}" + "".join(f"{size:>14}" for size in sizes))
        for name, figures in report["experiments"].items():
            cells = "".join(
                f"{figures['tau'][str(size)]:>8.3f} / {figures['top3_overlap'][str(size)]:.2f}" for size in sizes
            )
            print(f"  {name:66}{cells}")
    if "duplicate_worth" in report:
        print()
        print("What one duplicate game is worth in plain games, one table of four graded players")
        for row in report["duplicate_worth"]:
            ps = ", ".join(f"{p:g}" for p in row["ps"])
            print(f"  {row['game']:15} p = {ps:22} {row['deals']:4} deals  {row['worth']:.2f}")
    print()
    for check in report["targets"]:
        verdict = "PASS" if check["pass"] else "MISS"
        print(f"  {verdict}  {check['target']}  [{check['detail']}]")


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="2 seeds, 12 and 24 games per bot, no studies")
    parser.add_argument(
        "--seeds", type=int, default=None,
        help=f"tournaments per accuracy cell (default {ACCURACY_SEEDS}; 2 with --quick)",
    )
    parser.add_argument(
        "--jobs", type=int, default=None,
        help="processes for the accuracy studies (default: the number of CPUs; the figures do not depend on it)",
    )
    parser.add_argument(
        "--tt-seeds", type=int, default=None,
        help=f"seeds of the Three Thirteen duplicate study (default {TT_SEEDS}; 0 skips it, as does --quick)",
    )
    parser.add_argument(
        "--close-seeds", type=int, default=None,
        help=f"seeds of the close-field duplicate study, per game (default {CLOSE_SEEDS}; 0 skips it, as does --quick)",
    )
    parser.add_argument(
        "--experiments", action="store_true", help="also run the rating and pairing variants (not arena's code) of the docs"
    )
    args = parser.parse_args(argv)
    run = harness.Run()
    seeds = args.seeds if args.seeds is not None else (2 if args.quick else ACCURACY_SEEDS)
    if args.jobs is None:
        args.jobs = 1 if args.quick else max(1, os.cpu_count() or 1)
    sizes = GAMES_PER_BOT[:2] if args.quick else GAMES_PER_BOT
    tt_seeds = args.tt_seeds if args.tt_seeds is not None else (0 if args.quick else TT_SEEDS)
    close_seeds = args.close_seeds if args.close_seeds is not None else (0 if args.quick else CLOSE_SEEDS)
    if tt_seeds < 0 or close_seeds < 0:
        parser.error("--tt-seeds and --close-seeds must be 0 or more")
    if seeds < 1 or args.jobs < 1:
        parser.error("--seeds and --jobs must be at least 1")

    report: dict[str, Any] = {}
    means = run_accuracy(seeds, sizes, args.jobs)
    report.update(seeds=seeds, sizes=list(sizes), **means)
    targets = accuracy_targets(means, sizes)
    if not args.quick:
        report["deal_luck_share"] = {str(p): deal_luck_share(p, LUCK_DEALS, LUCK_REPLAYS) for p in LUCK_PS}
    if tt_seeds:
        study_sizes = list(TT_SIZES)
        study = run_duplicate_study(THREE_THIRTEEN, tt_seeds, study_sizes, args.jobs)
        study["deal_luck_share"] = {
            str(p): deal_luck_share(p, TT_LUCK_DEALS, LUCK_REPLAYS, THREE_THIRTEEN) for p in TT_LUCK_PS
        }
        report["three_thirteen"] = study
        targets.append(duplicate_study_target(study, study_sizes))
    if close_seeds:
        report["close_field"] = {}
        for game in (GAME, THREE_THIRTEEN):
            study = run_duplicate_study(game, close_seeds, CLOSE_SIZES, args.jobs, CLOSE_P_MAX[game])
            report["close_field"][game] = study
            targets.append(duplicate_study_target(study, CLOSE_SIZES))
    if args.experiments:
        report["experiments"] = run_experiments(seeds, sizes, args.jobs)
        report["duplicate_worth"] = map_jobs(duplicate_worth, WORTH_TABLES, args.jobs)
    report["targets"] = targets
    run.finish(args, report, print_report)


if __name__ == "__main__":
    main()
