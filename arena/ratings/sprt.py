"""Is one bot better than another? The sequential probability ratio test on paired games
(`arena match A B --sprt ELO0 ELO1`), as fastchess computes it. Pure functions, standard
library only.

Pairs. A 2-seat card game has places, not results: place 1 is a win (1 point), a shared
place a draw (0.5), last a loss (0), always from the first bot's (A's) side. Each deal is
played twice with the seats swapped (a pair); the pair's score is the sum of its two games'
points, 0, 0.5, 1, 1.5 or 2, and the pentanomial counts are how many pairs fell in each of
those five buckets, written like fastchess's `Ptnml(0-2)`: [LL, LD, WL+DD, WD, WW]. Pairing
cancels most of the luck of the deal: a pair is scored as one observation, so a deal that
wins from either seat counts as the draw it is.

The Elo model is the logistic one (fastchess's and cutechess's "Elo"): an expected score s
per game is `1 / (1 + 10 ** (-elo / 400))`, and a pair's normalized score (its score / 2)
has the same expectation.

The test is the generalized SPRT (GSPRT) of fastchess's "logistic" model (Michel Van den
Bergh, "Comparing the approximations for the generalized log likelihood ratio of a
multinomial distribution", Proposition 1.1): the log-likelihood ratio of the observed
counts between the most likely pentanomial distribution whose mean is s1 = score(elo1)
and the most likely one whose mean is s0 = score(elo0). For a mean s that distribution is
p_i = q_i / (1 + theta * (a_i - s)), where q_i is the observed frequency of bucket i, a_i
its normalized score (0, 1/4, 1/2, 3/4, 1) and theta the root of
sum_i q_i (a_i - s) / (1 + theta (a_i - s)) = 0. Then LLR = N * sum_i q_i log(p1_i / p0_i).
To first order it is N (s1 - s0) (2 mean - s0 - s1) / (2 variance), the normal
approximation of older tools. As in fastchess, an empty bucket counts as 0.001 pairs in
the LLR (and only there), so the maximum-likelihood distributions stay defined.

The test stops when the LLR reaches log(beta / (1 - alpha)) (H0 accepted: the difference
is at most elo0, up to error beta) or log((1 - beta) / alpha) (H1 accepted: at least
elo1, up to error alpha).

The Elo estimate is fastchess's for pentanomial statistics: mean m and variance v of the
normalized pair scores (v over N, not N - 1), the 95% interval m +- 1.959964 sqrt(v / N)
turned into Elo at both ends, and the likelihood of superiority
LOS = (1 - erf(-(m - 1/2) / sqrt(2 v / N))) / 2, the probability that A is stronger.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.errors import ArenaError

PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)  # a pair's score, by bucket
NORMALIZED = (0.0, 0.25, 0.5, 0.75, 1.0)  # the same per game: a pair's score / 2
EMPTY_BUCKET = 1e-3  # pairs an empty bucket counts as in the LLR (fastchess's regularization)
Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval
MIN_PAIRS = 2  # pairs below which there is no variance to build an interval from
MAX_ELO = 1000  # the largest Elo bound (a 99.7% score); beyond it the scores round to 0 or 1
DEFAULT_GAMES = 20_000  # the most games of `arena match --sprt` unless --games says otherwise


class SprtError(ArenaError, ValueError):
    """An SPRT asked for with settings that cannot work (the message says what is allowed)."""


@dataclass(frozen=True)
class SprtSettings:
    """The two hypotheses (Elo differences of A over B) and the error rates allowed."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not all(-MAX_ELO <= value <= MAX_ELO for value in (self.elo0, self.elo1)):
            raise SprtError(
                f"--sprt {self.elo0:g} {self.elo1:g}: both Elo bounds must be between {-MAX_ELO} and {MAX_ELO}"
            )
        if self.elo0 >= self.elo1:
            raise SprtError(
                f"--sprt {self.elo0:g} {self.elo1:g}: ELO0 must be less than ELO1 "
                "(H0: the first bot is at most ELO0 Elo stronger than the second; H1: at least ELO1)"
            )
        for flag, value in (("--alpha", self.alpha), ("--beta", self.beta)):
            if not 0 < value < 0.5:
                raise SprtError(f"{flag} {value:g}: must be between 0 and 0.5 (exclusive), e.g. 0.05")

    @property
    def bounds(self) -> tuple[float, float]:
        """The LLR bounds (accept H0 at or below the first, H1 at or above the second)."""
        return llr_bounds(self.alpha, self.beta)


@dataclass(frozen=True)
class SprtStatus:
    """Where the test stands: its LLR, bounds and decision ("H0", "H1" or None to go on)."""

    pairs: int
    llr: float
    lower: float
    upper: float
    decision: str | None

    @property
    def fraction(self) -> float:
        """How far the LLR has gone towards the bound it is heading for (1.0 = reached)."""
        return self.llr / self.upper if self.llr >= 0 else self.llr / self.lower


@dataclass(frozen=True)
class EloEstimate:
    """The Elo difference of A over B from the pairs so far, its 95% interval and the LOS.

    A figure that cannot be estimated is None and `note` says why: too few pairs, every
    pair the same, or an end of the interval beyond a 0% or 100% score (unbounded)."""

    pairs: int
    score: float | None  # mean points per game of A
    variance: float | None  # of the normalized pair score, per pair
    elo: float | None
    lower: float | None
    upper: float | None
    los: float | None
    note: str | None = None

    @property
    def error(self) -> float | None:
        """Half the interval's width: fastchess's "+/-"."""
        if self.lower is None or self.upper is None:
            return None
        return (self.upper - self.lower) / 2


def game_points(places: Sequence[int], seat: int) -> float:
    """The points of the bot in `seat` in a 2-seat game: 1 for a win, 0.5 for a shared place, 0 for a loss."""
    if len(places) != 2:
        raise SprtError(f"the SPRT compares two bots: a game with {len(places)} seats has no win, draw or loss")
    mine, theirs = places[seat], places[1 - seat]
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def pair_bucket(pair_score: float) -> int:
    """The pentanomial bucket (0..4) of a pair that scored `pair_score` (its two games' points summed)."""
    bucket = round(2 * pair_score)
    if bucket not in range(5) or 2 * pair_score != bucket:
        raise SprtError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points (two games of 0, 0.5 or 1), not {pair_score!r}")
    return bucket


def pentanomial(pair_scores: Iterable[float]) -> tuple[int, int, int, int, int]:
    """The counts [LL, LD, WL+DD, WD, WW] of pairs scoring 0, 0.5, 1, 1.5 and 2."""
    counts = [0] * 5
    for score in pair_scores:
        counts[pair_bucket(score)] += 1
    return (counts[0], counts[1], counts[2], counts[3], counts[4])


def elo_to_score(elo: float) -> float:
    """The expected score per game of a player `elo` stronger (logistic Elo)."""
    return 1 / (1 + 10 ** (-elo / 400))


def score_to_elo(score: float) -> float:
    """The logistic Elo difference of an expected score per game, 0 < score < 1."""
    return 400 * math.log10(score / (1 - score))


def llr_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """The SPRT's bounds: (log(beta / (1 - alpha)), log((1 - beta) / alpha))."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def _mle_theta(frequencies: Sequence[float], s: float) -> float:
    """The root theta of sum_i q_i (a_i - s) / (1 + theta (a_i - s)) = 0 (Newton inside its bracket).

    The left side falls from +inf to -inf as theta runs over (-1 / (1 - s), 1 / s), the
    values where 1 + theta (a_i - s) stays positive for every bucket."""
    low, high = -1 / (NORMALIZED[-1] - s), -1 / (NORMALIZED[0] - s)
    theta = 0.0
    for _ in range(200):
        value = slope = 0.0
        for q, a in zip(frequencies, NORMALIZED):
            term = (a - s) / (1 + theta * (a - s))
            value += q * term
            slope -= q * term * term
        if value == 0:
            return theta
        if value > 0:
            low = theta
        else:
            high = theta
        step = theta - value / slope
        if not low < step < high:
            step = (low + high) / 2
        if abs(step - theta) <= 1e-15 * max(1.0, abs(theta)):
            return step
        theta = step
    return theta


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of H1 (elo1) over H0 (elo0) for pentanomial `counts`; 0.0 for no pairs."""
    if len(counts) != 5 or any(count < 0 for count in counts):
        raise SprtError(f"pentanomial counts are five counts of at least 0, not {list(counts)}")
    if sum(counts) == 0:
        return 0.0
    regularized = [count if count > 0 else EMPTY_BUCKET for count in counts]
    total = sum(regularized)
    frequencies = [count / total for count in regularized]
    ratio = 0.0
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    theta0, theta1 = _mle_theta(frequencies, s0), _mle_theta(frequencies, s1)
    for q, a in zip(frequencies, NORMALIZED):
        # log(p1 / p0) with p = q / (1 + theta (a - s)): the q cancels.
        ratio += q * (math.log1p(theta0 * (a - s0)) - math.log1p(theta1 * (a - s1)))
    return total * ratio


def sprt_status(counts: Sequence[int], settings: SprtSettings) -> SprtStatus:
    """The LLR of `counts` against the settings' bounds, and the decision if a bound is reached."""
    value = llr(counts, settings.elo0, settings.elo1)
    lower, upper = settings.bounds
    decision = "H1" if value >= upper else "H0" if value <= lower else None
    return SprtStatus(pairs=sum(counts), llr=value, lower=lower, upper=upper, decision=decision)


def elo_estimate(counts: Sequence[int]) -> EloEstimate:
    """The Elo difference of A over B, its 95% interval and the LOS from pentanomial `counts`."""
    if len(counts) != 5 or any(count < 0 for count in counts):
        raise SprtError(f"pentanomial counts are five counts of at least 0, not {list(counts)}")
    pairs = sum(counts)
    if pairs < MIN_PAIRS:
        return EloEstimate(
            pairs, None, None, None, None, None, None,
            note=f"not enough pairs: {pairs} played, an interval needs at least {MIN_PAIRS}",
        )
    score = sum(count * a for count, a in zip(counts, NORMALIZED)) / pairs
    variance = sum(count * (a - score) ** 2 for count, a in zip(counts, NORMALIZED)) / pairs
    if score <= 0 or score >= 1:
        winner = "second" if score <= 0 else "first"
        return EloEstimate(
            pairs, score, variance, None, None, None, None,
            note=f"the {winner} bot won every game: the Elo difference is unbounded",
        )
    elo = score_to_elo(score)
    if variance <= 0:
        return EloEstimate(
            pairs, score, variance, elo, None, None, None,
            note=f"every pair scored {2 * score:g} of 2: no spread to build an interval from",
        )
    spread = math.sqrt(variance / pairs)
    low_score, high_score = score - Z95 * spread, score + Z95 * spread
    lower = score_to_elo(low_score) if low_score > 0 else None
    upper = score_to_elo(high_score) if high_score < 1 else None
    los = (1 - math.erf(-(score - 0.5) / math.sqrt(2 * variance / pairs))) / 2
    note = None
    if lower is None or upper is None:
        note = "the interval reaches a " + ("0%" if lower is None else "100%") + " score: that end is unbounded"
    return EloEstimate(pairs, score, variance, elo, lower, upper, los, note=note)


class SprtTally:
    """The test run on a match's games as they finish (`arena match --sprt`): the first bot's
    games counted as placed ahead, first together, last together or behind, and each pair
    (one deal from both seats) added to the pentanomial counts, the test re-run after it."""

    def __init__(self, settings: SprtSettings):
        self.settings = settings
        self.counts = [0, 0, 0, 0, 0]
        self.first: str | None = None  # the first bot's name: the match's first game seats it at seat 0
        self.pending: float | None = None  # its points in the first game of a pair not yet complete
        self.outcomes = {"ahead": 0, "shared first": 0, "shared last": 0, "behind": 0}
        self.status = sprt_status(self.counts, settings)

    def add(self, seats: Sequence[str], places: Sequence[int]) -> bool:
        """Score a finished game (its bots by seat, their places); True when it completed a
        pair, and so `status` is new."""
        if self.first is None:
            self.first = seats[0]
        seat = list(seats).index(self.first)
        points = game_points(places, seat)
        mine, theirs = places[seat], places[1 - seat]
        shared = "shared first" if mine == 1 else "shared last"
        self.outcomes["ahead" if mine < theirs else "behind" if mine > theirs else shared] += 1
        if self.pending is None:
            self.pending = points
            return False
        self.counts[pair_bucket(self.pending + points)] += 1
        self.pending = None
        self.status = sprt_status(self.counts, self.settings)
        return True

    @property
    def decided(self) -> bool:
        """True once a complete pair has taken the LLR to a bound (the match stops there)."""
        return self.status.decision is not None and self.pending is None

    @property
    def wins(self) -> int:
        """The first bot's games placed first, shared firsts counted (arena.ratings.ledger.WINS_MEANS)."""
        return self.outcomes["ahead"] + self.outcomes["shared first"]

    @property
    def points(self) -> float:
        """The first bot's points: 1 a game placed ahead, 1/2 a shared place."""
        return self.outcomes["ahead"] + (self.outcomes["shared first"] + self.outcomes["shared last"]) / 2
