"""Schedules: which bots sit at which table, in which seats, with which deal.

Pure functions of their arguments (and the run's key, `arena.store.seeds.RunKey`, or a public
integer seed): no bots, no processes, no store, no clock.
Three formats, all returning lists of `ScheduledGame` in schedule order:

- `round_robin`: every table of `seats` bots (all k-subsets while there are at most
  `COMPLETE_LIMIT` of them), else a balanced resolvable design in rounds (affine plane,
  circle method for two seats, else a greedy social-golfer schedule improved by swaps);
  every bot sits in every seat position equally often (within one game).
- `gauntlet`: each challenger against the field; `gauntlet_results` reads its finished
  games back as a challenger-against-each-opponent table.
- `swiss_round`: one Swiss round from the standings so far (`arena.schedule.swiss`).

`duplicate=True` plays each deal once per seat rotation of the same table, so every bot
holds every hand of the deal once and the luck of the deal cancels out.
What every schedule is made of (checks, deal seeds, rotations, seating by use) is
`arena.schedule.seating`; the game and deal keys are `arena.store.keys`.
docs/tournaments.md explains the choices; tests/play/test_schedule.py proves the properties.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.schedule.swiss import (
    SWISS_REPEAT_COST,
    SWISS_SEARCH_STEPS,
    SwissEntry,
    SwissStanding,
    swiss_round,
    swiss_split_cost,
    swiss_table_sizes,
)
from arena.schedule.seating import (
    MAX_SEATS,
    MIN_SEATS,
    ScheduleError,
    check_bots,
    check_count,
    check_seats,
    deal_seed,
    games_of_tables,
    rotate,
    seat_by_use,
)
from arena.store.keys import ScheduledGame, key_order
from arena.store.seeds import RunKey

# The schedule's building blocks, and Swiss rounds, are importable from here too.
__all__ = [
    "COMPLETE_LIMIT", "MAX_SEATS", "MIN_SEATS", "SWISS_REPEAT_COST", "SWISS_SEARCH_STEPS", "GauntletLine",
    "ScheduleError", "ScheduledGame", "SwissStanding", "SwissEntry", "affine_plane", "balance_seats", "deal_seed",
    "design_rounds", "gauntlet",
    "gauntlet_results", "key_order", "rotate", "round_robin", "seat_by_use", "swiss_round", "swiss_split_cost",
    "swiss_table_sizes",
]

# Above this many k-subsets a complete cycle is too long to be a tournament (C(24,4) is
# 10,626 tables, 1,771 games per bot); below it, C(16,4) = 1,820 still fits, and every
# field of up to 13 bots fits at any table size.
COMPLETE_LIMIT = 2000

# Improvement passes of pair swaps after the greedy social-golfer round.
GOLFER_SWAP_PASSES = 4
# How much more a pair that already met n+1 times costs at one table than one that met n.
PAIR_WEIGHT = 8
# A design round tries every split of the field when there are at most this many.
EXACT_ROUND_LIMIT = 3000


def balance_seats(tables: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Reorder each table's seats so every bot sits in every seat equally often (within one).

    Tables must all have the same size k. This is an equitable k-edge-colouring of the
    bipartite graph bots-tables (de Werra): each bot's games are cut into chunks of k, each
    chunk a vertex of degree <= k, and the graph is coloured properly with k colours (=
    seats) by alternating-path swaps (Konig). A chunk of k then holds every seat once.
    """
    if not tables:
        return []
    seats = len(tables[0])
    if any(len(table) != seats for table in tables):
        raise ScheduleError("balance_seats needs tables of one size")
    chunk_of: dict[tuple[str, int], int] = {}
    bot_of_chunk: list[str] = []
    chunk_adj: list[list[int]] = []  # chunk -> table by colour, -1 free
    table_adj = [[-1] * seats for _ in tables]  # table -> chunk by colour
    played: Counter[str] = Counter()
    edges = []
    for table_index, table in enumerate(tables):
        for bot in table:
            chunk_key = (bot, played[bot] // seats)
            played[bot] += 1
            chunk = chunk_of.get(chunk_key)
            if chunk is None:
                chunk = chunk_of[chunk_key] = len(chunk_adj)
                chunk_adj.append([-1] * seats)
                bot_of_chunk.append(bot)
            edges.append((chunk, table_index))
    for chunk, table_index in edges:
        free_at_chunk = chunk_adj[chunk].index(-1)
        if table_adj[table_index][free_at_chunk] != -1:
            # Free colour a at the chunk is taken at the table: swap a<->b along the a/b
            # path leaving the table, then a is free at both ends (bipartite: the path
            # never reaches the chunk, which has no a-edge).
            a, b = free_at_chunk, table_adj[table_index].index(-1)
            path = []
            at_table = table_index
            while True:
                via_a = table_adj[at_table][a]
                if via_a == -1:
                    break
                path.append((via_a, at_table, a))
                next_table = chunk_adj[via_a][b]
                if next_table == -1:
                    break
                path.append((via_a, next_table, b))
                at_table = next_table
            for c, t, colour in path:
                chunk_adj[c][colour] = -1
                table_adj[t][colour] = -1
            for c, t, colour in path:
                other = b if colour == a else a
                chunk_adj[c][other] = t
                table_adj[t][other] = c
        chunk_adj[chunk][free_at_chunk] = table_index
        table_adj[table_index][free_at_chunk] = chunk
    return [tuple(bot_of_chunk[chunk] for chunk in colours) for colours in table_adj]


# --------------------------------------------------------------- finite fields


def _prime_power(q: int) -> tuple[int, int] | None:
    """(p, m) with q = p**m for a prime p, or None."""
    for p in range(2, q + 1):
        if q % p == 0:
            m, rest = 0, q
            while rest % p == 0:
                rest //= p
                m += 1
            return (p, m) if rest == 1 else None
    return None


class _Field:
    """GF(p**m): elements are ints 0..q-1, the base-p digits being polynomial coefficients."""

    def __init__(self, p: int, m: int):
        self.p, self.m, self.q = p, m, p**m
        self.modulus = self._irreducible() if m > 1 else None

    def _digits(self, x: int) -> list[int]:
        return [(x // self.p**i) % self.p for i in range(self.m)]

    def _number(self, digits: Sequence[int]) -> int:
        return sum(d * self.p**i for i, d in enumerate(digits))

    def add(self, x: int, y: int) -> int:
        return self._number([(a + b) % self.p for a, b in zip(self._digits(x), self._digits(y))])

    def _poly_mul(self, a: Sequence[int], b: Sequence[int]) -> list[int]:
        product = [0] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                product[i + j] = (product[i + j] + x * y) % self.p
        return product

    def _reduce(self, poly: list[int]) -> list[int]:
        modulus = self.modulus  # monic, degree m
        poly = poly[:]
        for top in range(len(poly) - 1, self.m - 1, -1):
            factor = poly[top]
            if factor:
                for i, c in enumerate(modulus):
                    poly[top - self.m + i] = (poly[top - self.m + i] - factor * c) % self.p
        return (poly + [0] * self.m)[: self.m]

    def _irreducible(self) -> list[int]:
        # The first monic polynomial of degree m without a root: for m = 2 or 3 having no
        # root is the same as being irreducible, and tables of at most 6 need m <= 2.
        for tail in itertools.product(range(self.p), repeat=self.m):
            poly = list(tail) + [1]
            if all(sum(c * x**i for i, c in enumerate(poly)) % self.p for x in range(self.p)):
                return poly
        raise AssertionError("no irreducible polynomial")  # pragma: no cover

    def mul(self, x: int, y: int) -> int:
        if self.m == 1:
            return x * y % self.p
        return self._number(self._reduce(self._poly_mul(self._digits(x), self._digits(y))))


def affine_plane(q: int) -> list[list[tuple[int, ...]]]:
    """The parallel classes of AG(2, q) on points 0..q*q-1: q+1 rounds of q lines of q points.

    Every pair of points lies on exactly one line, so over the q+1 rounds every pair of
    bots shares a table exactly once. q must be a prime power with m <= 3.
    """
    power = _prime_power(q)
    if power is None or power[1] > 3:
        raise ScheduleError(f"an affine plane needs a prime power order (2, 3, 4, 5, 7, 8, 9, ...), got {q}")
    field = _Field(*power)
    classes = []
    for slope in range(q):  # lines y = slope*x + c
        lines = []
        for c in range(q):
            lines.append(tuple(sorted(x * q + field.add(field.mul(slope, x), c) for x in range(q))))
        classes.append(lines)
    classes.append([tuple(c * q + y for y in range(q)) for c in range(q)])  # x = c
    return classes


# --------------------------------------------------------------- round-robin


def round_robin(
    bots: Sequence[str],
    seats: int,
    *,
    seed: int | RunKey,
    rounds: int | None = None,
    cycles: int = 1,
    duplicate: bool = False,
    complete_limit: int = COMPLETE_LIMIT,
) -> list[ScheduledGame]:
    """A round-robin schedule: every table of `seats` bots, or a balanced design in rounds.

    With `rounds=None`: `cycles` complete cycles of all k-subsets when there are at most
    `complete_limit` of them (round c is cycle c), else `cycles` times
    ceil((n-1)/(k-1)) design rounds, enough for every pair to meet about once.
    With `rounds=R`: R design rounds in which every bot plays once (byes rotate when
    `seats` does not divide the field). Seats are balanced unless `duplicate`, where each
    table is played in every rotation instead.
    """
    check_seats(seats)
    bots = check_bots(bots, "a round-robin", seats)
    check_count("rounds", rounds)
    check_count("cycles", cycles, allow_none=False)
    if rounds is not None and cycles != 1:
        raise ScheduleError("give either rounds (design rounds) or cycles (whole round-robins), not both")
    rng = random.Random(f"round-robin/{RunKey.coerce(seed).schedule_seed}")
    if rounds is None and math.comb(len(bots), seats) <= complete_limit:
        subsets = list(itertools.combinations(bots, seats))
        cycle_tables = []
        for _ in range(cycles):
            order = subsets[:]
            rng.shuffle(order)  # spread each bot's games over the cycle
            cycle_tables.append(order)
    else:
        if rounds is None:
            rounds = cycles * math.ceil((len(bots) - 1) / (seats - 1))
        cycle_tables = design_rounds(bots, seats, rounds, rng)
    if not duplicate:
        flat = balance_seats([table for tables in cycle_tables for table in tables])
        at = 0
        balanced = []
        for tables in cycle_tables:
            balanced.append(flat[at : at + len(tables)])
            at += len(tables)
        cycle_tables = balanced
    return games_of_tables(cycle_tables, seed, duplicate)


def design_rounds(
    bots: Sequence[str], seats: int, rounds: int, rng: random.Random
) -> list[list[tuple[str, ...]]]:
    """`rounds` rounds of tables of `seats`, every bot at most once per round, pairs spread.

    Exact designs where they exist: the affine plane AG(2, q) when there are q*q bots at
    tables of q (q prime power), the circle method for two seats and an even field, one
    table when the field is one table. Otherwise greedy social golfer improved by swaps.
    """
    bots = list(bots)
    n = len(bots)
    labels = bots[:]
    rng.shuffle(labels)  # which bots share the design's lines is up to the seed
    power = _prime_power(seats)
    if n == seats:
        return [[tuple(labels)] for _ in range(rounds)]
    if power is not None and power[1] <= 3 and n == seats * seats:
        classes = affine_plane(seats)
        return [
            [tuple(labels[point] for point in line) for line in classes[r % len(classes)]]
            for r in range(rounds)
        ]
    if seats == 2 and n % 2 == 0:
        return [_circle_round(labels, r % (n - 1)) for r in range(rounds)]
    return _golfer_rounds(labels, seats, rounds, rng)


def _circle_round(labels: list[str], r: int) -> list[tuple[str, ...]]:
    """Round r of the circle method: the first bot fixed, the others turned r steps."""
    n = len(labels)
    ring = labels[1:]
    ring = ring[r:] + ring[:r]
    circle = [labels[0]] + ring
    return [(circle[i], circle[n - 1 - i]) for i in range(n // 2)]


def _golfer_rounds(labels: list[str], seats: int, rounds: int, rng: random.Random) -> list[list[tuple[str, ...]]]:
    """Greedy social golfer: each round joins bots that met least, then improves by swaps.

    The cost of seating two bots together grows steeply with how often they met
    (PAIR_WEIGHT ** meetings), so a third meeting is avoided before two second ones.
    """
    n = len(labels)
    weight = [[1] * n for _ in range(n)]  # PAIR_WEIGHT ** meetings, by label index
    byes = [0] * n
    schedule = []
    for _ in range(rounds):
        order = list(range(n))
        rng.shuffle(order)
        out_count = n % seats
        # Byes to the bots with the fewest byes so far; the shuffle breaks ties, and the
        # swaps below may trade a bye between bots with as many byes.
        order.sort(key=lambda bot: byes[bot])
        sitting_out, remaining = order[:out_count], order[out_count:]
        exact = _exact_round(order, out_count, seats, byes, weight)
        if exact is not None:
            sitting_out, tables = exact
            remaining = []
        else:
            tables = []
        while remaining:
            members = [remaining.pop(0)]
            while len(members) < seats:
                rows = [weight[m] for m in members]
                best_at = min(range(len(remaining)), key=lambda at: sum(row[remaining[at]] for row in rows))
                members.append(remaining.pop(best_at))
            tables.append(members)
        for _ in range(GOLFER_SWAP_PASSES):
            improved = _improve_by_swaps(tables, weight)
            improved = _trade_byes(tables, sitting_out, byes, weight) or improved
            if not improved:
                break
        for bot in sitting_out:
            byes[bot] += 1
        for members in tables:
            for x, y in itertools.combinations(members, 2):
                weight[x][y] *= PAIR_WEIGHT
                weight[y][x] *= PAIR_WEIGHT
        schedule.append([tuple(labels[m] for m in members) for members in tables])
    return schedule


def _exact_round(
    order: list[int], out_count: int, seats: int, byes: list[int], weight: list[list[int]]
) -> tuple[list[int], list[list[int]]] | None:
    """The cheapest round of all (byes, tables) choices, when there are few enough of them.

    Small fields are where a greedy round goes most wrong (one pair kept apart for good),
    and also where trying every split is cheap. Byes stay fair: the bots with fewer byes
    always sit out, only ties are chosen. None when there are over EXACT_ROUND_LIMIT.
    """
    if out_count:
        threshold = byes[order[out_count - 1]]
        forced = [bot for bot in order if byes[bot] < threshold]
        tied = [bot for bot in order if byes[bot] == threshold]
        bye_sets = math.comb(len(tied), out_count - len(forced))
    else:
        forced, tied, bye_sets = [], [], 1
    players = len(order) - out_count
    tables = players // seats
    splits = math.factorial(players) // (math.factorial(seats) ** tables * math.factorial(tables))
    if bye_sets * splits > EXACT_ROUND_LIMIT:
        return None
    best: tuple[int, list[int], list[list[int]]] | None = None
    for chosen in itertools.combinations(tied, out_count - len(forced)):
        out = forced + list(chosen)
        playing = [bot for bot in order if bot not in out]
        for split in _splits(playing, seats):
            cost = sum(weight[x][y] for table in split for x, y in itertools.combinations(table, 2))
            if best is None or cost < best[0]:
                best = (cost, out, split)
    return best[1], best[2]


def _splits(players: list[int], seats: int):
    """Every way to cut `players` into tables of `seats` (tables unordered)."""
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for companions in itertools.combinations(rest, seats - 1):
        left = [bot for bot in rest if bot not in companions]
        for tail in _splits(left, seats):
            yield [[first, *companions], *tail]


def _trade_byes(tables: list[list[int]], sitting_out: list[int], byes: list[int], weight: list[list[int]]) -> bool:
    """Swap a sitting-out bot with a player who has as many byes, when that lowers pair cost."""
    improved = False
    for out_at, out in enumerate(sitting_out):
        for table in tables:
            for x_at, x in enumerate(table):
                if byes[x] != byes[out]:
                    continue
                before = sum(weight[x][other] for other in table if other != x)
                after = sum(weight[out][other] for other in table if other != x)
                if after < before:
                    table[x_at], sitting_out[out_at] = out, x
                    out = x
                    improved = True
    return improved


def _improve_by_swaps(tables: list[list[int]], weight: list[list[int]]) -> bool:
    """One pass of swapping two bots between two tables whenever it lowers the pair cost."""
    improved = False
    for i, j in itertools.combinations(range(len(tables)), 2):
        table_i, table_j = tables[i], tables[j]
        for x_at in range(len(table_i)):
            for y_at in range(len(table_j)):
                x, y = table_i[x_at], table_j[y_at]
                row_x, row_y = weight[x], weight[y]
                before = after = 0
                for other in table_i:
                    if other != x:
                        before += row_x[other]
                        after += row_y[other]
                for other in table_j:
                    if other != y:
                        before += row_y[other]
                        after += row_x[other]
                if after < before:
                    table_i[x_at], table_j[y_at] = y, x
                    improved = True
    return improved


# --------------------------------------------------------------------- gauntlet


def gauntlet(
    challengers: Sequence[str],
    field: Sequence[str],
    seats: int,
    *,
    seed: int | RunKey,
    rounds: int = 1,
    duplicate: bool = False,
) -> list[ScheduledGame]:
    """Each challenger against the field: per round, every field bot meets each challenger.

    A round gives each challenger ceil(F/(k-1)) tables, each the challenger plus k-1 field
    bots from a fresh shuffle of the field; the last table is filled up with field bots from
    the next shuffle that are not already at it. Challengers never meet each other.
    """
    check_seats(seats)
    challengers = check_bots(challengers, "a gauntlet's challengers", 1)
    field = check_bots(field, "a gauntlet's field", seats - 1)
    both = sorted(set(challengers) & set(field))
    if both:
        raise ScheduleError(f"a bot is either a challenger or in the field, not both: {', '.join(both)}")
    check_count("rounds", rounds, allow_none=False)
    rng = random.Random(f"gauntlet/{RunKey.coerce(seed).schedule_seed}")
    opponents = seats - 1
    tables_by_round = []
    for _ in range(rounds):
        tables = []
        for challenger in challengers:
            order = field[:]
            rng.shuffle(order)
            for start in range(0, len(order), opponents):
                group = order[start : start + opponents]
                if len(group) < opponents:
                    topping = field[:]
                    rng.shuffle(topping)
                    group += [bot for bot in topping if bot not in group][: opponents - len(group)]
                tables.append((challenger, *group))
        tables_by_round.append(tables)
    if not duplicate:
        flat = balance_seats([table for tables in tables_by_round for table in tables])
        per_round = len(tables_by_round[0])
        tables_by_round = [flat[r * per_round : (r + 1) * per_round] for r in range(rounds)]
    return games_of_tables(tables_by_round, seed, duplicate)


@dataclass(frozen=True)
class GauntletLine:
    """A challenger against one field bot, over the games they played at one table."""

    challenger: str
    opponent: str
    games: int
    ahead: int  # games the challenger placed better
    tied: int
    behind: int
    place: float  # the challenger's mean place in these games (1 = best)
    opponent_place: float

    @property
    def score(self) -> float:
        """The challenger's share: 1 a game it placed ahead, 0.5 a tie, 0 behind."""
        return (self.ahead + self.tied / 2) / self.games if self.games else 0.0


def gauntlet_results(
    challengers: Sequence[str], games: Iterable[Sequence[tuple[str, int]]]
) -> list[GauntletLine]:
    """A gauntlet's result: each challenger against each field bot it met. `games` holds
    each finished game as (bot, place) per seat. Per challenger (in the order given), its
    hardest opponents first (lowest score, then name)."""
    challenging = set(challengers)
    met: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for table in games:
        places = dict(table)
        for challenger in challenging & set(places):
            for opponent, place in places.items():
                if opponent not in challenging:
                    met.setdefault((challenger, opponent), []).append((places[challenger], place))
    lines = []
    for challenger in challengers:
        mine = []
        for (who, opponent), pairs in met.items():
            if who != challenger:
                continue
            mine.append(GauntletLine(
                challenger=challenger,
                opponent=opponent,
                games=len(pairs),
                ahead=sum(1 for own, theirs in pairs if own < theirs),
                tied=sum(1 for own, theirs in pairs if own == theirs),
                behind=sum(1 for own, theirs in pairs if own > theirs),
                place=sum(own for own, _ in pairs) / len(pairs),
                opponent_place=sum(theirs for _, theirs in pairs) / len(pairs),
            ))
        lines += sorted(mine, key=lambda line: (line.score, line.opponent))
    return lines


