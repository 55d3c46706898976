"""How sure the standings are: each bot's 90% rank interval, which bots are separated, and
the chance that one bot places ahead of another.

Fed only by the rating's results: each bot's skill (mu, sigma) given all the games, from
`rating.Ratings.posterior` (`RatingLedger.confidence()` builds a `Confidence`).
- Rank intervals: skills are drawn from each bot's N(mu, sigma^2), the field is ranked
  in every draw, and a bot's interval runs from the 5th to the 95th percentile of its
  place (`rank_intervals`). A fixed seed makes it a pure function of the skills, so a
  re-render of the site is identical.
- Two bots are separated when their intervals do not overlap; `Confidence.groups` cuts
  an ordered standings list into groups of bots not separated from their neighbours (a
  cut only where everyone above is separated from everyone below).
- `ahead_probability`: TrueSkill's chance that A places ahead of B at a table of any size.
docs/confidence.md says why this method; bench/confidence.py measures it on bots of
known strength.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LEVEL = 0.9  # the rank intervals' coverage (the bands the standings show)
# Draws of the whole field. The interval's ends are the places where 5% of the draws lie
# beyond; with 2,000 draws that share is known to about half a percentage point.
SAMPLES = 2000
SEED = "arena rank intervals"
# A bot is settled when its SETTLE_LEVEL rank interval spans at most SETTLED_SPAN places,
# and at most a third of the field (at least 2), so that in a small field "settled" still
# says something (a league shows it; bench/league.py measures how soon newcomers get there
# and how often their interval holds their true place then). The test is made at a higher
# level than the bands shown: "settled" is the first moment a band is narrow enough, and
# the first narrow reading of a band that wavers by a place from batch to batch is more
# often a lucky one than a band read at a moment chosen otherwise (docs/performance.md,
# League, has the measurements).
SETTLE_LEVEL = 0.95
SETTLED_SPAN = 7
# The posterior's sweep re-rates at most the last WINDOW updates (a game, or a duplicate
# deal's hand), so that a league's confidence after a batch costs the same at 10k games as
# at 1M (issue 27). Older updates are folded into the bots' priors: they keep what the pass
# in order added, and only the window is re-rated knowing all the others. A history that
# fits in the window (every tournament and league of up to WINDOW updates) gives exactly
# the numbers of a sweep over every update. docs/confidence.md has its calibration.
# bench/league.py and bench/confidence.py take `--window` to measure smaller ones.
WINDOW = 10_000
# Bump when the intervals' method changes: the site's cache keeps them (results.rate_cached).
METHOD = 2

Skill = tuple[float, float]  # (mu, sigma)


@dataclass(frozen=True)
class RankInterval:
    """The places a bot could hold (90%): `low` (its best place) to `high`, 1 = first."""

    low: int
    high: int

    def __str__(self) -> str:
        return f"{self.low}–{self.high}"

    @property
    def span(self) -> int:
        """How many places the interval covers."""
        return self.high - self.low + 1


def rank_intervals(
    skills: Mapping[str, Skill], *, level: float = LEVEL, samples: int = SAMPLES
) -> dict[str, RankInterval]:
    """Each bot's `level` rank interval, from ranking `samples` draws of the field's skills."""
    return rank_interval_levels(skills, (level,), samples=samples)[level]


def rank_interval_levels(
    skills: Mapping[str, Skill], levels: Sequence[float], *, samples: int = SAMPLES
) -> dict[float, dict[str, RankInterval]]:
    """`rank_intervals` at each of `levels`, from one set of draws."""
    for level in levels:
        if not 0 < level < 1:
            raise ValueError(f"level must be between 0 and 1, got {level!r}")
    bots = sorted(skills)
    count = len(bots)
    gauss = random.Random(SEED).gauss
    params = [skills[bot] for bot in bots]
    indices = range(count)
    tally = [[0] * count for _ in indices]  # bot index -> place - 1 -> draws
    for _ in range(samples):
        draw = [gauss(mu, sigma) for mu, sigma in params]
        for place, index in enumerate(sorted(indices, key=draw.__getitem__, reverse=True)):
            tally[index][place] += 1
    return {level: intervals_of_tally(bots, tally, level, samples) for level in levels}


def intervals_of_tally(
    bots: Sequence[str], tally: Sequence[Sequence[int]], level: float, samples: int
) -> dict[str, RankInterval]:
    """The `level` rank intervals of a tally (bot -> draws that put it at each place)."""
    # An end is the first place (from either side) reached by more than the tail's share
    # of the draws: at most that share lies beyond each end, at least `level` within.
    beyond = math.floor((1 - level) / 2 * samples) + 1
    count = len(bots)
    return {
        bot: RankInterval(_first_reaching(places, beyond) + 1, count - _first_reaching(list(places)[::-1], beyond))
        for bot, places in zip(bots, tally)
    }


def _first_reaching(counts: Sequence[int], total: int) -> int:
    """The first index at which the running sum of `counts` reaches `total`."""
    running = 0
    for index, value in enumerate(counts):
        running += value
        if running >= total:
            return index
    return len(counts) - 1


def settled_span(bots: int) -> int:
    """The widest rank interval that counts as settled in a field of `bots` bots."""
    return min(SETTLED_SPAN, max(2, bots // 3))


def separated(a: RankInterval, b: RankInterval) -> bool:
    """True when two rank intervals do not overlap: the order of the two bots is known."""
    return a.high < b.low or b.high < a.low


def rank_groups(order: Sequence[str], intervals: Mapping[str, RankInterval]) -> list[int]:
    """For bots in the order shown, each one's group (0, 1, ...): a new group starts only
    where every bot above is separated from every bot below."""
    best_below = [0] * len(order)  # the lowest `low` of the bot at each row and every bot below
    best = math.inf
    for at in range(len(order) - 1, -1, -1):
        best = min(best, intervals[order[at]].low)
        best_below[at] = best
    groups = []
    group = 0
    worst_above = 0  # the highest `high` of the bots above
    for at, bot in enumerate(order):
        if at and worst_above < best_below[at]:
            group += 1
        groups.append(group)
        worst_above = max(worst_above, intervals[bot].high)
    return groups


def ahead_probability(a: Skill, b: Skill, beta: float) -> float:
    """TrueSkill's chance that A places ahead of B when they share a table of any size.

    Each seat's performance is its skill plus N(0, beta^2) noise and places follow
    performances, so A is ahead of B exactly when A's performance is higher, at two seats
    or six: Phi((mu_A - mu_B) / sqrt(2 beta^2 + sigma_A^2 + sigma_B^2)).
    """
    (mu_a, sigma_a), (mu_b, sigma_b) = a, b
    spread = math.sqrt(2 * beta * beta + sigma_a * sigma_a + sigma_b * sigma_b)
    return 0.5 * math.erfc(-(mu_a - mu_b) / (spread * math.sqrt(2)))


@dataclass(frozen=True)
class Confidence:
    """How sure a tournament's standings are (`rating.RatingLedger.confidence()`)."""

    skills: dict[str, Skill]  # each bot's skill given all the games: (mu, sigma)
    intervals: dict[str, RankInterval]  # at LEVEL: the bands shown
    beta: float  # the rating's performance noise, for `ahead`
    settle_intervals: dict[str, RankInterval]  # at SETTLE_LEVEL: what `settled` looks at

    @classmethod
    def of(cls, skills: Mapping[str, Skill], beta: float) -> Confidence:
        """The rank intervals of these skills."""
        both = rank_interval_levels(skills, (LEVEL, SETTLE_LEVEL))
        return cls(dict(skills), both[LEVEL], beta, both[SETTLE_LEVEL])

    def separated(self, a: str, b: str) -> bool:
        """True when bots a and b have rank intervals that do not overlap."""
        return separated(self.intervals[a], self.intervals[b])

    def groups(self, order: Sequence[str]) -> list[int]:
        """The group of each bot in the order shown (see `rank_groups`)."""
        return rank_groups(order, self.intervals)

    def settled(self, bot: str) -> bool:
        """True when the bot's SETTLE_LEVEL rank interval spans at most `settled_span` places."""
        return self.settle_intervals[bot].span <= settled_span(len(self.intervals))

    def ahead(self, a: str, b: str) -> float:
        """The chance that bot a places ahead of bot b at a table (see `ahead_probability`)."""
        return ahead_probability(self.skills[a], self.skills[b], self.beta)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (the site's cache keeps it)."""
        return {
            "method": METHOD,
            "beta": self.beta,
            "skills": {bot: list(skill) for bot, skill in self.skills.items()},
            "intervals": {bot: [interval.low, interval.high] for bot, interval in self.intervals.items()},
            "settle_intervals": {bot: [i.low, i.high] for bot, i in self.settle_intervals.items()},
        }

    @classmethod
    def from_json(cls, state: Mapping[str, Any]) -> Confidence:
        """Back from `to_json`; ValueError when it was made by another method."""
        if state.get("method") != METHOD:
            raise ValueError("rank intervals made by another method")
        return cls(
            {bot: (mu, sigma) for bot, (mu, sigma) in state["skills"].items()},
            {bot: RankInterval(low, high) for bot, (low, high) in state["intervals"].items()},
            state["beta"],
            {bot: RankInterval(low, high) for bot, (low, high) in state["settle_intervals"].items()},
        )
