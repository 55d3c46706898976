"""The free-for-all TrueSkill fast path gives the package's ratings bit for bit, or hands over."""

from __future__ import annotations

import math
import random

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st
from trueskill import backends

from arena.ratings import trueskill_ffa
from arena.ratings.ledger import Ratings, RatingSettings


def package_rate(env, groups, ranks):
    """What arena's rating asked of the package before the fast path: ratings, or None on failure."""
    try:
        rated = env.rate(groups, ranks=list(ranks))
    except (ArithmeticError, ValueError):
        return None
    if all(
        math.isfinite(r.mu) and math.isfinite(r.sigma) and r.sigma > 0 for (r,) in rated
    ):
        return rated
    return None


def assert_same(fast, package):
    """Both None, or the same ratings to the last bit (mu, sigma and the stored pi, tau)."""
    if package is None:
        assert fast is None
        return
    assert fast is not None
    assert len(fast) == len(package)
    for (mine,), (theirs,) in zip(fast, package):
        assert type(mine) is trueskill.Rating
        assert (mine.mu, mine.sigma, mine.pi, mine.tau) == (
            theirs.mu,
            theirs.sigma,
            theirs.pi,
            theirs.tau,
        )


settings_strategy = st.builds(
    dict,
    beta=st.floats(0.2, 20),
    tau=st.one_of(st.just(0.0), st.floats(0, 2)),
    draw_probability=st.one_of(st.just(0.001), st.floats(1e-6, 0.9)),
)
rating_strategy = st.tuples(
    st.one_of(
        st.floats(-30, 80), st.floats(-2000, 2000)
    ),  # the second: large gaps, often beyond floats
    st.floats(0.05, 20),
)


@settings(max_examples=400, deadline=None)
@given(
    env_settings=settings_strategy,
    players=st.lists(rating_strategy, min_size=2, max_size=6),
    data=st.data(),
)
def test_fast_path_equals_the_package_or_hands_over(env_settings, players, data):
    n = len(players)
    ranks = data.draw(
        st.lists(st.integers(0, n - 1), min_size=n, max_size=n), label="ranks"
    )  # ties allowed
    env = trueskill.TrueSkill(mu=25.0, sigma=25.0 / 3, **env_settings)
    groups = [(trueskill.Rating(mu, sigma),) for mu, sigma in players]
    assert_same(
        trueskill_ffa.rate(env, groups, ranks), package_rate(env, groups, ranks)
    )


def test_random_games_of_every_size_match_and_most_are_fast():
    rng = random.Random(7)
    fast = 0
    for _ in range(600):
        n = rng.randint(2, 6)
        env = trueskill.TrueSkill(
            beta=rng.uniform(1, 8), tau=rng.choice([0.0, 0.08]), draw_probability=0.001
        )
        groups = [
            (trueskill.Rating(rng.uniform(0, 50), rng.uniform(0.5, 9)),)
            for _ in range(n)
        ]
        ranks = [rng.randint(0, n - 1) for _ in range(n)]
        got = trueskill_ffa.rate(env, groups, ranks)
        assert_same(got, package_rate(env, groups, ranks))
        fast += got is not None
    assert fast >= 590  # ordinary ratings never need the fallback


def test_package_documented_one_vs_one_win_and_draw():
    # The package's README figures for its default environment (draw probability 10%, tau sigma/100).
    env = trueskill.TrueSkill()
    groups = [(env.create_rating(),), (env.create_rating(),)]
    (winner,), (loser,) = trueskill_ffa.rate(env, groups, [0, 1])
    assert (round(winner.mu, 3), round(winner.sigma, 3)) == (29.396, 7.171)
    assert (round(loser.mu, 3), round(loser.sigma, 3)) == (20.604, 7.171)
    (first,), (second,) = trueskill_ffa.rate(env, groups, [0, 0])
    assert (round(first.mu, 3), round(first.sigma, 3)) == (25.0, 6.458)
    assert (round(second.mu, 3), round(second.sigma, 3)) == (25.0, 6.458)


def test_four_seat_game_with_a_tie_keeps_seat_order_and_equals_the_package():
    env = RatingSettings().environment()
    groups = [
        (trueskill.Rating(31.0, 4.0),),
        (trueskill.Rating(22.5, 6.1),),
        (trueskill.Rating(25.0, 8.3),),
        (trueskill.Rating(18.0, 2.0),),
    ]
    ranks = [2, 0, 2, 1]  # seat 1 won, seats 0 and 2 tied last
    got = trueskill_ffa.rate(env, groups, ranks)
    assert_same(got, env.rate(groups, ranks=ranks))
    assert got[1][0].mu > 22.5 and got[0][0].mu < 31.0


def test_a_win_too_unlikely_for_floats_is_handed_over():
    # The package raises FloatingPointError here; the fast path must say None, not guess.
    env = RatingSettings().environment()
    groups = [(trueskill.Rating(0.0, 0.5),), (trueskill.Rating(1000.0, 0.5),)]
    with pytest.raises(FloatingPointError):
        env.rate(groups, ranks=[0, 1])
    assert trueskill_ffa.rate(env, groups, [0, 1]) is None


def test_cases_it_does_not_cover_are_handed_over():
    env = RatingSettings().environment()
    one = trueskill.Rating(25.0, 8.0)
    assert (
        trueskill_ffa.rate(env, [(one, one), (one,)], [0, 1]) is None
    )  # a two-player team
    assert (
        trueskill_ffa.rate(
            RatingSettings().environment(backend="mpmath"), [(one,), (one,)], [0, 1]
        )
        is None
    )
    dynamic = trueskill.TrueSkill(draw_probability=lambda a, b, env: 0.1)
    assert trueskill_ffa.rate(dynamic, [(one,), (one,)], [0, 1]) is None


def test_cdf_pdf_and_draw_margin_are_the_packages_to_the_bit():
    rng = random.Random(3)
    for x in [rng.uniform(-40, 40) for _ in range(3000)] + [
        0.0,
        1e-300,
        -37.9,
        8.5,
        1e12,
    ]:
        assert trueskill_ffa.erfc(x) == backends.erfc(x)
        assert trueskill_ffa.cdf(x) == backends.cdf(x)
        assert trueskill_ffa.pdf(x) == backends.pdf(x)
    env = trueskill.TrueSkill(beta=3.7, draw_probability=0.02)
    assert trueskill_ffa.draw_margin(3.7, 0.02) == trueskill.calc_draw_margin(
        0.02, 2, env
    )
    # not math.erfc: the package's approximation differs from it in the 8th digit or so
    assert any(trueskill_ffa.erfc(x) != math.erfc(x) for x in (0.3, 1.1, 2.5))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_ratings_update_is_unchanged_by_the_fast_path(seed):
    # A sequence of games through arena's Ratings equals the package's rate() chained by hand.
    rng = random.Random(seed)
    ratings = Ratings()
    env = RatingSettings().environment()
    by_hand = {bot: env.create_rating() for bot in "abcdef"}
    for _ in range(12):
        bots = rng.sample("abcdef", rng.randint(2, 5))
        ranks = [rng.randint(0, len(bots) - 1) for _ in bots]
        ratings.update(bots, ranks)
        for bot, (rating,) in zip(
            bots, env.rate([(by_hand[bot],) for bot in bots], ranks=ranks)
        ):
            by_hand[bot] = rating
    for bot in "abcdef":
        assert (ratings.rating(bot).mu, ratings.rating(bot).sigma) == (
            by_hand[bot].mu,
            by_hand[bot].sigma,
        )
    assert ratings.mpmath_updates == [] and ratings.skipped_updates == []


def test_ratings_still_fall_back_to_mpmath_when_the_fast_path_hands_over():
    ratings = Ratings(
        initial={
            "weak": trueskill.Rating(0.0, 0.5),
            "strong": trueskill.Rating(1000.0, 0.5),
        }
    )
    ratings.update(["weak", "strong"], [0, 1], label="00001-00001-0")
    assert ratings.mpmath_updates == ["00001-00001-0"]
    assert ratings.rating("weak").mu > 0.0 and ratings.rating("strong").mu < 1000.0


def test_ratings_use_the_fast_path_for_ordinary_games(monkeypatch):
    ratings = Ratings()

    def refuse(*args, **kwargs):
        raise AssertionError("the package's rate() was called for an ordinary game")

    monkeypatch.setattr(ratings._env, "rate", refuse)
    ratings.update(["a", "b", "c", "d"], [3, 1, 0, 2])
    assert ratings.rating("c").mu > 25.0 > ratings.rating("a").mu
