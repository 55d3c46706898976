"""TrueSkill for free-for-all games (every player a one-player team) with plain floats.

`rate(env, rating_groups, ranks)` is a drop-in for the `trueskill` package's
`env.rate(rating_groups, ranks=ranks)` when every group holds one player and the env uses
the package's own maths (backend None, a fixed draw probability). It runs the package's
algorithm step for step -- the same factor graph messages in the same order (priors with
tau, performances with beta, one-player team sums, the team-difference layer swept
forward then back until the truncation delta is <= min_delta or 10 sweeps, then the
messages back up), the same draw margin, the same v/w functions for wins and draws, the
package's own erfc approximation for cdf and pdf -- with the same float operations in
the same order, so the results are bit for bit the package's (the tests check `==`).
It only drops the package's objects (Variable, Factor, Gaussian, dicts of messages),
which cost about 0.5 ms per four-seat game.

Wherever the package would raise (its FloatingPointError from w, a ValueError from a
square root of a negative, a ZeroDivisionError, an OverflowError from `**`) the same
operation raises here, and `rate` returns None instead; it also returns None for any
rating that is not finite or has no positive sigma. The caller then hands the update to
the package and its mpmath fallback, so behaviour is unchanged.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import trueskill

MIN_DELTA = trueskill.DELTA  # the package's default min_delta for rate()
SWEEPS = 10  # the package's cap on sweeps over the team-difference layer

_INF = float("inf")
_SQRT2 = 1 * math.sqrt(2)  # cdf's sigma * sqrt(2) with sigma 1
_PDF_SCALE = 1 / math.sqrt(2 * math.pi) * abs(1)  # pdf's factor with sigma 1


def erfc(x: float) -> float:
    """The package's erfc approximation (trueskill.backends.erfc), not math.erfc: same bits."""
    z = abs(x)
    t = 1.0 / (1.0 + z / 2.0)
    r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))
    )))))  # fmt: skip
    return 2.0 - r if x < 0 else r


def cdf(x: float) -> float:
    """Standard normal cdf as the package's default backend computes it."""
    return 0.5 * erfc(-(x - 0) / _SQRT2)


def pdf(x: float) -> float:
    """Standard normal pdf as the package's default backend computes it (`**` may overflow, as there)."""
    return _PDF_SCALE * math.exp(-((x - 0) ** 2 / 2))


@functools.lru_cache(maxsize=32)
def draw_margin(beta: float, draw_probability: float) -> float:
    """The package's draw margin between two one-player teams (calc_draw_margin, size 2)."""
    env = trueskill.TrueSkill(beta=beta, draw_probability=draw_probability)
    return trueskill.calc_draw_margin(draw_probability, 2, env)


def _draw(diff: float, m: float) -> tuple[float, float]:
    """v_draw and w_draw of the package for a tie (raises where w_draw raises)."""
    abs_diff = abs(diff)
    a, b = m - abs_diff, -m - abs_diff
    denom = cdf(a) - cdf(b)
    pdf_a, pdf_b = pdf(a), pdf(b)
    numer = pdf_b - pdf_a
    v = ((numer / denom) if denom else a) * (-1 if diff < 0 else +1)
    if not denom:
        raise FloatingPointError("a draw outside the package's float range")
    return v, (numer / denom) ** 2 + (a * pdf_a - b * pdf_b) / denom


def _rate_sorted(ratings: Sequence[trueskill.Rating], ties: Sequence[bool], beta: float, tau: float, margin: float):
    """The package's run_schedule for ratings sorted best first; returns [(mu, sigma)] in that order.

    Written out with few helper calls, because calls dominate the cost in Python.
    Each block names the factor method it mirrors; `x if p else INF` stands for the
    package's ZeroDivisionError catch, `q / p if p else p` for Gaussian.mu.
    """
    sqrt, INF = math.sqrt, _INF  # local names: faster in the loop
    n = len(ratings)
    variance = beta**2
    prior_pi, prior_tau = [], []  # rating variables after PriorFactor.down (tau applied)
    perf_pi, perf_tau = [], []  # performance variables = LikelihoodFactor.down's message
    team_pi, team_tau = [], []  # team performance variables
    for rating in ratings:
        # PriorFactor.down
        sigma = sqrt(rating.sigma**2 + tau**2)
        if sigma == 0:
            raise ValueError("sigma**2 should be greater than 0")
        pi = sigma**-2
        mu = rating.mu
        prior_pi.append(pi)
        prior_tau.append(pi * mu)
        # LikelihoodFactor.down
        a = 1.0 / (1.0 + variance * pi)
        f_pi, f_tau = a * pi, a * (pi * mu)
        perf_pi.append(f_pi)
        perf_tau.append(f_tau)
        # SumFactor.down of a one-player team
        mu = 0 + 1 * (f_tau / f_pi if f_pi else f_pi)
        t_pi = 1.0 / (0 + 1 / f_pi if f_pi else INF)
        team_pi.append(t_pi)
        team_tau.append(t_pi * mu)
    team_msg_pi, team_msg_tau = team_pi[:], team_tau[:]  # that sum's message to its team variable

    pairs = n - 1
    diff_pi, diff_tau = [0.0] * pairs, [0.0] * pairs  # team difference variables
    sum_pi, sum_tau = [0.0] * pairs, [0.0] * pairs  # message difference factor k -> difference k
    trunc_pi, trunc_tau = [0.0] * pairs, [0.0] * pairs  # message truncation k -> difference k
    left_pi, left_tau = [0.0] * pairs, [0.0] * pairs  # message difference factor k -> team k
    right_pi, right_tau = [0.0] * pairs, [0.0] * pairs  # message difference factor k -> team k+1
    # One sweep: forward with SumFactor.up(1), then back with up(0); two teams: no up.
    messages = (team_pi, team_tau, left_pi, left_tau, right_pi, right_tau, diff_pi, diff_tau, sum_pi, sum_tau)
    sweep = [(0, None)]
    if pairs > 1:
        sweep = [(k, True) for k in range(pairs - 1)] + [(k, False) for k in range(pairs - 1, 0, -1)]

    for _ in range(SWEEPS):
        delta = 0
        for k, to_right in sweep:
            # SumFactor.down: team k - team k+1 -> difference k
            p1, q1 = team_pi[k] - left_pi[k], team_tau[k] - left_tau[k]
            p2, q2 = team_pi[k + 1] - right_pi[k], team_tau[k + 1] - right_tau[k]
            mu = 0 + 1 * (q1 / p1 if p1 else p1)
            pi_inv = 0 + 1 / p1 if p1 else INF
            mu += -1 * (q2 / p2 if p2 else p2)
            if pi_inv != INF:
                pi_inv = pi_inv + 1 / p2 if p2 else INF
            pi = 1.0 / pi_inv
            t = pi * mu
            d_pi = (diff_pi[k] - sum_pi[k]) + pi
            d_tau = (diff_tau[k] - sum_tau[k]) + t
            sum_pi[k], sum_tau[k] = pi, t
            # TruncateFactor.up
            c_pi, c_tau = d_pi - trunc_pi[k], d_tau - trunc_tau[k]
            sqrt_pi = sqrt(c_pi)
            diff, m = c_tau / sqrt_pi, margin * sqrt_pi
            if ties[k]:
                v, w = _draw(diff, m)
            else:  # v_win, w_win
                x = diff - m
                denom = cdf(x)
                v = (pdf(x) / denom) if denom else -x
                w = v * (v + x)
                if not 0 < w < 1:
                    raise FloatingPointError("a win outside the package's float range")
            pi, t = c_pi / (1.0 - w), (c_tau + sqrt_pi * v) / (1.0 - w)
            trunc_pi[k] = (pi + trunc_pi[k]) - d_pi
            trunc_tau[k] = (t + trunc_tau[k]) - d_tau
            diff_pi[k], diff_tau[k] = pi, t
            # Variable.delta, then the sweep's max (a nan never wins, as in max())
            pi_delta = abs(d_pi - pi)
            moved = 0.0 if pi_delta == INF else max(abs(d_tau - t), sqrt(pi_delta))
            if to_right is None:
                delta = moved  # two teams: the package takes the delta as it is
                break
            delta = max(delta, moved)
            if to_right:
                _up_right(k, messages)
            else:
                _up_left(k, messages)
        if delta <= MIN_DELTA:
            break
    _up_left(0, messages)
    _up_right(pairs - 1, messages)

    rated = []
    for i in range(n):
        # SumFactor.up of the one-player team, to the performance variable
        p, q = team_pi[i] - team_msg_pi[i], team_tau[i] - team_msg_tau[i]
        mu = 0 + 1.0 * (q / p if p else p)
        pi = 1.0 / (0 + 1.0 / p if p else INF)
        p_pi, p_tau = (perf_pi[i] - 0) + pi, (perf_tau[i] - 0) + pi * mu
        # LikelihoodFactor.up, to the rating variable
        msg_pi, msg_tau = p_pi - perf_pi[i], p_tau - perf_tau[i]
        a = 1.0 / (1.0 + variance * msg_pi)
        r_pi, r_tau = (prior_pi[i] - 0) + a * msg_pi, (prior_tau[i] - 0) + a * msg_tau
        rated.append((r_tau / r_pi if r_pi else r_pi, sqrt(1 / r_pi) if r_pi else INF))
    return rated


def _up_right(k: int, messages: tuple) -> None:
    """SumFactor.up(1) of difference factor k: team k - difference k -> team k+1."""
    team_pi, team_tau, left_pi, left_tau, right_pi, right_tau, diff_pi, diff_tau, sum_pi, sum_tau = messages
    p1, q1 = team_pi[k] - left_pi[k], team_tau[k] - left_tau[k]
    p2, q2 = diff_pi[k] - sum_pi[k], diff_tau[k] - sum_tau[k]
    mu = 0 + 1.0 * (q1 / p1 if p1 else p1)
    pi_inv = 0 + 1 / p1 if p1 else _INF
    mu += -1.0 * (q2 / p2 if p2 else p2)
    if pi_inv != _INF:
        pi_inv = pi_inv + 1 / p2 if p2 else _INF
    pi = 1.0 / pi_inv
    t = pi * mu
    team_pi[k + 1] = (team_pi[k + 1] - right_pi[k]) + pi
    team_tau[k + 1] = (team_tau[k + 1] - right_tau[k]) + t
    right_pi[k], right_tau[k] = pi, t


def _up_left(k: int, messages: tuple) -> None:
    """SumFactor.up(0) of difference factor k: difference k + team k+1 -> team k."""
    team_pi, team_tau, left_pi, left_tau, right_pi, right_tau, diff_pi, diff_tau, sum_pi, sum_tau = messages
    p1, q1 = diff_pi[k] - sum_pi[k], diff_tau[k] - sum_tau[k]
    p2, q2 = team_pi[k + 1] - right_pi[k], team_tau[k + 1] - right_tau[k]
    mu = 0 + 1.0 * (q1 / p1 if p1 else p1)
    pi_inv = 0 + 1 / p1 if p1 else _INF
    mu += 1.0 * (q2 / p2 if p2 else p2)
    if pi_inv != _INF:
        pi_inv = pi_inv + 1 / p2 if p2 else _INF
    pi = 1.0 / pi_inv
    t = pi * mu
    team_pi[k] = (team_pi[k] - left_pi[k]) + pi
    team_tau[k] = (team_tau[k] - left_tau[k]) + t
    left_pi[k], left_tau[k] = pi, t


def rate(env: trueskill.TrueSkill, rating_groups: Sequence[Sequence[trueskill.Rating]], ranks: Sequence[float]):
    """env.rate(rating_groups, ranks=ranks) for one-player groups, or None: then ask the package.

    None means the package would raise, a rating came out not finite (or sigma not
    positive), or the case is not this one (a group of another size, another backend, a
    draw probability that is a function).
    """
    if env.backend is not None or callable(env.draw_probability):
        return None
    n = len(rating_groups)
    if n < 2 or len(ranks) != n or any(len(group) != 1 for group in rating_groups):
        return None
    order = sorted(range(n), key=ranks.__getitem__)  # stable, as the package's sort
    ties = [ranks[order[k]] == ranks[order[k + 1]] for k in range(n - 1)]
    try:
        margin = draw_margin(env.beta, env.draw_probability)
        rated = _rate_sorted([rating_groups[i][0] for i in order], ties, env.beta, env.tau, margin)
        result: list = [None] * n
        for i, (mu, sigma) in zip(order, rated):
            rating = trueskill.Rating(float(mu), float(sigma))
            if not (math.isfinite(rating.mu) and math.isfinite(rating.sigma) and rating.sigma > 0):
                return None
            result[i] = (rating,)
    except (ArithmeticError, ValueError):
        return None
    return result


class _Prior:
    """A rating as `_rate_sorted` reads it: mu and sigma, without the package's object."""

    __slots__ = ("mu", "sigma")

    def __init__(self, mu: float, sigma: float):
        self.mu, self.sigma = mu, sigma


def rate_values(beta: float, tau: float, draw_probability: float, priors: Sequence[tuple[float, float]], ranks: Sequence[float]):
    """`rate` on (mu, sigma) pairs, one per one-player group, giving (mu, sigma) pairs, or None
    where `rate` gives None. The package's algorithm as in `rate`, without building its
    Rating objects (which store 1/sigma^2 and give mu and sigma back rounded): for callers
    that rate many updates of their own and need not match the package to the bit
    (`arena.ratings.skills.Ratings.posterior`)."""
    n = len(priors)
    order = sorted(range(n), key=ranks.__getitem__)
    ties = [ranks[order[k]] == ranks[order[k + 1]] for k in range(n - 1)]
    try:
        margin = draw_margin(beta, draw_probability)
        rated = _rate_sorted([_Prior(*priors[i]) for i in order], ties, beta, tau, margin)
    except (ArithmeticError, ValueError):
        return None
    result: list = [None] * n
    for i, (mu, sigma) in zip(order, rated):
        if not (math.isfinite(mu) and math.isfinite(sigma) and sigma > 0):
            return None
        result[i] = (mu, sigma)
    return result
