"""Ratings: TrueSkill per game in schedule order, duplicate deals, ties, the mpmath fallback."""

from __future__ import annotations

import random

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import trueskill_ffa
from arena.ratings.ledger import (
    RatedGame,
    RatingLedger,
    competition_ranks,
    rate_results,
    standings,
)
from arena.ratings.skills import Ratings, RatingSettings, RatingSettingsError

DEFAULTS = RatingSettings()


def direct_env(backend=None) -> trueskill.TrueSkill:
    """The environment the defaults stand for, built by hand from the package."""
    return trueskill.TrueSkill(mu=25.0, sigma=25.0 / 3, beta=25.0 / 6, tau=0.0, draw_probability=0.001, backend=backend)


def by_bot(table) -> dict:
    return {line.bot: line for line in table}


def test_defaults_suit_fixed_bots_no_drift_and_rare_draws():
    assert (DEFAULTS.mu, DEFAULTS.sigma, DEFAULTS.beta) == (25.0, 25.0 / 3, 25.0 / 6)
    assert DEFAULTS.tau == 0.0
    assert DEFAULTS.draw_probability == 0.001


def test_one_game_is_one_rate_with_ranks_from_places():
    # Seat order is not finishing order: seat 2 won, seat 0 came last.
    result = RatedGame("00001-00001-0", ("a", "b", "c", "d"), (4, 2, 1, 3))
    env = direct_env()
    prior = env.create_rating()
    expected = env.rate([(prior,)] * 4, ranks=[3, 1, 0, 2])
    table = by_bot(standings([result]))
    for bot, (rating,) in zip("abcd", expected):
        assert (table[bot].mu, table[bot].sigma) == (rating.mu, rating.sigma)
        assert table[bot].conservative == rating.mu - 3 * rating.sigma
    assert [line.bot for line in standings([result])] == ["c", "b", "d", "a"]


def test_games_are_rated_in_schedule_order_not_the_order_they_finished():
    first = RatedGame("00001-00002-0", ("a", "b", "c"), (1, 2, 3))
    second = RatedGame("00002-00001-0", ("c", "a", "b"), (1, 3, 2))
    third = RatedGame("00010-00001-0", ("b", "c", "a"), (1, 1, 3))
    env = direct_env()
    ratings = {bot: env.create_rating() for bot in "abc"}
    for game in (first, second, third):
        rated = env.rate([(ratings[bot],) for bot in game.bots], ranks=[p - 1 for p in game.places])
        for bot, (rating,) in zip(game.bots, rated):
            ratings[bot] = rating
    finished_backwards = by_bot(standings([third, first, second]))
    for bot in "abc":
        assert (finished_backwards[bot].mu, finished_backwards[bot].sigma) == (ratings[bot].mu, ratings[bot].sigma)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_any_finishing_order_gives_identical_standings(seed):
    rng = random.Random(seed)
    bots = [f"bot{i}" for i in range(6)]
    results = []
    for round_no in range(1, 5):
        for table_no in range(1, 3):
            table = rng.sample(bots, 4)
            places = [1, 2, 3, 4]
            rng.shuffle(places)
            results.append(RatedGame(f"{round_no:05d}-{table_no:05d}-0", tuple(table), tuple(places)))
    shuffled = results[:]
    rng.shuffle(shuffled)
    assert standings(shuffled) == standings(results)


def test_equal_places_are_a_tie():
    result = RatedGame("00001-00001-0", ("a", "b", "c", "d"), (1, 1, 3, 4))
    env = direct_env()
    prior = env.create_rating()
    expected = env.rate([(prior,)] * 4, ranks=[0, 0, 2, 3])
    table = by_bot(standings([result]))
    for bot, (rating,) in zip("abcd", expected):
        assert table[bot].mu == rating.mu
    # The package's message passing stops at a tolerance, so tied equals agree to 1e-6.
    assert table["a"].mu == pytest.approx(table["b"].mu, abs=1e-5)
    assert table["a"].mu > table["c"].mu + 1 > table["d"].mu + 2
    assert table["a"].wins == table["b"].wins == 1


def test_standings_count_games_wins_places_forfeits_and_swiss_score():
    results = [
        RatedGame("00001-00001-0", ("a", "b", "c"), (1, 2, 3), forfeits=(False, False, True)),
        RatedGame("00002-00001-0", ("a", "b"), (2, 1)),
        RatedGame("00003-00001-0", ("c", "b", "a"), (1, 2, 3)),
    ]
    table = by_bot(standings(results, bots=["idle"]))
    a, b, c = table["a"], table["b"], table["c"]
    assert (a.games, a.wins, a.average_place, a.forfeits) == (3, 1, 2.0, 0)
    assert (b.games, b.wins, b.average_place, b.forfeits) == (3, 1, 5 / 3, 0)
    assert (c.games, c.wins, c.average_place, c.forfeits) == (2, 1, 2.0, 1)
    # Swiss score: (size - place) / (size - 1) per game.
    assert a.score == 1.0 + 0.0 + 0.0
    assert b.score == 0.5 + 1.0 + 0.5
    assert c.score == 0.0 + 1.0
    idle = table["idle"]
    assert (idle.mu, idle.sigma, idle.games, idle.average_place) == (25.0, 25.0 / 3, 0, 0.0)


def test_standings_are_sorted_by_conservative_rating():
    results = [RatedGame(f"{r:05d}-00001-0", ("a", "b", "c"), (1, 2, 3)) for r in range(1, 6)]
    lines = standings(results)
    assert [line.bot for line in lines] == ["a", "b", "c"]
    assert [line.conservative for line in lines] == sorted((line.conservative for line in lines), reverse=True)


def rotations_of_a_deal(deal_round: int, places_by_rotation, bots=("a", "b", "c")):
    """The games of one duplicate deal; places_by_rotation gives each rotation's places by bot."""
    games = []
    for rotation, places in enumerate(places_by_rotation):
        seated = tuple(bots[(seat - rotation) % len(bots)] for seat in range(len(bots)))
        games.append(
            RatedGame(
                f"{deal_round:05d}-00001-{rotation}",
                seated,
                tuple(places[bot] for bot in seated),
                deal=f"{deal_round:05d}-00001",
            )
        )
    return games


BY_DEAL = RatingSettings(duplicate_update="deal")


def test_duplicate_by_default_each_hand_is_one_update_of_the_bots_that_held_it():
    games = rotations_of_a_deal(
        1,
        [
            {"a": 1, "b": 2, "c": 3},
            {"a": 2, "b": 1, "c": 3},
            {"a": 1, "b": 3, "c": 2},
        ],
    )
    # Seat 0's cards: a (place 1), c (3), b (3); seat 1's: b (2), a (2), c (2);
    # seat 2's: c (3), b (1), a (1). Three rate()s, in seat order, equal places a tie.
    assert DEFAULTS.duplicate_update == "hand"
    env = direct_env()
    rating = dict.fromkeys("abc", env.create_rating())
    for holders, ranks in ((("a", "c", "b"), [0, 1, 1]), (("b", "a", "c"), [0, 0, 0]), (("c", "b", "a"), [2, 0, 0])):
        rated = env.rate([(rating[bot],) for bot in holders], ranks=ranks)
        rating.update({bot: new for bot, (new,) in zip(holders, rated)})
    table = by_bot(standings(games, duplicate=True))
    for bot in "abc":
        assert table[bot].mu == pytest.approx(rating[bot].mu, abs=1e-9)
        assert table[bot].sigma == pytest.approx(rating[bot].sigma, abs=1e-9)
        assert table[bot].games == 3
    assert table["a"].mu > table["b"].mu > table["c"].mu


def test_duplicate_hand_held_by_one_bot_so_far_compares_nobody():
    (first, *_) = rotations_of_a_deal(1, [{"a": 1, "b": 2, "c": 3}] * 3)
    table = by_bot(standings([first], duplicate=True))
    assert {bot: (table[bot].mu, table[bot].sigma) for bot in "abc"} == dict.fromkeys("abc", (25.0, 25.0 / 3))
    assert table["a"].games == 1


def test_duplicate_by_rotation_rates_every_rotation_as_a_game():
    games = rotations_of_a_deal(1, [{"a": 1, "b": 2, "c": 3}, {"a": 2, "b": 1, "c": 3}, {"a": 1, "b": 3, "c": 2}])
    by_rotation = standings(games, RatingSettings(duplicate_update="rotation"), duplicate=True)
    assert by_rotation == standings(games)


def test_duplicate_deal_is_one_update_by_total_of_places():
    games = rotations_of_a_deal(
        1,
        [
            {"a": 1, "b": 2, "c": 3},
            {"a": 2, "b": 1, "c": 3},
            {"a": 1, "b": 3, "c": 2},
        ],
    )
    # Totals: a 4, b 6, c 8 -> ranks 0, 1, 2 in one rate().
    env = direct_env()
    prior = env.create_rating()
    expected = env.rate([(prior,)] * 3, ranks=[0, 1, 2])
    table = by_bot(standings(games, BY_DEAL, duplicate=True))
    for bot, (rating,) in zip("abc", expected):
        assert (table[bot].mu, table[bot].sigma) == (rating.mu, rating.sigma)
        assert table[bot].games == 3
    # Plain mode rates the same games as three updates: different numbers.
    assert by_bot(standings(games))["a"].sigma < table["a"].sigma


def test_duplicate_equal_totals_are_a_tie():
    games = rotations_of_a_deal(1, [{"a": 1, "b": 2, "c": 3}, {"a": 2, "b": 1, "c": 3}, {"a": 3, "b": 3, "c": 1}])
    # Totals: a 6, b 6, c 7.
    assert competition_ranks([6, 6, 7]) == [0, 0, 2]
    table = by_bot(standings(games, BY_DEAL, duplicate=True))
    env = direct_env()
    prior = env.create_rating()
    expected = env.rate([(prior,)] * 3, ranks=[0, 0, 2])
    for bot, (rating,) in zip("abc", expected):
        assert table[bot].mu == rating.mu
    assert table["a"].mu == pytest.approx(table["b"].mu, abs=1e-5)
    assert table["b"].mu > table["c"].mu + 1


@pytest.mark.parametrize("update", ["hand", "deal"])
def test_duplicate_cancels_a_deal_where_the_hand_decides_everything(update):
    # Whoever holds seat 0's hand wins, seat 1's comes second, ...: pure luck of the deal.
    games = []
    for rotation in range(4):
        seated = tuple("abcd"[(seat - rotation) % 4] for seat in range(4))
        games.append(RatedGame(f"00001-00001-{rotation}", seated, (1, 2, 3, 4), deal="00001-00001"))
    table = by_bot(standings(games, RatingSettings(duplicate_update=update), duplicate=True))
    assert {bot: round(table[bot].mu, 4) for bot in "abcd"} == dict.fromkeys("abcd", 25.0)
    plain = by_bot(standings(games))
    assert max(line.mu for line in plain.values()) - min(line.mu for line in plain.values()) > 1


def test_duplicate_deals_are_rated_in_schedule_order():
    first = rotations_of_a_deal(1, [{"a": 1, "b": 2, "c": 3}] * 3)
    second = rotations_of_a_deal(2, [{"a": 3, "b": 2, "c": 1}] * 3)
    env = direct_env()
    ratings = [env.create_rating()] * 3
    ratings = [g[0] for g in env.rate([(r,) for r in ratings], ranks=[0, 1, 2])]
    ratings = [g[0] for g in env.rate([(r,) for r in ratings], ranks=[2, 1, 0])]
    table = by_bot(standings(second[::-1] + first[::-1], BY_DEAL, duplicate=True))
    assert [table[bot].mu for bot in "abc"] == [rating.mu for rating in ratings]


def test_duplicate_deal_with_different_bots_is_refused():
    games = rotations_of_a_deal(1, [{"a": 1, "b": 2, "c": 3}] * 2)
    stranger = RatedGame("00001-00001-2", ("a", "b", "x"), (1, 2, 3), deal="00001-00001")
    with pytest.raises(ValueError, match="share deal '00001-00001' but not the same bots"):
        standings([*games, stranger], duplicate=True)


def test_large_rating_gap_falls_back_to_mpmath_and_matches_it():
    underdog, favourite = trueskill.Rating(-200.0, 1.0), trueskill.Rating(250.0, 1.0)
    with pytest.raises(FloatingPointError):  # the gap really breaks the built-in maths
        direct_env().rate([(underdog,), (favourite,)], ranks=[0, 1])
    expected = direct_env("mpmath").rate([(underdog,), (favourite,)], ranks=[0, 1])
    ratings = Ratings(initial={"under": underdog, "fav": favourite})
    ratings.update(["under", "fav"], [0, 1], label="00007-00001-0")
    assert ratings.rating("under") == expected[0][0]
    assert ratings.rating("fav") == expected[1][0]
    assert ratings.rating("under").mu > -200.0
    assert ratings.mpmath_updates == ["00007-00001-0"] and ratings.skipped_updates == []


def test_a_tie_at_an_extreme_gap_is_rated_with_more_digits():
    ratings = Ratings(initial={"a": trueskill.Rating(-1e6, 1.0), "b": trueskill.Rating(1e6, 1.0)})
    with pytest.raises((ArithmeticError, ValueError)):
        direct_env("mpmath").rate([(ratings.rating("a"),), (ratings.rating("b"),)], ranks=[0, 0])
    ratings.update(["a", "b"], [0, 0], label="00001-00001-0")
    assert ratings.rating("a").mu > -1e6 and ratings.rating("b").mu < 1e6
    assert ratings.skipped_updates == []


def test_an_update_no_backend_can_compute_is_skipped_and_listed_not_raised(monkeypatch):
    def always_fails(self, rating_groups, ranks=None, weights=None, min_delta=0.0001):
        raise FloatingPointError("Set \"mpmath.mp.dps\" to higher")

    monkeypatch.setattr(trueskill.TrueSkill, "rate", always_fails)
    monkeypatch.setattr(trueskill_ffa, "rate", lambda *args: None)  # the fast path hands over too
    result = RatedGame("00003-00002-0", ("a", "b"), (1, 2))
    table = rate_results([result])
    assert table.mpmath_updates == ("00003-00002-0",)
    assert table.skipped_updates == ("00003-00002-0",)
    line = by_bot(table.standings)["a"]
    assert (line.mu, line.sigma, line.games, line.wins) == (25.0, 25.0 / 3, 1, 1)


def test_an_update_with_a_missing_rank_is_refused_not_swallowed_by_the_fallback():
    with pytest.raises(ValueError, match="one rank each"):
        Ratings().update(["a", "b", "c"], [0, 1])


def test_a_game_key_stored_twice_is_refused():
    result = RatedGame("00001-00001-0", ("a", "b"), (1, 2))
    with pytest.raises(ValueError, match="game key 00001-00001-0 appears more than once"):
        standings([result, result])


def test_the_ledger_refuses_a_result_out_of_schedule_order():
    ledger = RatingLedger()
    ledger.add(RatedGame("00002-00001-0", ("a", "b"), (1, 2)))
    with pytest.raises(ValueError, match="schedule order: 00001-00003-0 came after 00002-00001-0"):
        ledger.add(RatedGame("00001-00003-0", ("a", "b"), (1, 2)))


@pytest.mark.parametrize("duplicate", [False, True])
def test_the_ledger_between_rounds_equals_rating_everything_so_far(duplicate):
    rng = random.Random(4)
    bots = ["a", "b", "c", "d", "e"]
    ledger = RatingLedger(duplicate=duplicate, bots=bots)
    so_far = []
    for round_no in range(1, 5):
        table = tuple(rng.sample(bots, 3))
        for rotation in range(3 if duplicate else 1):
            places = [1, 2, 3]
            rng.shuffle(places)
            seated = table[-rotation:] + table[:-rotation] if rotation else table
            result = RatedGame(f"{round_no:05d}-00001-{rotation}", seated, tuple(places), deal=f"{round_no:05d}-00001")
            ledger.add(result)
            so_far.append(result)
            # Mid-deal too: the open deal counts as played so far, and is not rated twice.
            assert ledger.table() == rate_results(so_far, duplicate=duplicate, bots=bots)


@pytest.mark.parametrize(
    "bots, places, forfeits, message",
    [
        (("a",), (1,), (), "at least 2 seats"),
        (("a", "a"), (1, 2), (), "a bot sits in two seats"),
        (("a", "b"), (1,), (), "2 seats but 1 places"),
        (("a", "b"), (1, 2), (True,), "2 seats but 2 places and 1 forfeit flags"),
        (("a", "b"), (0, 2), (), "places must be whole numbers from 1 to 2"),
        (("a", "b"), (1, 3), (), "places must be whole numbers from 1 to 2"),
    ],
)
def test_a_malformed_result_is_refused_with_what_is_allowed(bots, places, forfeits, message):
    with pytest.raises(ValueError, match=message):
        RatedGame("00001-00001-0", bots, places, forfeits)


@pytest.mark.parametrize(
    "setting, value, message",
    [
        ("draw_probability", 0.0, "draw_probability must be greater than 0 and less than 1"),
        ("draw_probability", 1.0, "draw_probability must be greater than 0 and less than 1"),
        ("tau", -0.1, "tau must be 0 or more"),
        ("sigma", 0, "sigma must be greater than 0"),
        ("beta", float("nan"), "beta must be a finite number"),
        ("duplicate_update", "total", "duplicate_update must be one of 'hand', 'deal', 'rotation', got 'total'"),
    ],
)
def test_a_bad_rating_setting_is_refused_with_what_is_allowed(setting, value, message):
    with pytest.raises(RatingSettingsError, match=message):
        RatingSettings(**{setting: value})


def test_settings_reach_the_environment():
    custom = RatingSettings(mu=1000.0, sigma=300.0, beta=150.0, tau=3.0, draw_probability=0.05)
    env = custom.environment()
    assert (env.mu, env.sigma, env.beta, env.tau, env.draw_probability) == (1000.0, 300.0, 150.0, 3.0, 0.05)
    line = by_bot(standings([RatedGame("00001-00001-0", ("a", "b"), (1, 2))], custom))["a"]
    expected = env.rate([(env.create_rating(),), (env.create_rating(),)], ranks=[0, 1])[0][0]
    assert line.mu == expected.mu
