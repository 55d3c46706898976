"""A league's matchmaker: which bots sit at the next batch of tables, in which seats.

`make_tables(candidates, seats, tables, rng)` is a pure function of the bots' ratings and
game counts and a seeded `random.Random` (the league seeds it from its run key): the same
inputs give the same tables, so a resumed league schedules what an uninterrupted one would.

Each table (Halite's matchmaker is the model):
1. its first bot is the one that most needs games: fewest games in this batch, then a
   newcomer (fewer than `NEWCOMER_GAMES` games), then the highest sigma;
2. each other seat goes, with chance `random_share`, to a bot drawn at random (so the
   whole field stays connected and a misjudged bot meets everyone), else to one of the
   `NEAR` bots whose rating (mu) is closest to the first bot's: the games whose outcome
   is least certain are the ones that teach the ratings most;
3. the seats are ordered so that each bot sits where it has sat least.
Within a batch a bot sits at a second table only once every bot sits at one, so a batch of
one table per `seats` bots gives every bot one game (a few two when the seats do not divide).

`fill="random"` fills every seat at random (step 2 with `random_share` 1): what
`bench/league.py` compares the matchmaker with.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.config.league_file import RANDOM_SHARE  # noqa: F401 - the default share, and bench/league.py reads it here
from arena.schedule.seating import seat_by_use

NEWCOMER_GAMES = 10  # below this many games a bot is a newcomer: it is seated first
NEAR = 3  # a seat not drawn at random goes to one of this many bots closest in rating
FILLS = ("matchmaker", "random")


@dataclass(frozen=True)
class Candidate:
    """A bot the matchmaker may seat: its rating and how much it has played."""

    bot: str
    mu: float
    sigma: float
    games: int  # games rated or scheduled so far
    seat_use: tuple[int, ...] = field(default=())  # games so far in each seat (seat 0 first)


def make_tables(
    candidates: Sequence[Candidate],
    seats: int,
    tables: int,
    rng: random.Random,
    *,
    random_share: float = RANDOM_SHARE,
    fill: str = "matchmaker",
) -> list[tuple[str, ...]]:
    """`tables` tables of `seats` bots each, in seat order (see the module docstring)."""
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {', '.join(FILLS)}, not {fill!r}")
    if not 0 <= random_share <= 1:
        raise ValueError(f"random_share must be between 0 and 1, got {random_share!r}")
    if len({c.bot for c in candidates}) < seats:
        raise ValueError(f"{seats} seats need at least {seats} bots, got {len(candidates)}")
    if fill == "random":
        random_share = 1.0
    pool = sorted(candidates, key=lambda c: c.bot)
    tiebreak = {c.bot: rng.random() for c in pool}  # a fair order among equals
    uses: Counter[str] = Counter()
    seat_use: Counter[tuple[str, int]] = Counter()
    for c in pool:
        for seat, count in enumerate(c.seat_use):
            seat_use[(c.bot, seat)] = count
    out = []
    for _ in range(tables):
        fewest = min(uses[c.bot] for c in pool)
        first = min(
            (c for c in pool if uses[c.bot] == fewest),
            key=lambda c: (c.games + uses[c.bot] >= NEWCOMER_GAMES, -c.sigma, c.games, tiebreak[c.bot]),
        )
        table = [first]
        while len(table) < seats:
            others = [c for c in pool if c not in table]
            least = min(uses[c.bot] for c in others)
            spread = [c for c in others if uses[c.bot] == least]  # nobody plays twice while another waits
            if rng.random() < random_share:
                table.append(spread[rng.randrange(len(spread))])
            else:
                spread.sort(key=lambda c: (abs(c.mu - first.mu), tiebreak[c.bot]))
                near = spread[:NEAR]
                table.append(near[rng.randrange(len(near))])
        for c in table:
            uses[c.bot] += 1
        seated = seat_by_use([c.bot for c in table], seat_use, rng)
        for seat, bot in enumerate(seated):
            seat_use[(bot, seat)] += 1
        out.append(seated)
    return out
