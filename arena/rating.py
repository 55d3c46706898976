"""Ratings: TrueSkill over places, a pure function of results taken in schedule order.

Each game is one `rate()` in which every bot is a one-player group, ranked by place
(place 1 -> rank 0; equal places are a tie). Results are sorted by their scheduled game
key (`schedule.key_order`), never by the order they finished in, so the same tournament
gives the same ratings whatever --jobs, a cluster or a resume did.

In duplicate mode the games of one deal (every seat rotation of one table) are rated
together, so the luck of the deal cancels out. By default (`duplicate_update="hand"`)
each hand of the deal is one update: the bots that held that seat's cards, ranked by
the place each got with them, so every comparison is between bots on the same cards.
"deal" is one update per deal by each bot's total of places; "rotation" rates every
rotation as its own game. docs/performance.md has the measurements behind the default.

The package's built-in maths raises FloatingPointError on large rating gaps; that game
is then rated again with the mpmath backend (and, failing that, with more digits); an
update that still cannot be computed is skipped and listed, never a crash.

Each update is first computed by `arena.trueskill_ffa`, the same algorithm with plain
floats and the same results to the bit; only where it hands over does the package run.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import mpmath
import trueskill

from arena import trueskill_ffa
from arena.schedule import key_order

# Digits for the last retry when even mpmath at its default precision gives up.
FALLBACK_DIGITS = 60

# How the rotations of a duplicate deal are rated (RatingSettings.duplicate_update).
DUPLICATE_UPDATES = ("hand", "deal", "rotation")


class RatingSettingsError(ValueError):
    """A rating setting is out of range; the message says which and what is allowed."""


@dataclass(frozen=True)
class RatingSettings:
    """TrueSkill's settings, with defaults for fixed bots (no skill drift, rare ties)."""

    mu: float = 25.0  # a new bot's mean skill
    sigma: float = 25.0 / 3  # a new bot's uncertainty
    beta: float = 25.0 / 6  # the skill gap that gives about 76% chance to win
    # Bots do not learn between games, so their skill does not drift: tau 0 lets the
    # uncertainty keep shrinking instead of being topped up after every game.
    tau: float = 0.0
    # Near 0, but not 0: with a draw margin of exactly 0, a tie between bots of different
    # ratings has zero probability and even mpmath cannot rate it.
    draw_probability: float = 0.001
    # Duplicate deals: one update per hand (bots on the same cards compared), per deal (by
    # total of places) or per rotation. "hand" was the most accurate that still cancels a
    # deal decided by the cards alone (docs/performance.md, Tournaments).
    duplicate_update: str = "hand"

    def __post_init__(self) -> None:
        if self.duplicate_update not in DUPLICATE_UPDATES:
            raise RatingSettingsError(
                f"rating setting duplicate_update must be one of {', '.join(map(repr, DUPLICATE_UPDATES))}, "
                f"got {self.duplicate_update!r}"
            )
        for name in ("mu", "sigma", "beta", "tau", "draw_probability"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise RatingSettingsError(f"rating setting {name} must be a finite number, got {value!r}")
        for name in ("sigma", "beta"):
            if getattr(self, name) <= 0:
                raise RatingSettingsError(f"rating setting {name} must be greater than 0, got {getattr(self, name)!r}")
        if self.tau < 0:
            raise RatingSettingsError(f"rating setting tau must be 0 or more, got {self.tau!r}")
        if not 0 < self.draw_probability < 1:
            raise RatingSettingsError(
                "rating setting draw_probability must be greater than 0 and less than 1 "
                f"(ties need a draw margin), got {self.draw_probability!r}"
            )

    def environment(self, backend: str | None = None) -> trueskill.TrueSkill:
        """The trueskill environment for these settings (backend None = the package's own maths)."""
        return trueskill.TrueSkill(
            mu=self.mu,
            sigma=self.sigma,
            beta=self.beta,
            tau=self.tau,
            draw_probability=self.draw_probability,
            backend=backend,
        )


@dataclass(frozen=True)
class GameResult:
    """One finished game as the rating needs it; the runner builds these from the store.

    key: the scheduled game key (`ScheduledGame.key`); bots and places are per seat, seat
    0 first; places start at 1 and equal places are a tie; forfeits marks the seats that
    forfeited (the referee already placed them last); deal groups the rotations of one
    duplicate deal (`ScheduledGame.deal`), None when the game is its own deal.
    """

    key: str
    bots: tuple[str, ...]
    places: tuple[int, ...]
    forfeits: tuple[bool, ...] = ()
    deal: str | None = None

    def __post_init__(self) -> None:
        key_order(self.key)  # raises on a malformed key
        object.__setattr__(self, "bots", tuple(self.bots))
        object.__setattr__(self, "places", tuple(self.places))
        object.__setattr__(self, "forfeits", tuple(self.forfeits) or (False,) * len(self.bots))
        seats = len(self.bots)
        if seats < 2:
            raise ValueError(f"game {self.key}: a rated game needs at least 2 seats, got {seats}")
        if len(set(self.bots)) != seats:
            raise ValueError(f"game {self.key}: a bot sits in two seats: {self.bots}")
        if len(self.places) != seats or len(self.forfeits) != seats:
            raise ValueError(
                f"game {self.key}: {seats} seats but {len(self.places)} places and {len(self.forfeits)} forfeit flags"
            )
        if any(isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= seats for p in self.places):
            raise ValueError(f"game {self.key}: places must be whole numbers from 1 to {seats}, got {self.places}")


@dataclass(frozen=True)
class BotStanding:
    """A bot's line in the standings."""

    bot: str
    mu: float
    sigma: float
    conservative: float  # mu - 3 sigma: the skill the bot has with about 99.9% confidence
    games: int
    wins: int  # games placed first, shared first places included
    average_place: float  # 0.0 before the first game
    forfeits: int
    # Swiss points: per game (table size - place) / (table size - 1): 1 for first, 0 for
    # last, whatever the table size, so smaller Swiss tables score on the same scale.
    score: float


@dataclass(frozen=True)
class RatingTable:
    """Standings, best first, and which updates needed the fallback or were skipped."""

    standings: list[BotStanding]
    # First game key of each update (of a duplicate deal: of the deal) rated with mpmath,
    # and of each update no backend could rate.
    mpmath_updates: tuple[str, ...] = ()
    skipped_updates: tuple[str, ...] = ()


class Ratings:
    """TrueSkill ratings that are updated one game (or one duplicate deal) at a time."""

    def __init__(self, settings: RatingSettings | None = None, initial: Mapping[str, trueskill.Rating] | None = None):
        self.settings = settings or RatingSettings()
        self._env = self.settings.environment()
        self._mpmath_env: trueskill.TrueSkill | None = None  # built on first need
        self._ratings: dict[str, trueskill.Rating] = dict(initial or {})
        self.mpmath_updates: list[str] = []
        self.skipped_updates: list[str] = []

    def copy(self) -> Ratings:
        """An independent copy (same settings and environments)."""
        twin = Ratings.__new__(Ratings)
        twin.settings, twin._env, twin._mpmath_env = self.settings, self._env, self._mpmath_env
        twin._ratings = dict(self._ratings)
        twin.mpmath_updates, twin.skipped_updates = list(self.mpmath_updates), list(self.skipped_updates)
        return twin

    def rating(self, bot: str) -> trueskill.Rating:
        """The bot's current rating (a new bot's prior if it has not played)."""
        rating = self._ratings.get(bot)
        return rating if rating is not None else self._env.create_rating()

    def update(self, bots: Sequence[str], ranks: Sequence[float], label: str = "") -> None:
        """One rate(): each bot a one-player group, lower rank better, equal ranks a tie."""
        # Checked here, because a maths failure below is caught and retried, not raised.
        if len(bots) < 2 or len(ranks) != len(bots) or len(set(bots)) != len(bots):
            raise ValueError(f"an update needs 2 or more distinct bots and one rank each, got {list(bots)} and {list(ranks)}")
        groups = [(self.rating(bot),) for bot in bots]
        # The package's own algorithm with plain floats, bit for bit (arena/trueskill_ffa.py, about
        # 10x faster); when it hands over (None), the package and its fallback run as before.
        rated = trueskill_ffa.rate(self._env, groups, ranks) or _attempt(self._env, groups, ranks)
        if rated is None:
            rated = self._rate_with_mpmath(groups, ranks, label)
            if rated is None:
                return
        for bot, (rating,) in zip(bots, rated):
            self._ratings[bot] = rating

    def _rate_with_mpmath(self, groups, ranks, label):
        if self._mpmath_env is None:
            self._mpmath_env = self.settings.environment(backend="mpmath")
        self.mpmath_updates.append(label)
        rated = _attempt(self._mpmath_env, groups, ranks)
        if rated is None:
            with mpmath.workdps(FALLBACK_DIGITS):
                rated = _attempt(self._mpmath_env, groups, ranks)
        if rated is None:
            self.skipped_updates.append(label)
        return rated


def _attempt(env: trueskill.TrueSkill, groups, ranks) -> list | None:
    """env.rate(), or None when the maths fails or gives a rating that is not a number.

    FloatingPointError is the documented failure; at extreme gaps the package also ends
    in ValueError (sqrt of a negative) or other ArithmeticErrors, equally recoverable.
    """
    try:
        rated = env.rate(groups, ranks=list(ranks))
    except (ArithmeticError, ValueError):
        return None
    for (rating,) in rated:
        if not (math.isfinite(rating.mu) and math.isfinite(rating.sigma) and rating.sigma > 0):
            return None
    return rated


def competition_ranks(totals: Sequence[float]) -> list[int]:
    """Rank 0 for the lowest total; equal totals share a rank (1, 1, 3 style, from 0)."""
    return [sum(other < total for other in totals) for total in totals]


class RatingLedger:
    """Ratings and counts kept up to date as results arrive in schedule order.

    Feeding results one by one in schedule order gives exactly what `rate_results` gives
    for the same results, so a Swiss runner can read the standings between rounds without
    re-rating the whole tournament each time.
    """

    def __init__(self, settings: RatingSettings | None = None, *, duplicate: bool = False, bots: Iterable[str] = ()):
        self.ratings = Ratings(settings)
        self.duplicate = duplicate
        self._bots = set(bots)
        self._last: GameResult | None = None
        self._deal: list[GameResult] = []  # rotations of the current duplicate deal
        self._rated_deals: set[str] = set()
        self._games: dict[str, int] = defaultdict(int)
        self._wins: dict[str, int] = defaultdict(int)
        self._place_sum: dict[str, int] = defaultdict(int)
        self._forfeits: dict[str, int] = defaultdict(int)
        self._score: dict[str, float] = defaultdict(float)

    def add(self, result: GameResult) -> None:
        """Take the next result in schedule order (a repeated or earlier key is refused)."""
        if self._last is not None:
            before, now = key_order(self._last.key), key_order(result.key)
            if now == before:
                raise ValueError(f"a game is stored once; game key {result.key} appears more than once")
            if now < before:
                raise ValueError(f"results must come in schedule order: {result.key} came after {self._last.key}")
        self._last = result
        size = len(result.bots)
        for bot, place, forfeited in zip(result.bots, result.places, result.forfeits):
            self._games[bot] += 1
            self._wins[bot] += place == 1
            self._place_sum[bot] += place
            self._forfeits[bot] += forfeited
            self._score[bot] += (size - place) / (size - 1)
        if not self.duplicate:
            self.ratings.update(result.bots, [place - 1 for place in result.places], label=result.key)
            return
        deal = result.deal or result.key
        if self._deal and (self._deal[0].deal or self._deal[0].key) != deal:
            self._close_deal()
        if deal in self._rated_deals:
            raise ValueError(f"the rotations of deal {deal!r} must come one after another; {result.key} came late")
        self._deal.append(result)

    def _close_deal(self) -> None:
        _rate_deal(self.ratings, self._deal)
        self._rated_deals.add(self._deal[0].deal or self._deal[0].key)
        self._deal = []

    def table(self) -> RatingTable:
        """The standings now, best conservative rating first (a deal in progress counts as played so far)."""
        ratings = self.ratings
        if self._deal:  # rate the open deal on a copy: more rotations may still come
            ratings = ratings.copy()
            _rate_deal(ratings, self._deal)
        lines = []
        for bot in sorted(set(self._games) | self._bots):
            rating = ratings.rating(bot)
            games = self._games[bot]
            lines.append(
                BotStanding(
                    bot=bot,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    conservative=rating.mu - 3 * rating.sigma,
                    games=games,
                    wins=self._wins[bot],
                    average_place=self._place_sum[bot] / games if games else 0.0,
                    forfeits=self._forfeits[bot],
                    score=self._score[bot],
                )
            )
        lines.sort(key=lambda line: (-line.conservative, -line.mu, line.bot))
        return RatingTable(lines, tuple(ratings.mpmath_updates), tuple(ratings.skipped_updates))


def rate_results(
    results: Iterable[GameResult],
    settings: RatingSettings | None = None,
    *,
    duplicate: bool = False,
    bots: Iterable[str] = (),
) -> RatingTable:
    """Rate results in schedule order and build the standings (best conservative rating first).

    `bots` lists bots to show even before their first game (a Swiss round 1 needs them).
    """
    ledger = RatingLedger(settings, duplicate=duplicate, bots=bots)
    for result in sorted(results, key=lambda result: key_order(result.key)):
        ledger.add(result)
    return ledger.table()


def standings(
    results: Iterable[GameResult],
    settings: RatingSettings | None = None,
    *,
    duplicate: bool = False,
    bots: Iterable[str] = (),
) -> list[BotStanding]:
    """The standings alone (see `rate_results`)."""
    return rate_results(results, settings, duplicate=duplicate, bots=bots).standings


def _rate_deal(ratings: Ratings, games: list[GameResult]) -> None:
    """Rate the rotations of one duplicate deal as `ratings.settings.duplicate_update` says."""
    table = sorted(games[0].bots)
    for game in games[1:]:
        if sorted(game.bots) != table:
            raise ValueError(
                f"games {games[0].key} and {game.key} share deal {game.deal!r} but not the same bots: "
                f"{sorted(games[0].bots)} vs {sorted(game.bots)}"
            )
    how = ratings.settings.duplicate_update
    label = games[0].key
    if how == "rotation":
        for game in games:
            ratings.update(game.bots, [place - 1 for place in game.places], label=game.key)
        return
    if how == "hand":
        # Seat s holds the same cards in every rotation: rank its holders by their places.
        # A hand held by one bot so far (an unfinished deal) compares nobody yet.
        for seat in range(len(games[0].bots)):
            holders = [game.bots[seat] for game in games]
            if len(holders) >= 2:
                places = [game.places[seat] for game in games]
                ratings.update(holders, competition_ranks(places), label=label)
        return
    totals: dict[str, int] = defaultdict(int)
    for game in games:
        for bot, place in zip(game.bots, game.places):
            totals[bot] += place
    bots = list(games[0].bots)
    ratings.update(bots, competition_ranks([totals[bot] for bot in bots]), label=label)
