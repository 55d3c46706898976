"""Each bot's skill as TrueSkill rates it, one update (a game, or a hand or a whole deal
of a duplicate deal) at a time: the rating settings (`RatingSettings`) and `Ratings`, the
ratings that `arena.ratings.ledger.RatingLedger` feeds in schedule order.

Each update is one `rate()` in which every bot is a one-player group, lower rank better,
equal ranks a tie. It is first computed by `arena.ratings.trueskill_ffa`, the same
algorithm with plain floats and the same results to the bit; only where it hands over
does the package run. The package's built-in maths raises FloatingPointError on large
rating gaps; that update is then rated again with the mpmath backend (and, failing that,
with more digits); an update that still cannot be computed is skipped and listed, never
a crash. With `record=True` the last updates are kept, so `Ratings.posterior` can re-rate
each one knowing all the others (how sure the standings are: `arena.ratings.confidence`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import mpmath
import trueskill

from arena.errors import ArenaError
from arena.ratings import confidence as _confidence
from arena.ratings import trueskill_ffa

# Digits for the last retry when even mpmath at its default precision gives up.
FALLBACK_DIGITS = 60

# How the rotations of a duplicate deal are rated (RatingSettings.duplicate_update).
DUPLICATE_UPDATES = ("hand", "deal", "rotation")


class RatingSettingsError(ArenaError, ValueError):
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


# One update as `Ratings(record=True)` keeps it: the bots, their ranks, and what the update
# added to each bot's rating in natural parameters (precision 1/sigma^2, and mu/sigma^2).
Update = tuple[tuple[str, ...], tuple[float, ...], tuple[tuple[float, float], ...]]


class Ratings:
    """TrueSkill ratings that are updated one game (or one duplicate deal) at a time.

    With `record=True` the updates are kept (`updates`: the last `confidence.WINDOW`), so
    `posterior()` can re-rate each one knowing all the others.
    """

    def __init__(
        self,
        settings: RatingSettings | None = None,
        initial: Mapping[str, trueskill.Rating] | None = None,
        *,
        record: bool = False,
        inherit: Mapping[str, str] | None = None,
    ):
        self.settings = settings or RatingSettings()
        # A league's bots that pass their rating on (`inherited`): bot -> its lineage (the
        # bot's name). A bot of a lineage, until its first update, holds the mu of the
        # lineage's last-rated version as it stands then, with the prior's sigma.
        self.inherit: dict[str, str] = dict(inherit or {})
        self.last_rated: dict[str, str] = {}  # lineage -> its bot rated last
        self._env = self.settings.environment()
        self._mpmath_env: trueskill.TrueSkill | None = None  # built on first need
        self._ratings: dict[str, trueskill.Rating] = dict(initial or {})
        self.mpmath_updates: list[str] = []
        self.skipped_updates: list[str] = []
        # The last `confidence.WINDOW` updates (the sweep's window; older ones are folded
        # into the ratings, `posterior`), read when the ratings are made.
        self.updates: deque[Update] | None = deque(maxlen=_confidence.WINDOW) if record else None

    def copy(self) -> Ratings:
        """An independent copy (same settings and environments)."""
        twin = Ratings.__new__(Ratings)
        twin.settings, twin._env, twin._mpmath_env = self.settings, self._env, self._mpmath_env
        twin._ratings = dict(self._ratings)
        twin.mpmath_updates, twin.skipped_updates = list(self.mpmath_updates), list(self.skipped_updates)
        twin.updates = None if self.updates is None else deque(self.updates, maxlen=self.updates.maxlen)
        twin.inherit, twin.last_rated = self.inherit, dict(self.last_rated)
        return twin

    def natural(self) -> dict[str, list[float]]:
        """Each rated bot's rating in natural parameters, exactly as held ([pi, tau]: rebuilt
        from mu and sigma, a rating may differ in the last bit; a ledger's snapshot keeps these)."""
        return {bot: [rating.pi, rating.tau] for bot, rating in self._ratings.items()}

    def set_natural(self, bot: str, pi: float, tau: float) -> None:
        """Give `bot` the rating whose natural parameters are `pi` and `tau` (from `natural`)."""
        rating = trueskill.Rating(0.0, 1.0)
        rating.pi, rating.tau = pi, tau
        self._ratings[bot] = rating

    def rating(self, bot: str) -> trueskill.Rating:
        """The bot's current rating; before its first update its prior: with `inherit`, the
        mu of its lineage's last-rated version as it stands now (with the prior's sigma)."""
        rating = self._ratings.get(bot)
        if rating is not None:
            return rating
        before = self.last_rated.get(self.inherit.get(bot, ""))
        if before is not None:
            return self._env.create_rating(mu=self._ratings[before].mu)
        return self._env.create_rating()

    def update(self, bots: Sequence[str], ranks: Sequence[float], label: str = "") -> None:
        """One rate(): each bot a one-player group, lower rank better, equal ranks a tie."""
        # Checked here, because a maths failure below is caught and retried, not raised.
        if len(bots) < 2 or len(ranks) != len(bots) or len(set(bots)) != len(bots):
            raise ValueError(f"an update needs 2 or more distinct bots and one rank each, got {list(bots)} and {list(ranks)}")
        groups = [(self.rating(bot),) for bot in bots]
        # The package's own algorithm with plain floats, bit for bit (arena/ratings/trueskill_ffa.py, about
        # 10x faster); when it hands over (None), the package and its fallback run as before.
        rated = trueskill_ffa.rate(self._env, groups, ranks) or _attempt(self._env, groups, ranks)
        if rated is None:
            rated = self._rate_with_mpmath(groups, ranks, label)
            if rated is None:
                return
        for bot, (rating,) in zip(bots, rated):
            self._ratings[bot] = rating
            if bot in self.inherit:
                self.last_rated[self.inherit[bot]] = bot
        if self.updates is not None:
            added = []
            for (before,), (after,) in zip(groups, rated):
                (pi, tau), (pi_before, tau_before) = _natural(after), _natural(before)
                added.append((pi - pi_before, tau - tau_before))
            self.updates.append((tuple(bots), tuple(ranks), tuple(added)))

    def posterior(self) -> dict[str, tuple[float, float]]:
        """Each bot's skill (mu, sigma) given every recorded update, whatever their order.

        Rating in order rates an early game against the opponents' ratings as they were
        then. Here each update is rated again (expectation propagation): the bots'
        ratings without what that update added are its prior, and what it adds now
        replaces what it added before. One sweep after the pass in order: on the bench's
        Swiss and round-robin fields a second sweep moved the rank intervals' coverage by
        at most 0.002 (docs/confidence.md). The sweep re-rates the last
        `confidence.WINDOW` updates (all of them in a history that fits): an older update
        keeps what the pass in order added, folded into the bots' ratings, so the sweep
        costs the same however long a league has run. With tau > 0 a skill drifts and
        there is no one skill to find: the ratings are returned as they are. Needs `record=True`.
        """
        if self.updates is None:
            raise ValueError("these ratings keep no updates (Ratings(record=True) does)")
        natural = {bot: _natural(rating) for bot, rating in self._ratings.items()}
        if self.settings.tau == 0:
            settings, env = self.settings, self._env
            for bots, ranks, added in self.updates:
                cavities = []
                for bot, (pi_added, tau_added) in zip(bots, added):
                    pi, tau = natural[bot]
                    cavities.append((pi - pi_added, tau - tau_added))
                if any(pi <= 0 for pi, _ in cavities):
                    continue  # rounding at an extreme: keep what the pass in order found
                priors = [(tau / pi, pi**-0.5) for pi, tau in cavities]
                rated = trueskill_ffa.rate_values(settings.beta, 0.0, settings.draw_probability, priors, ranks)
                if rated is None:
                    groups = [(trueskill.Rating(mu, sigma),) for mu, sigma in priors]
                    package = _attempt(env, groups, ranks)
                    if package is None:
                        continue  # as above; the pass in order had this update rated by mpmath
                    rated = [(float(rating.mu), float(rating.sigma)) for (rating,) in package]
                for bot, (mu, sigma) in zip(bots, rated):
                    pi = sigma**-2
                    natural[bot] = (pi, mu * pi)
        return {bot: (tau / pi, pi**-0.5) for bot, (pi, tau) in natural.items()}

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


def _natural(rating: trueskill.Rating) -> tuple[float, float]:
    """A rating in natural parameters: precision 1/sigma^2 and precision-adjusted mean mu/sigma^2
    (what the package's Rating holds, as `pi` and `tau`)."""
    return float(rating.pi), float(rating.tau)


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
