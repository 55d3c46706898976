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
- `swiss_round`: one Swiss round from the standings so far.

`duplicate=True` plays each deal once per seat rotation of the same table, so every bot
holds every hand of the deal once and the luck of the deal cancels out.
docs/tournaments.md explains the choices; tests/test_schedule.py proves the properties.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.store.seeds import RunKey

MIN_SEATS = 2
MAX_SEATS = 6

# Above this many k-subsets a complete cycle is too long to be a tournament (C(24,4) is
# 10,626 tables, 1,771 games per bot); below it, C(16,4) = 1,820 still fits, and every
# field of up to 13 bots fits at any table size.
COMPLETE_LIMIT = 2000

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

# Improvement passes of pair swaps after the greedy social-golfer round.
GOLFER_SWAP_PASSES = 4
# How much more a pair that already met n+1 times costs at one table than one that met n.
PAIR_WEIGHT = 8
# A design round tries every split of the field when there are at most this many.
EXACT_ROUND_LIMIT = 3000


class ScheduleError(ValueError):
    """A schedule was asked for that cannot exist (too few bots, bad seat count, ...)."""


@dataclass(frozen=True)
class ScheduledGame:
    """One game to play: where it sits in the schedule, who sits where, and its deal."""

    round: int  # 1-based; a Swiss round, a design round, or a round-robin cycle
    table_no: int  # 1-based within the round
    rotation: int  # 0 unless duplicate: which seat rotation of the deal this is
    table: tuple[str, ...]  # bot ids in seat order (seat 0 first)
    seed: int  # the deal's seed; every rotation of a duplicate deal shares it

    @property
    def key(self) -> str:
        """The stable game key, e.g. '00003-00012-1'; `key_order` sorts it in schedule order."""
        return f"{self.deal}-{self.rotation}"

    @property
    def deal(self) -> str:
        """The deal key: the same for every rotation of one duplicate table."""
        return f"{self.round:05d}-{self.table_no:05d}"

    @property
    def order(self) -> tuple[int, int, int]:
        """Position in the schedule: (round, table_no, rotation)."""
        return (self.round, self.table_no, self.rotation)


def key_order(key: str) -> tuple[int, int, int]:
    """Turn a game key ('ROUND-TABLE-ROTATION') into its sortable schedule position."""
    parts = key.split("-")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(f"game key {key!r} is not of the form ROUND-TABLE-ROTATION, e.g. '00001-00002-0'")
    round_no, table_no, rotation = (int(part) for part in parts)
    return (round_no, table_no, rotation)


def deal_seed(seed: int | RunKey, deal: str) -> int:
    """A deal's seed, derived from the run's key (or a public integer seed) and the deal key."""
    return RunKey.coerce(seed).deal_seed(deal)


class Standing(Protocol):
    """What Swiss pairing needs of a bot's standing (rating.BotStanding has it)."""

    bot: str
    score: float
    conservative: float


@dataclass(frozen=True)
class SwissEntry:
    """A bot's standing for Swiss pairing: score so far, then conservative TrueSkill."""

    bot: str
    score: float = 0.0
    conservative: float = 0.0


# ---------------------------------------------------------------------------- checks


def _check_seats(seats: int) -> None:
    if not isinstance(seats, int) or isinstance(seats, bool) or not MIN_SEATS <= seats <= MAX_SEATS:
        raise ScheduleError(f"seats must be a whole number from {MIN_SEATS} to {MAX_SEATS}, got {seats!r}")


def _check_bots(bots: Sequence[str], what: str, at_least: int) -> list[str]:
    bots = list(bots)
    repeated = sorted(bot for bot, count in Counter(bots).items() if count > 1)
    if repeated:
        raise ScheduleError(f"the bots of {what} must be distinct; listed more than once: {', '.join(repeated)}")
    if len(bots) < at_least:
        raise ScheduleError(f"{what} needs at least {at_least} bots, got {len(bots)}")
    return bots


def _check_count(name: str, value: int | None, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ScheduleError(f"{name} must be a whole number of at least 1, got {value!r}")


# ------------------------------------------------------------------- game building


def _games(
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
            seed_of_deal = deal_seed(seed, f"{round_no:05d}-{table_no:05d}")
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
    _check_seats(seats)
    bots = _check_bots(bots, "a round-robin", seats)
    _check_count("rounds", rounds)
    _check_count("cycles", cycles, allow_none=False)
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
    return _games(cycle_tables, seed, duplicate)


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
    _check_seats(seats)
    challengers = _check_bots(challengers, "a gauntlet's challengers", 1)
    field = _check_bots(field, "a gauntlet's field", seats - 1)
    both = sorted(set(challengers) & set(field))
    if both:
        raise ScheduleError(f"a bot is either a challenger or in the field, not both: {', '.join(both)}")
    _check_count("rounds", rounds, allow_none=False)
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
    return _games(tables_by_round, seed, duplicate)


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


# ------------------------------------------------------------------------ Swiss


def swiss_table_sizes(bots: int, seats: int) -> list[int]:
    """Table sizes for a Swiss round: the fewest tables, sizes differing by at most one.

    Larger tables first. Only two seats and an odd field would need a table of one; there
    the last seat is a bye instead (the sizes then cover one bot fewer).
    """
    _check_seats(seats)
    if bots < 2:
        raise ScheduleError(f"a Swiss round needs at least 2 bots, got {bots}")
    if seats == 2 and bots % 2:
        bots -= 1
    tables = math.ceil(bots / seats)
    small, extra = divmod(bots, tables)
    return [small + 1] * extra + [small] * (tables - extra)


def swiss_round(
    standings: Sequence[Standing],
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
    _check_seats(seats)
    _check_count("round", round, allow_none=False)
    entries = list(standings)
    _check_bots([entry.bot for entry in entries], "a Swiss round", 2)
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
    seated = [_seat_by_use(table, seat_use) for table in tables]
    return _games([seated], seed, duplicate, first_round=round)


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


def _seat_by_use(table: tuple[str, ...], seat_use: Counter[tuple[str, int]]) -> tuple[str, ...]:
    """The seat order that puts each bot where it has sat least (first such order in rank order)."""
    return min(
        itertools.permutations(table),
        key=lambda order: sum(seat_use[(bot, position)] for position, bot in enumerate(order)),
    )
