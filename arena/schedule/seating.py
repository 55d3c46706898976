"""What every schedule is made of: checks of its inputs, the deal seeds, the seat
rotations of a duplicate deal, numbering tables into games, and seating by use.

A round-robin or gauntlet (`arena.schedule.formats`), a Swiss round (`arena.schedule.swiss`) and a
league's batch (`arena.league.ladder`, seated by `arena.schedule.matchmaker`) are all built of
these; the keys they number games with are `arena.store.keys`.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping, Sequence

from arena.errors import ArenaError
from arena.store.keys import ScheduledGame, deal_key
from arena.store.seeds import RunKey

MIN_SEATS = 2
MAX_SEATS = 6


class ScheduleError(ArenaError, ValueError):
    """A schedule was asked for that cannot exist (too few bots, bad seat count, ...)."""


def check_seats(seats: int) -> None:
    """ScheduleError unless `seats` is a whole number from MIN_SEATS to MAX_SEATS."""
    if not isinstance(seats, int) or isinstance(seats, bool) or not MIN_SEATS <= seats <= MAX_SEATS:
        raise ScheduleError(f"seats must be a whole number from {MIN_SEATS} to {MAX_SEATS}, got {seats!r}")


def check_bots(bots: Sequence[str], what: str, at_least: int) -> list[str]:
    """The bots as a list; ScheduleError if one is listed twice or there are too few."""
    bots = list(bots)
    repeated = sorted(bot for bot, count in Counter(bots).items() if count > 1)
    if repeated:
        raise ScheduleError(f"the bots of {what} must be distinct; listed more than once: {', '.join(repeated)}")
    if len(bots) < at_least:
        raise ScheduleError(f"{what} needs at least {at_least} bots, got {len(bots)}")
    return bots


def check_count(name: str, value: int | None, allow_none: bool = True) -> None:
    """ScheduleError unless `value` is a whole number of at least 1 (or None, if allowed)."""
    if value is None and allow_none:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ScheduleError(f"{name} must be a whole number of at least 1, got {value!r}")


def deal_seed(seed: int | RunKey, deal: str) -> int:
    """A deal's seed, derived from the run's key (or a public integer seed) and the deal key."""
    return RunKey.coerce(seed).deal_seed(deal)


def games_of_tables(
    tables_by_round: Sequence[Sequence[tuple[str, ...]]],
    seed: int | RunKey,
    duplicate: bool,
    first_round: int = 1,
) -> list[ScheduledGame]:
    """Number the tables, derive deal seeds, and expand duplicate deals into rotations."""
    games = []
    for round_offset, tables in enumerate(tables_by_round):
        round_no = first_round + round_offset
        for table_index, table in enumerate(tables):
            table_no = table_index + 1
            seed_of_deal = deal_seed(seed, deal_key(round_no, table_no))
            rotations = len(table) if duplicate else 1
            for rotation in range(rotations):
                games.append(
                    ScheduledGame(round_no, table_no, rotation, rotate(table, rotation), seed_of_deal)
                )
    return games


def rotate(table: tuple[str, ...], rotation: int) -> tuple[str, ...]:
    """Seat rotation `rotation` of a table: the bot in seat p moves to seat p + rotation."""
    size = len(table)
    return tuple(table[(seat - rotation) % size] for seat in range(size))


def seat_by_use(
    table: Sequence[str], seat_use: Mapping[tuple[str, int], int], rng: random.Random | None = None
) -> tuple[str, ...]:
    """The seat order that puts each bot where it has sat least: of the orders whose seats
    were used least in all (`seat_use[(bot, seat)]`), the first in permutation order of
    `table`, or, with `rng`, the first after `rng` shuffled the orders (the league's
    matchmaker: ties broken at random, from its seeded draws). A Swiss round passes no
    `rng`, so its ties keep the ranking's order."""
    orders = list(itertools.permutations(table))
    if rng is not None:
        rng.shuffle(orders)
    return min(orders, key=lambda order: sum(seat_use[(bot, seat)] for seat, bot in enumerate(order)))
