"""Tournament benchmarks: the runner's overhead per game, and how well ratings find the true order.

    python bench/tournament.py [--quick] [--seeds N] [--jobs N] [--experiments] [--json]
        [--skip-overhead] [--skip-accuracy] [--overhead-games N] [--progress-games N]
        [--subprocess-rounds N] [--tt-seeds N] [--close-seeds N]

Overhead: the real runner (`arena.play.tournament.run_tournament`) with 64 in-process bots and
5,000 four-seat games: the time per game spent in scheduling, rating and storage (each
part timed by wrapping what the runner calls), beside the time spent playing and the bare
engine time of the same games; again with a progress callback; then local subprocess bots,
where everything that is not playing is a share of the tournament's wall time.

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

import argparse
import inspect
import itertools
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.ratings.ledger import RatedGame, RatingLedger, RatingSettings, RatingTable
from arena.schedule.formats import (
    ScheduledGame,
    deal_seed,
    key_order,
    rotate,
    round_robin,
    swiss_round,
)
from engine.api import Action, Observation, State
from engine.registry import get_game
from engine.three_thirteen import best_arrangement, card_penalty

GAME = "3up3down"
# The duplicate question is also asked on Three Thirteen, where the cards decide more.
THREE_THIRTEEN = "three-thirteen"
TT_SEEDS = 6  # its tournaments are slower (about 0.1 s a game): fewer seeds, fewer sizes
TT_SIZES = (12, 24)  # duplicate at 12 and 24 against plain at 24 and 48 (plain is near 1 by then)
# The duplicate question in a close field: 16 nearly deterministic players of nearly equal
# strength (p = 0 to CLOSE_P_MAX[game]), where the cards are most of the luck, on both
# games. Each game's range is about as hard to order: plain round-robin reaches a tau of
# about 0.3 at 96 games per bot (a random move costs more in Three Thirteen).
CLOSE_P_MAX = {GAME: 0.15, THREE_THIRTEEN: 0.03}
CLOSE_SIZES = (12, 24, 48)  # duplicate at these against plain at 24, 48 and 96
CLOSE_SEEDS = 24
SEATS = 4
ACCURACY_BOTS = 16
# Tournaments per accuracy cell: a mean top-three overlap of 96 has a standard error of
# about 0.015, small enough to tell a real lead of 0.03 from noise (24 was not).
ACCURACY_SEEDS = 96
GAMES_PER_BOT = (12, 24, 48, 96)
FORMATS = ("round_robin", "swiss")
MODES = ("plain", "duplicate")
TOP = 3

# The tournament targets this benchmark checks (docs/performance.md, Tournaments).
OVERHEAD_TARGET_MS = 2.0
SUBPROCESS_SHARE_TARGET = 0.05
SWISS_TAU_SLACK = 0.03

# The deal-luck diagnostic: equal players of these p, each deal replayed with fresh randomness.
LUCK_PS = (0.1, 0.5, 1.0)
LUCK_DEALS = 100
LUCK_REPLAYS = 4
TT_LUCK_PS = (0.1, 0.5)
TT_LUCK_DEALS = 40

# --------------------------------------------------------------- graded players

# How much a card is worth to keep: Clear cards beat every number, the bonus ones most.
KEEP_VALUE = {"clear": 11, "clear1": 12, "clear2": 13}


def card_value(card: dict[str, Any]) -> int:
    """A card's worth to its holder: its number, or more for a Clear card."""
    if card["kind"] == "number":
        return int(card["value"])
    return KEEP_VALUE.get(card["kind"], 11)


def heuristic_action(observation: Observation, legal: list[Action]) -> Action:
    """The rule-of-thumb move: strongest cards face up, lowest number first (all copies), Clears kept.

    The same rules of thumb as bots/threeup-heuristic (a copy, so the bench does not move
    when that bot is tuned): with default rules it won 130 of 200 four-seat games
    against three random players.
    """
    first = legal[0]["type"]
    if len(legal) == 1:
        return legal[0]
    if first == "choose_up":
        cards = {card["id"]: card for card in observation["setup_cards"]}
        return max(legal, key=lambda action: sum(card_value(cards[c]) for c in action["cards"]))
    if first != "play":
        return legal[0]  # refill (free), keep (no swap), play_down (blind), pickup (forced)
    cards = {card["id"]: card for card in observation["hand"]}
    for seat_up in observation["up"]:
        for card in seat_up:
            cards[card["id"]] = card
    best_number: Action | None = None
    best_key = (11, 0)
    clears: dict[str, Action] = {}
    draw: Action | None = None
    for action in legal:
        if action["type"] == "draw":
            draw = action
            continue
        if action["type"] != "play":
            continue
        card = cards[action["cards"][0]]
        if card["kind"] == "number":
            key = (card["value"], -len(action["cards"]))
            if key < best_key:
                best_number, best_key = action, key
        else:
            clears.setdefault(card["kind"], action)
    if best_number is not None:
        return best_number
    if draw is not None:
        return draw
    order = ("clear", "clear1", "clear2") if observation["draw_pile_size"] else ("clear2", "clear1", "clear")
    for kind in order:
        if kind in clears:
            return clears[kind]
    return legal[0]


def three_thirteen_action(state: Any, legal: list[Action]) -> Action:
    """Three Thirteen rules of thumb: go out when possible, take a discard that joins a
    combination, else discard the highest unmatched card.

    Reads only what the seat may know (its own hand, the discard pile's top card, the
    wild rank), from the state directly: building the full observation would cost more
    than the decision. It won 40 of 40 four-seat games against three random players.
    """
    if legal[0]["type"] == "draw":
        if len(legal) == 1:
            return legal[0]
        hand = state.hands[state.current]
        top = state.discard_pile[-1]
        before = best_arrangement(hand, state.wild_rank).deadwood
        after = best_arrangement([*hand, top], state.wild_rank).deadwood
        return legal[1] if top not in after and len(after) <= len(before) else legal[0]
    for action in legal:
        if action["type"] == "go_out":
            return action
    deadwood = best_arrangement(state.hands[state.current], state.wild_rank).deadwood
    allowed = {action["card"] for action in legal}
    pool = [card for card in deadwood if card in allowed] or sorted(allowed)
    return {"type": "discard", "card": max(pool, key=lambda card: (card_penalty(card), card))}


@dataclass(frozen=True)
class GradedPlayer:
    """The heuristic player, but a random legal action with probability `p` (p=1: random)."""

    name: str
    p: float
    game: str = GAME

    def act(self, state: State, rng: random.Random) -> Action:
        """This player's action in `state` (its seat's own information only)."""
        legal = state.legal_actions()
        if rng.random() < self.p:
            return legal[rng.randrange(len(legal))]
        if self.game == THREE_THIRTEEN:
            return three_thirteen_action(state, legal)
        return heuristic_action(state.observation(state.current_player), legal)


def graded_players(count: int, game: str = GAME, p_max: float = 1.0) -> list[GradedPlayer]:
    """`count` players with p spread evenly over [0, p_max], strongest (p=0) first."""
    return [GradedPlayer(f"p{index:02d}", p_max * index / (count - 1), game) for index in range(count)]


def play_scheduled(game: ScheduledGame, players: dict[str, GradedPlayer]) -> RatedGame:
    """Play one scheduled game in process; the players' randomness comes from its deal and seat."""
    game_name = next(iter(players.values())).game
    state = get_game(game_name).new_game(len(game.table), None, game.seed)
    rngs = [random.Random(f"bench/{game.seed}/{game.rotation}/{seat}") for seat in range(len(game.table))]
    seated = [players[bot] for bot in game.table]
    while not state.is_over:
        seat = state.current_player
        state.apply(seated[seat].act(state, rngs[seat]))
    return RatedGame(game.key, game.table, tuple(state.places()), deal=game.deal)


# ------------------------------------------------------------------ accuracy


def kendall_tau(true_order: Sequence[str], rated_order: Sequence[str]) -> float:
    """Kendall tau (no ties) between two orders of the same bots: 1 same, -1 reversed."""
    position = {bot: at for at, bot in enumerate(rated_order)}
    concordant = discordant = 0
    for a, b in itertools.combinations(true_order, 2):  # a truly ahead of b
        if position[a] < position[b]:
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / (concordant + discordant)


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


def play_swiss(
    players: dict[str, GradedPlayer], ledger: RatingLedger, seed: int, rounds: int, duplicate: bool
) -> Iterator[tuple[int, list[RatedGame]]]:
    """Arena's Swiss, round by round: each round paired from `ledger`'s standings, played,
    and added to `ledger`; yields the round's number and results once it is rated."""
    history: list[ScheduledGame] = []
    for round_no in range(1, rounds + 1):
        games = swiss_round(
            ledger.table().standings, SEATS, round=round_no, seed=seed, history=history, duplicate=duplicate
        )
        history += games
        results = [play_scheduled(game, players) for game in games]
        for result in results:
            ledger.add(result)
        yield round_no, results


def map_jobs(function: Callable[[Any], Any], tasks: Sequence[Any], jobs: int) -> list[Any]:
    """`function` over `tasks`, in `jobs` processes when more than one; results in task order."""
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(function, tasks))
    return [function(task) for task in tasks]


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


# ------------------------------------------------------------------ overhead


class PartTimer:
    """Wall-clock seconds per part of the runner, summed over threads (outermost call only).

    Wall, not CPU: the store's fsync is waiting, not computing. A call made inside another
    timed call (the store's reads inside `standings`) counts for the outer part only.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}  # CPU of the calling thread, for a loaded machine
        self._inside = threading.local()
        self._lock = threading.Lock()

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function`, timed into `part`."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            if getattr(self._inside, "busy", False):
                return function(*args, **kwargs)
            self._inside.busy = True
            start, start_cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed, cpu = time.perf_counter() - start, time.thread_time() - start_cpu
                self._inside.busy = False
                with self._lock:
                    self.seconds[part] = self.seconds.get(part, 0.0) + elapsed
                    self.cpu_seconds[part] = self.cpu_seconds.get(part, 0.0) + cpu

        return timed

    def ms_per(self, part: str, count: int) -> float:
        """Milliseconds of `part` per one of `count` (games)."""
        return 1000 * self.seconds.get(part, 0.0) / count

    def cpu_ms_per(self, part: str, count: int) -> float:
        """CPU milliseconds of `part` per one of `count` (games)."""
        return 1000 * self.cpu_seconds.get(part, 0.0) / count


def store_methods(store_class: type) -> list[str]:
    """Every public method of the store, and its constructor (a new method is timed too)."""
    return [
        name
        for name, value in vars(store_class).items()
        if inspect.isfunction(value) and (name == "__init__" or not name.startswith("_")) and name != "standings"
    ]



@contextmanager
def instrumented_runner(timer: PartTimer, played: list[Any]):
    """Time the real runner's parts by wrapping what it calls; keep each played game's record.

    Scheduling: the schedule functions; rating: the rating ledger the runner feeds as games
    finish (`RatingLedger.add`/`table`, the in-order buffer around it) and reading the
    stored results into ratings (`rated_games`, `stored_standings`); storage: every other store method; play: `play_scheduled_game` (as the one runner,
    arena.play.runner, calls it)
    (referee, bots, engine). The HTML site is not built (`report=False`): it is the report,
    not the tournament.
    """
    import arena.play.tournament as runner
    from arena.ratings.ledger import RatingLedger
    from arena.ratings.results import OrderedLedger
    from arena.store.db import Store

    def keep(spec: Any, *args: Any, **kwargs: Any) -> Any:
        game = play(spec, *args, **kwargs)
        played.append(game.result)
        return game

    import arena.play.runner as loop  # the one loop under a tournament and a league plays each game

    play = loop.play_scheduled_game
    patches: list[tuple[Any, str, Any]] = [(loop, "play_scheduled_game", timer.wrap("play", keep))]
    patches += [(runner, name, timer.wrap("schedule", getattr(runner, name))) for name in ("round_robin", "swiss_round", "gauntlet")]
    patches += [(runner, name, timer.wrap("rating", getattr(runner, name))) for name in ("rated_games", "stored_standings")]
    patches += [(RatingLedger, name, timer.wrap("rating", getattr(RatingLedger, name))) for name in ("add", "table")]
    # The buffer that feeds the ledger in schedule order.
    patches += [(OrderedLedger, name, timer.wrap("rating", getattr(OrderedLedger, name))) for name in ("schedule", "add")]
    patches += [(Store, name, timer.wrap("storage", getattr(Store, name))) for name in store_methods(Store)]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
    try:
        for owner, name, replacement in patches:
            setattr(owner, name, replacement)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def graded_seat_factory(player: GradedPlayer) -> Callable[[], Any]:
    """A factory of InProcessBot seats playing as `player` (the runner makes one per game)."""
    from arena.game.seats import InProcessBot

    games = itertools.count()

    def make() -> Any:
        rng = random.Random(f"bench-overhead/{player.name}/{next(games)}")

        def decide(observation: Observation, legal: list[Action]) -> Action:
            if rng.random() < player.p:
                return legal[rng.randrange(len(legal))]
            return heuristic_action(observation, legal)

        return InProcessBot(decide, player.name)

    return make


def timed_run(config_data: dict[str, Any], in_process: dict[str, Any] | None, progress: bool) -> dict[str, Any]:
    """Run one tournament through `arena.play.tournament.run_tournament`, its time split by part."""
    from arena.play.tournament import run_tournament, validate_config

    timer, played = PartTimer(), []
    with tempfile.TemporaryDirectory() as out:
        config = validate_config({**config_data, "output": str(Path(out) / "run")})
        with instrumented_runner(timer, played):
            began, began_cpu = time.perf_counter(), time.thread_time()
            outcome = run_tournament(
                config, in_process=in_process, progress=(lambda _: None) if progress else None, report=False
            )
            wall, main_cpu = time.perf_counter() - began, time.thread_time() - began_cpu
    games = outcome.played
    if games != outcome.total:
        raise RuntimeError(f"the runner stored {games} of {outcome.total} games")
    engine = get_game(GAME)
    start = time.perf_counter()
    for result in played:
        engine.replay(result.players, result.rules, result.seed, [step.action for step in result.replay.actions])
    engine_s = time.perf_counter() - start
    figures = {part: timer.ms_per(part, games) for part in ("schedule", "rating", "storage", "play")}
    parts = figures["schedule"] + figures["rating"] + figures["storage"]
    total = 1000 * wall / games - figures["play"]  # everything but playing
    return {
        "bots": len(outcome.standings.standings),
        "games": games,
        "wall_s": wall,
        "progress_display": progress,
        "schedule_ms_per_game": figures["schedule"],
        "rating_ms_per_game": figures["rating"],
        "storage_ms_per_game": figures["storage"],
        # The runner's overhead: scheduling, rating and storage.
        "overhead_ms_per_game": parts,
        # The same three in CPU time: what they cost on a machine nobody else is using.
        "overhead_cpu_ms_per_game": sum(timer.cpu_ms_per(part, games) for part in ("schedule", "rating", "storage")),
        "cpu_ms_per_game": {part: timer.cpu_ms_per(part, games) for part in ("schedule", "rating", "storage")},
        # The rest of the wall time not spent playing: the runner's own bookkeeping (game
        # specs, futures, progress) and waiting for the main thread to be scheduled again.
        "other_ms_per_game": total - parts,
        "total_overhead_ms_per_game": total,
        # CPU of the runner's thread (everything but the games, which run in pool threads).
        "runner_thread_cpu_ms_per_game": 1000 * main_cpu / games,
        "play_ms_per_game": figures["play"],
        "engine_ms_per_game": 1000 * engine_s / games,
        "overhead_share": parts * games / 1000 / wall,
        "total_overhead_share": total * games / 1000 / wall,
        "top3_by_rating": [line.bot for line in outcome.standings.standings[:TOP]],
    }


def overhead_in_process(bot_count: int, game_count: int, progress: bool, seed: int = 1) -> dict[str, Any]:
    """In-process graded bots (p spread over [0, 1]), about `game_count` four-seat round-robin games."""
    players = graded_players(bot_count)
    rounds = math.ceil(game_count / (bot_count // SEATS))
    config = {"game": GAME, "seats": SEATS, "rounds": rounds, "seed": seed}
    return timed_run(config, {player.name: graded_seat_factory(player) for player in players}, progress)


def overhead_subprocess(folders: Sequence[Path], copies: int, rounds: int, progress: bool, seed: int = 1) -> dict[str, Any]:
    """`copies` copies of each bot folder in the local sandbox (the runner starts a fresh process per bot per game)."""
    with tempfile.TemporaryDirectory() as bots_dir:
        copied = []
        for folder in folders:
            for copy in range(copies):  # a tournament lists each folder once
                copied.append(shutil.copytree(folder, Path(bots_dir) / f"{folder.name}-{copy}"))
        config = {"game": GAME, "seats": SEATS, "rounds": rounds, "seed": seed, "bots": [str(f) for f in copied]}
        return timed_run(config, None, progress)


# ---------------------------------------------------------------------- main

BOTS_DIR = Path(__file__).resolve().parents[1] / "bots"
SUBPROCESS_FOLDERS = (BOTS_DIR / "threeup-heuristic", BOTS_DIR / "random")
SUBPROCESS_COPIES = 4


def print_study(study: dict[str, Any]) -> None:
    """A duplicate study's rows: plain and duplicate, tau ± s.e. / top-three overlap per size."""
    for mode in ("plain", "duplicate"):
        cells = "  ".join(
            f"{size}: {cell['tau']:.3f} ±{cell['tau_stderr']:.2f} / {cell['top3_overlap']:.2f}"
            for size, cell in study[mode].items()
        )
        print(f"  {mode:10} {cells}")


def print_report(report: dict[str, Any]) -> None:
    """The tables and the PASS/MISS lines, for people."""
    runs = (
        ("in-process bots", report.get("overhead")),
        ("local subprocess bots", report.get("subprocess")),
        ("in-process bots", report.get("overhead_with_progress")),
    )
    for label, figures in runs:
        if not figures:
            continue
        print(
            f"Overhead, {label}: {figures['bots']} bots, {figures['games']} four-seat games, "
            f"{figures['wall_s']:.1f} s wall, progress display {'on' if figures['progress_display'] else 'off'} "
            "(wall ms per game)"
        )
        for name, key in (
            ("scheduling", "schedule_ms_per_game"),
            ("rating", "rating_ms_per_game"),
            ("storage", "storage_ms_per_game"),
            ("overhead: scheduling + rating + storage", "overhead_ms_per_game"),
            ("  the same in CPU time", "overhead_cpu_ms_per_game"),
            ("rest of the runner (specs, futures, waits)", "other_ms_per_game"),
            ("all but playing", "total_overhead_ms_per_game"),
            ("runner thread CPU (all but playing)", "runner_thread_cpu_ms_per_game"),
            ("playing (referee, bots, engine)", "play_ms_per_game"),
            ("bare engine (same games re-simulated)", "engine_ms_per_game"),
        ):
            print(f"  {name:44} {figures[key]:9.3f}")
        print(
            f"  share of the wall time: overhead {100 * figures['overhead_share']:.2f}%, "
            f"all but playing {100 * figures['total_overhead_share']:.2f}%"
        )
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test: few games, 2 seeds, 12 and 24 games per bot")
    parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        help=f"tournaments per accuracy cell (default {ACCURACY_SEEDS}; 2 with --quick)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes for the accuracy studies (default: the number of CPUs; the figures do not depend on it)",
    )
    parser.add_argument("--overhead-bots", type=int, default=64)
    parser.add_argument("--overhead-games", type=int, default=None, help="default 5000; 64 with --quick")
    parser.add_argument("--subprocess-rounds", type=int, default=None, help="rounds of 8 local bots (default 25; 1 with --quick)")
    parser.add_argument(
        "--progress-games",
        type=int,
        default=None,
        help="games of a second in-process run with a progress callback, as `arena run` shows one "
        "(default 1000; 0 skips it, as does --quick)",
    )
    parser.add_argument(
        "--tt-seeds",
        type=int,
        default=None,
        help=f"seeds of the Three Thirteen duplicate study (default {TT_SEEDS}; 0 skips it, as does --quick)",
    )
    parser.add_argument(
        "--close-seeds",
        type=int,
        default=None,
        help=f"seeds of the close-field duplicate study, per game (default {CLOSE_SEEDS}; 0 skips it, as does --quick)",
    )
    parser.add_argument(
        "--experiments", action="store_true", help="also run the rating and pairing variants (not arena's code) of the docs"
    )
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    seeds = args.seeds if args.seeds is not None else (2 if args.quick else ACCURACY_SEEDS)
    if args.jobs is None:
        args.jobs = 1 if args.quick else max(1, os.cpu_count() or 1)
    sizes = GAMES_PER_BOT[:2] if args.quick else GAMES_PER_BOT
    overhead_games = args.overhead_games if args.overhead_games is not None else (64 if args.quick else 5000)
    subprocess_rounds = args.subprocess_rounds if args.subprocess_rounds is not None else (1 if args.quick else 25)
    progress_games = args.progress_games if args.progress_games is not None else (0 if args.quick else 1000)
    tt_seeds = args.tt_seeds if args.tt_seeds is not None else (0 if args.quick else TT_SEEDS)
    close_seeds = args.close_seeds if args.close_seeds is not None else (0 if args.quick else CLOSE_SEEDS)
    if tt_seeds < 0 or close_seeds < 0:
        parser.error("--tt-seeds and --close-seeds must be 0 or more")
    if seeds < 1 or args.jobs < 1 or overhead_games < 1 or subprocess_rounds < 1 or progress_games < 0:
        parser.error("--seeds, --jobs, --overhead-games and --subprocess-rounds must be at least 1, --progress-games 0 or more")

    report: dict[str, Any] = {"load_average": list(os_load())}
    targets: list[dict[str, Any]] = []
    if not args.skip_overhead:
        # The runner as a Python API (no progress callback, as `arena run --quiet`).
        inproc = overhead_in_process(args.overhead_bots, overhead_games, progress=False)
        sub = overhead_subprocess(SUBPROCESS_FOLDERS, SUBPROCESS_COPIES, subprocess_rounds, progress=False)
        report.update(overhead_ms_per_game=inproc["overhead_ms_per_game"], overhead=inproc, subprocess=sub)
        targets.append(
            {
                "target": f"overhead <= {OVERHEAD_TARGET_MS} ms per game (in-process bots)",
                "detail": f"{inproc['overhead_ms_per_game']:.3f} ms",
                "margin": round(OVERHEAD_TARGET_MS - inproc["overhead_ms_per_game"], 4),
                "pass": inproc["overhead_ms_per_game"] <= OVERHEAD_TARGET_MS,
            }
        )
        targets.append(
            {
                "target": f"all but playing <= {100 * SUBPROCESS_SHARE_TARGET:g}% of wall time (local subprocess bots)",
                "detail": f"{100 * sub['total_overhead_share']:.2f}% (scheduling + rating + storage alone "
                f"{100 * sub['overhead_share']:.2f}%)",
                "margin": round(SUBPROCESS_SHARE_TARGET - sub["total_overhead_share"], 4),
                "pass": sub["total_overhead_share"] <= SUBPROCESS_SHARE_TARGET,
            }
        )
        if progress_games:
            shown = overhead_in_process(args.overhead_bots, progress_games, progress=True)
            report["overhead_with_progress"] = shown
            targets.append(
                {
                    "target": f"overhead <= {OVERHEAD_TARGET_MS} ms per game with a progress display "
                    f"(in-process bots, {shown['games']} games)",
                    "detail": f"{shown['overhead_ms_per_game']:.3f} ms",
                    "margin": round(OVERHEAD_TARGET_MS - shown["overhead_ms_per_game"], 4),
                    "pass": shown["overhead_ms_per_game"] <= OVERHEAD_TARGET_MS,
                }
            )
    if not args.skip_accuracy:
        means = run_accuracy(seeds, sizes, args.jobs)
        report.update(seeds=seeds, sizes=list(sizes), **means)
        targets += accuracy_targets(means, sizes)
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
    report["load_average_after"] = list(os_load())
    if args.json:
        print(json.dumps(report))
        return
    print_report(report)


def os_load() -> tuple[float, ...]:
    """The machine's load average (1, 5, 15 min): the machine is shared, say how busy it was."""
    return tuple(round(value, 2) for value in os.getloadavg())


if __name__ == "__main__":
    main()
