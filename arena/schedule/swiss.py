"""Swiss rounds: bots of similar standing together, repeated table-mates avoided when cheap.

`swiss_round(standings, seats, round=..., seed=..., history=...)` is a pure function of the
standings so far, the earlier rounds and the run's key (`arena.store.seeds.RunKey`): a
tournament schedules each round once the round before is stored (`arena.play.tournament`).
docs/tournaments.md explains the choices; tests/play/test_schedule.py proves the properties.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.config.tournament_file import swiss_sizes
from arena.schedule.seating import (
    ScheduleError,
    check_bots,
    check_count,
    check_seats,
    games_of_tables,
    seat_by_use,
)
from arena.store.keys import ScheduledGame
from arena.store.seeds import RunKey

# Swiss pairing seats bots of similar standing together and avoids repeated table-mates
# where that costs little: a split's cost is the rank distance of every pair of
# table-mates plus this much per earlier meeting. Swapping two neighbours in the ranking
# across a boundary of four-seat tables adds 6: at four seats one repeat is not worth
# that move (a tie keeps the ranking), two are. Measured in docs/performance.md:
# avoiding every repeat first cost the top three on 16 bots; 0 to 24 were alike.
SWISS_REPEAT_COST = 6
# The split search is cut after this many steps and the best split found is kept (exact
# against brute force up to 9 bots).
SWISS_SEARCH_STEPS = 1_500


class SwissStanding(Protocol):
    """What Swiss pairing reads of a bot's standing: the standings' own line
    (`arena.ratings.ledger.BotStanding`, which the schedule, below the ratings, does not
    import) has it, and so does `SwissEntry`."""

    bot: str
    score: float
    conservative: float


@dataclass(frozen=True)
class SwissEntry:
    """A bare Swiss standing: round 1's (nobody has played) and tests' hand-made ones; score
    so far, then conservative TrueSkill."""

    bot: str
    score: float = 0.0
    conservative: float = 0.0


def swiss_table_sizes(bots: int, seats: int) -> list[int]:
    """Table sizes for a Swiss round: the fewest tables, sizes differing by at most one.

    Larger tables first. Only two seats and an odd field would need a table of one; there
    the last seat is a bye instead (the sizes then cover one bot fewer).
    """
    check_seats(seats)
    if bots < 2:
        raise ScheduleError(f"a Swiss round needs at least 2 bots, got {bots}")
    return swiss_sizes(bots, seats)


def swiss_round(
    standings: Sequence[SwissStanding],
    seats: int,
    *,
    round: int,
    seed: int | RunKey,
    history: Iterable[ScheduledGame] = (),
    duplicate: bool = False,
    repeat_cost: float = SWISS_REPEAT_COST,
) -> list[ScheduledGame]:
    """One Swiss round: bots of similar standing together, repeated table-mates avoided when cheap.

    Bots are ranked by score, then conservative rating (ties by a seeded shuffle), and
    split into tables (`swiss_table_sizes`) by a branch-and-bound search for the split of
    least `swiss_split_cost`: the rank distance of every pair of table-mates plus
    `repeat_cost` (default SWISS_REPEAT_COST) per earlier meeting. Seats go to the
    positions each bot has used least.
    """
    check_seats(seats)
    check_count("round", round, allow_none=False)
    entries = list(standings)
    check_bots([entry.bot for entry in entries], "a Swiss round", 2)
    history = list(history)
    rng = random.Random(f"swiss/{RunKey.coerce(seed).schedule_seed}/{round}")
    tiebreak = {entry.bot: rng.random() for entry in entries}
    ranked = [
        entry.bot
        for entry in sorted(entries, key=lambda e: (-e.score, -e.conservative, tiebreak[e.bot]))
    ]

    shared_pairs: list[tuple[str, str]] = []
    tables_sat: list[str] = []
    seen_tables = set()
    for game in history:
        table_id = (game.round, game.table_no)
        if table_id in seen_tables:
            continue  # rotations of one duplicate deal are one meeting
        seen_tables.add(table_id)
        shared_pairs.extend(itertools.combinations(sorted(game.table), 2))
        tables_sat.extend(game.table)
    met = Counter(shared_pairs)  # pair in sorted order -> tables shared
    rounds_played = Counter(tables_sat)
    seat_use = Counter((bot, position) for game in history for position, bot in enumerate(game.table))

    if seats == 2 and len(ranked) % 2:
        # The bye: the lowest-ranked bot among those that sat out least often.
        earlier_rounds = len({game.round for game in history})
        byes = {bot: earlier_rounds - rounds_played[bot] for bot in ranked}
        fewest = min(byes.values())
        sitting_out = [bot for bot in ranked if byes[bot] == fewest][-1]
        ranked = [bot for bot in ranked if bot != sitting_out]

    # Once every pair has met f times, meeting an f+1-th time is the repeat to avoid: only
    # meetings beyond the fewest any pair has had count. (The number of pairs seated is
    # fixed, so this ranks splits as the raw counts do; it lets the search stop sooner.)
    pairs = itertools.combinations(sorted(ranked), 2)
    fewest_meetings = min((met[pair] for pair in pairs), default=0)
    excess: dict[str, dict[str, int]] = {}  # bot -> other bot -> meetings beyond the fewest
    for (a, b), count in met.items():
        if count > fewest_meetings:
            excess.setdefault(a, {})[b] = count - fewest_meetings
            excess.setdefault(b, {})[a] = count - fewest_meetings
    sizes = swiss_table_sizes(len(ranked), seats)
    if isinstance(repeat_cost, bool) or not isinstance(repeat_cost, (int, float)) or not 0 <= repeat_cost < math.inf:
        raise ScheduleError(f"repeat_cost must be a finite number of 0 or more, got {repeat_cost!r}")
    tables = _swiss_split(ranked, sizes, excess, repeat_cost)
    seated = [seat_by_use(table, seat_use) for table in tables]
    return games_of_tables([seated], seed, duplicate, first_round=round)


def _swiss_split(
    ranked: list[str], sizes: list[int], met: dict[str, dict[str, int]], repeat_cost: float = SWISS_REPEAT_COST
) -> list[tuple[str, ...]]:
    """Split ranked bots into tables of `sizes` at the least cost (see `swiss_split_cost`).

    Each table takes the best-ranked bot left and then members in rank order, cheapest
    additions first, so the first complete split found is the greedy one; a branch and
    bound goes on while a cheaper split may exist, within SWISS_SEARCH_STEPS steps.
    """
    rank = {bot: at for at, bot in enumerate(ranked)}
    # No split costs less than tables of consecutive ranks without a repeat.
    floor = sum(_interval_spread(size) for size in sizes)
    steps = 0

    no_meetings: dict[str, int] = {}

    # The search starts from the top-down split (tables of consecutive ranks), so a search
    # cut short on a big field never returns anything costlier than seating by rank alone.
    best, at = [], 0
    for size in sizes:
        best.append(tuple(ranked[at : at + size]))
        at += size
    best_cost = sum(_table_cost(table, rank, met, repeat_cost) for table in best)
    if best_cost <= floor:
        return best

    def added_cost(bot: str, members: list[str]) -> float:
        row = met.get(bot, no_meetings)
        repeats = sum(row.get(other, 0) for other in members)
        return repeat_cost * repeats + sum(rank[bot] - rank[other] for other in members)

    def place(remaining: list[str], sizes_left: tuple[int, ...], tables: list[tuple[str, ...]], cost: float) -> bool:
        """Returns True when the search should stop (a split at the floor found, or steps used)."""
        nonlocal best, best_cost
        if not sizes_left:
            if cost < best_cost:  # always so (pruned otherwise), but a tie keeps the top-down split
                best, best_cost = list(tables), cost
            return best_cost <= floor
        first, rest = remaining[0], remaining[1:]
        # The best-ranked bot left opens the next table; which size that table has is part
        # of the search (larger first), so every split of the field can be reached.
        for size in sorted(set(sizes_left), reverse=True):
            left_sizes = list(sizes_left)
            left_sizes.remove(size)
            if fill(remaining, rest, tuple(left_sizes), size, tables, [first], 0, cost):
                return True
        return False

    def fill(remaining, rest, sizes_left, size, tables, members, start, cost_so_far) -> bool:
        nonlocal steps
        if len(members) == size:
            chosen = set(members)
            left = [bot for bot in remaining if bot not in chosen]
            return place(left, sizes_left, tables + [tuple(members)], cost_so_far)
        # Leave enough bots for the remaining seats of this table. Cheapest additions
        # first; members still join in rank order, so no split is reached twice.
        later_floor = sum(_interval_spread(later) for later in sizes_left)  # tables not opened yet
        candidates = []
        for at in range(start, len(rest) - (size - len(members)) + 1):
            candidates.append((added_cost(rest[at], members), at))
        candidates.sort()
        for extra, at in candidates:
            steps += 1
            if steps > SWISS_SEARCH_STEPS:
                return True
            if cost_so_far + extra + later_floor >= best_cost:
                break  # sorted: every later candidate costs at least as much
            if fill(remaining, rest, sizes_left, size, tables, members + [rest[at]], at + 1, cost_so_far + extra):
                return True
        return False

    place(ranked, tuple(sizes), [], 0)
    if best_cost > floor and steps > SWISS_SEARCH_STEPS:
        best = _swap_to_cheaper(best, met, rank, repeat_cost)  # a cut search: polish it
    return best


def _table_cost(
    table: Sequence[str], rank: Mapping[str, int], met: Mapping[str, Mapping[str, int]], repeat_cost: float
) -> float:
    """One table's share of `swiss_split_cost`: rank distance of each pair plus repeats."""
    return sum(
        abs(rank[a] - rank[b]) + repeat_cost * met.get(a, {}).get(b, 0) for a, b in itertools.combinations(table, 2)
    )


def _interval_spread(size: int) -> int:
    """The rank spread of `size` consecutive ranks: the sum of their pairwise distances."""
    return (size - 1) * size * (size + 1) // 6


def swiss_split_cost(
    tables: Sequence[Sequence[str]],
    ranked: Sequence[str],
    met: Mapping[str, Mapping[str, int]],
    repeat_cost: float = SWISS_REPEAT_COST,
) -> float:
    """What Swiss pairing minimises: rank distance of every pair of table-mates plus repeats.

    Each pair at a table costs the distance between their places in `ranked`, and
    `repeat_cost` for each earlier meeting counted in `met` (bot -> bot -> meetings).
    """
    rank = {bot: at for at, bot in enumerate(ranked)}
    return sum(_table_cost(table, rank, met, repeat_cost) for table in tables)


def _swap_to_cheaper(
    tables: list[tuple[str, ...]], met: dict[str, dict[str, int]], rank: dict[str, int], repeat_cost: float
) -> list[tuple[str, ...]]:
    """Swap two bots between tables while that lowers the split's cost, nearest tables first.

    Used when the split search ran out of steps on a big field: afterwards no single swap
    of two bots makes the round cheaper. Every swap lowers the cost, so this ends.
    """
    seated = [list(table) for table in tables]
    no_meetings: dict[str, int] = {}

    def pair_cost(a: str, b: str) -> float:
        return repeat_cost * met.get(a, no_meetings).get(b, 0) + abs(rank[a] - rank[b])

    bots = [bot for table in seated for bot in table]
    # at_table[b][t]: what bot b would cost with the bots of table t (itself excluded), kept
    # up to date, so a swap's change in cost is four lookups and two pair costs.
    at_table = {bot: [0.0] * len(seated) for bot in bots}

    def refresh(t: int) -> None:
        for bot in bots:
            at_table[bot][t] = sum(pair_cost(bot, other) for other in seated[t] if other != bot)

    for t in range(len(seated)):
        refresh(t)
    pairs = sorted(itertools.combinations(range(len(seated)), 2), key=lambda pair: (pair[1] - pair[0], pair))
    improved = True
    while improved:
        improved = False
        for i, j in pairs:
            table_i, table_j = seated[i], seated[j]
            for x_at in range(len(table_i)):
                for y_at in range(len(table_j)):
                    x, y = table_i[x_at], table_j[y_at]
                    between = pair_cost(x, y)
                    before = at_table[x][i] + at_table[y][j]
                    after = at_table[y][i] - between + at_table[x][j] - between
                    if after < before - 1e-9:  # strictly cheaper, float noise aside
                        table_i[x_at], table_j[y_at] = y, x
                        refresh(i)
                        refresh(j)
                        improved = True
    return [tuple(table) for table in seated]
