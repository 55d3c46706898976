"""Cost of scheduling and rating per game: 64 bots, about 5,000 four-seat games.

    python -m bench.schedule_rating [--bots 64] [--games 5000] [--seats 4] [--quick] [--json]

Prints milliseconds per game for each schedule format (built whole, or round by round for
Swiss, reading the standings from a RatingLedger between rounds), for one TrueSkill rate()
of a four-seat game, and for rating all stored results at once.
Times are CPU time of this process (the machine is shared; the code is single-threaded).
Places are random: this measures cost, not accuracy (bench/rating_accuracy.py does).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from arena.ratings.ledger import RatedGame, RatingLedger, Ratings, rate_results
from arena.schedule.formats import gauntlet, round_robin, swiss_round
from bench import harness


def random_result(game, rng: random.Random) -> RatedGame:
    places = list(range(1, len(game.table) + 1))
    rng.shuffle(places)
    return RatedGame(game.key, game.table, tuple(places), deal=game.deal)


def timed(make, *args, **kwargs):
    start = time.process_time()
    value = make(*args, **kwargs)
    return value, time.process_time() - start


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="16 bots, 200 games")
    parser.add_argument("--bots", type=int, default=64)
    parser.add_argument("--games", type=int, default=5000)
    parser.add_argument("--seats", type=int, default=4)
    args = parser.parse_args(argv)
    if args.quick:
        args.bots, args.games = 16, 200
    run = harness.Run()
    bots = [f"bot{i:02d}" for i in range(args.bots)]
    tables_per_round = args.bots // args.seats
    rounds = math.ceil(args.games / tables_per_round)
    rng = random.Random(1)
    figures: dict[str, float] = {}

    games, seconds = timed(lambda: round_robin(bots, args.seats, seed=1, rounds=rounds))
    figures["round_robin_ms_per_game"] = 1000 * seconds / len(games)
    dup_rounds = math.ceil(rounds / args.seats)
    dup_games, seconds = timed(lambda: round_robin(bots, args.seats, seed=1, rounds=dup_rounds, duplicate=True))
    figures["round_robin_duplicate_ms_per_game"] = 1000 * seconds / len(dup_games)
    challengers, field = bots[:4], bots[4:]
    per_round = len(challengers) * math.ceil(len(field) / (args.seats - 1))
    gauntlet_games, seconds = timed(
        lambda: gauntlet(challengers, field, args.seats, seed=1, rounds=math.ceil(args.games / per_round))
    )
    figures["gauntlet_ms_per_game"] = 1000 * seconds / len(gauntlet_games)

    # Swiss as the runner would do it: standings from the ledger, pair, play, feed results.
    history, ledger = [], RatingLedger(bots=bots)
    pairing = rating = 0.0
    for round_no in range(1, rounds + 1):
        table, seconds = timed(ledger.table)
        rating += seconds
        new, seconds = timed(swiss_round, table.standings, args.seats, round=round_no, seed=1, history=history)
        pairing += seconds
        history += new
        start = time.process_time()
        for game in new:
            ledger.add(random_result(game, rng))
        rating += time.process_time() - start
    figures["swiss_pairing_ms_per_game"] = 1000 * pairing / len(history)
    figures["swiss_rating_ms_per_game"] = 1000 * rating / len(history)

    results = [random_result(game, rng) for game in games]
    ratings = Ratings()
    start = time.process_time()
    for result in results:
        ratings.update(result.bots, [place - 1 for place in result.places])
    figures["rate_one_game_ms"] = 1000 * (time.process_time() - start) / len(results)
    _, seconds = timed(lambda: rate_results(results))
    figures["rate_results_ms_per_game"] = 1000 * seconds / len(results)
    dup_results = [random_result(game, rng) for game in dup_games]
    _, seconds = timed(lambda: rate_results(dup_results, duplicate=True))
    figures["rate_results_duplicate_ms_per_game"] = 1000 * seconds / len(dup_results)

    figures = {name: round(value, 4) for name, value in figures.items()}

    def show(report: dict) -> None:
        print(f"{args.bots} bots, {args.seats} seats, {len(games)} games (ms per game)")
        for name, value in figures.items():
            print(f"  {name:42} {value:8.4f}")

    run.finish(args, {"bots": args.bots, "seats": args.seats, "games": len(games), **figures}, show)


if __name__ == "__main__":
    main()
