"""How sure the standings are: rank intervals, separation and groups, the chance that one bot
places ahead of another, the skills given all the games, and a Swiss's order by score and
Buchholz. Small hand-made result sets with exact outcomes; calibration is measured in
bench/confidence.py, not here."""

from __future__ import annotations

import math
from collections import deque

import pytest

from arena.ratings.confidence import (
    Confidence,
    RankInterval,
    ahead_probability,
    rank_groups,
    rank_intervals,
    separated,
    settled_span,
)
from arena.ratings.ledger import RatedGame, RatingLedger, RatingSettings, standings

BETA = RatingSettings().beta


def ledger_of(games, **options) -> RatingLedger:
    ledger = RatingLedger(record=True, **options)
    for game in games:
        ledger.add(game)
    return ledger


def key(round_no: int, table: int = 1) -> str:
    return f"{round_no:05d}-{table:05d}-0"


# --- rank intervals and groups -------------------------------------------------------------


def test_a_bot_that_beat_everyone_has_band_1_1_and_its_own_group():
    # Ten rounds of three four-seat games: a first every time, b, c, d sharing the rest.
    games = []
    for round_no in range(1, 11):
        for table, others in enumerate((("b", "c", "d"), ("c", "d", "b"), ("d", "b", "c")), 1):
            games.append(RatedGame(key(round_no, table), ("a", *others), (1, 2, 3, 4)))
    ledger = ledger_of(games)
    confidence = ledger.confidence()
    order = [line.bot for line in ledger.table().standings]
    assert confidence.intervals == {
        "a": RankInterval(1, 1), "b": RankInterval(2, 4), "c": RankInterval(2, 4), "d": RankInterval(2, 4)
    }
    assert order[0] == "a"
    assert confidence.groups(order) == [0, 1, 1, 1]
    assert all(confidence.separated("a", other) for other in "bcd")
    assert not confidence.separated("b", "c")


def test_two_identical_bots_overlap_and_share_a_group():
    # t1 and t2 take turns winning; x is always last. Rated in order, the one that won
    # last is ahead; given all the games they are the same bot.
    games = [RatedGame(key(r), ("t1", "t2", "x") if r % 2 else ("t2", "t1", "x"), (1, 2, 3)) for r in range(1, 21)]
    ledger = ledger_of(games)
    confidence = ledger.confidence()
    assert confidence.intervals == {"t1": RankInterval(1, 2), "t2": RankInterval(1, 2), "x": RankInterval(3, 3)}
    assert not confidence.separated("t1", "t2")
    assert confidence.separated("t1", "x") and confidence.separated("t2", "x")
    assert confidence.groups([line.bot for line in ledger.table().standings]) == [0, 0, 1]


def test_bots_that_never_played_could_hold_any_place():
    confidence = RatingLedger(bots=["a", "b", "c"], record=True).confidence()
    assert confidence.intervals == {bot: RankInterval(1, 3) for bot in "abc"}
    assert confidence.skills == {bot: (25.0, 25.0 / 3) for bot in "abc"}


def test_far_apart_skills_have_single_places_and_close_ones_share_them():
    skills = {"top": (40.0, 1.0), "mid": (25.0, 1.0), "low": (24.9, 1.0), "last": (5.0, 1.0)}
    assert rank_intervals(skills) == {
        "top": RankInterval(1, 1), "mid": RankInterval(2, 3), "low": RankInterval(2, 3), "last": RankInterval(4, 4)
    }


def test_the_intervals_are_the_same_every_time():
    skills = {f"bot{i}": (25.0 + i / 3, 2.0) for i in range(12)}
    assert rank_intervals(skills) == rank_intervals(dict(reversed(skills.items())))


def test_separated_means_the_intervals_do_not_overlap():
    assert separated(RankInterval(1, 2), RankInterval(3, 5))
    assert separated(RankInterval(3, 5), RankInterval(1, 2))
    assert not separated(RankInterval(1, 3), RankInterval(3, 5))


def test_a_group_ends_only_where_everyone_above_is_separated_from_everyone_below():
    intervals = {
        "a": RankInterval(1, 2), "b": RankInterval(1, 3), "c": RankInterval(2, 3),
        "d": RankInterval(4, 5), "e": RankInterval(4, 6), "f": RankInterval(6, 6),
    }
    assert rank_groups("abcdef", intervals) == [0, 0, 0, 1, 1, 1]
    # b is shown last, but could be second: no cut below a or c.
    assert rank_groups("acdefb", intervals) == [0, 0, 0, 0, 0, 0]
    # d and e overlap, f does not overlap e: a cut between e and f.
    intervals["e"] = RankInterval(4, 5)
    assert rank_groups("abcdef", intervals) == [0, 0, 0, 1, 1, 2]


# --- the chance of placing ahead -------------------------------------------------------------


def test_ahead_probability_is_trueskills_chance_that_one_performance_beats_another():
    a, b = (29.0, 2.0), (25.0, 3.0)
    expected = 0.5 * (1 + math.erf(4.0 / math.sqrt(2 * (2 * BETA**2 + 4.0 + 9.0))))
    assert ahead_probability(a, b, BETA) == pytest.approx(expected, rel=1e-12)
    assert ahead_probability(a, b, BETA) + ahead_probability(b, a, BETA) == pytest.approx(1.0, rel=1e-12)
    assert ahead_probability(a, a, BETA) == 0.5
    confidence = Confidence.of({"a": a, "b": b}, BETA)
    assert confidence.ahead("a", "b") == ahead_probability(a, b, BETA)


def test_confidence_survives_json():
    confidence = Confidence.of({"a": (29.0, 2.0), "b": (25.0, 3.0), "c": (20.0, 1.5)}, BETA)
    assert Confidence.from_json(confidence.to_json()) == confidence
    stale = {**confidence.to_json(), "method": 0}
    with pytest.raises(ValueError, match="another method"):
        Confidence.from_json(stale)


# --- the skills given all the games ----------------------------------------------------------


def test_after_one_game_the_skills_are_the_ratings():
    ledger = ledger_of([RatedGame(key(1), ("a", "b", "c"), (2, 1, 3))])
    ratings = {line.bot: (line.mu, line.sigma) for line in ledger.table().standings}
    for bot, (mu, sigma) in ledger.confidence().skills.items():
        assert (mu, sigma) == (pytest.approx(ratings[bot][0], abs=1e-9), pytest.approx(ratings[bot][1], abs=1e-9))


def test_given_all_the_games_their_order_matters_far_less():
    # a wins five games, then b wins five. Rated in order, b ends 7.9 points ahead (the
    # later games move ratings that are surer by then); re-rated knowing every game,
    # 0.29 points.
    games = [RatedGame(key(r), ("a", "b"), (1, 2) if r <= 5 else (2, 1)) for r in range(1, 11)]
    ledger = ledger_of(games)
    ratings = {line.bot: line for line in ledger.table().standings}
    skills = ledger.confidence().skills
    assert ratings["b"].mu - ratings["a"].mu == pytest.approx(7.905, abs=1e-3)
    assert skills["b"][0] - skills["a"][0] == pytest.approx(0.289, abs=1e-3)
    assert skills["a"][1] == skills["b"][1] == pytest.approx(2.405, abs=1e-3)


def test_with_skill_drift_the_skills_are_the_ratings_as_they_are():
    games = [RatedGame(key(r), ("a", "b"), (1, 2) if r <= 5 else (2, 1)) for r in range(1, 11)]
    ledger = ledger_of(games, settings=RatingSettings(tau=0.5))
    ratings = {line.bot: (line.mu, line.sigma) for line in ledger.table().standings}
    assert ledger.confidence().skills == ratings


def test_the_skills_need_a_ledger_that_keeps_its_updates():
    with pytest.raises(ValueError, match="record=True"):
        RatingLedger().confidence()


# --- a Swiss's order -------------------------------------------------------------------------


def test_a_swiss_ties_on_score_are_broken_by_buchholz_before_trueskill():
    # Two seats, four bots, three rounds. X, Y and P end on 2 points each.
    games = [
        RatedGame(key(1, 1), ("X", "P"), (1, 2)), RatedGame(key(1, 2), ("Y", "Q"), (1, 2)),
        RatedGame(key(2, 1), ("X", "Y"), (1, 2)), RatedGame(key(2, 2), ("P", "Q"), (1, 2)),
        RatedGame(key(3, 1), ("P", "X"), (1, 2)), RatedGame(key(3, 2), ("Y", "Q"), (1, 2)),
    ]
    # Buchholz at two seats is chess's: the sum of the opponents' final scores.
    # X met P (2), Y (2), P (2): 6. P met X, Q (0), X: 4. Y met Q, X, Q: 2. Q met Y, P, Y: 6.
    swiss = standings(games, swiss=True)
    assert [(line.bot, line.score, line.buchholz) for line in swiss] == [
        ("X", 2.0, 6.0), ("P", 2.0, 4.0), ("Y", 2.0, 2.0), ("Q", 0.0, 6.0)
    ]
    # TrueSkill alone puts P first (it beat X last, when X was rated higher).
    assert [line.bot for line in standings(games)] == ["P", "X", "Y", "Q"]
    assert all(line.buchholz is None for line in standings(games))


def test_at_more_seats_buchholz_takes_each_games_table_mates_on_average():
    # Three seats: per game 1, 0.5, 0 points. Final scores D 2, A 1.5, E 1.5, B 0.5, C 0.5, F 0.
    games = [
        RatedGame(key(1, 1), ("A", "B", "C"), (1, 2, 3)), RatedGame(key(1, 2), ("D", "E", "F"), (1, 2, 3)),
        RatedGame(key(2, 1), ("A", "D", "B"), (2, 1, 3)), RatedGame(key(2, 2), ("E", "C", "F"), (1, 2, 3)),
    ]
    # A: (B 0.5 + C 0.5) / 2 + (D 2 + B 0.5) / 2 = 0.5 + 1.25 = 1.75
    # E: (D 2 + F 0) / 2 + (C 0.5 + F 0) / 2 = 1 + 0.25 = 1.25
    # B: (A 1.5 + C 0.5) / 2 + (A 1.5 + D 2) / 2 = 1 + 1.75 = 2.75
    # C: (A 1.5 + B 0.5) / 2 + (E 1.5 + F 0) / 2 = 1 + 0.75 = 1.75
    swiss = standings(games, swiss=True)
    assert [(line.bot, line.score, line.buchholz) for line in swiss] == [
        ("D", 2.0, 1.75), ("A", 1.5, 1.75), ("E", 1.5, 1.25), ("B", 0.5, 2.75), ("C", 0.5, 1.75), ("F", 0.0, 2.75)
    ]


def test_equal_score_and_buchholz_fall_to_the_conservative_rating():
    # Z and C each beat B once: 1 point, Buchholz 0 each. Z beat B at the prior, C beat B
    # once B had lost: Z has the higher conservative rating, though C sorts first by name.
    games = [RatedGame(key(1), ("Z", "B"), (1, 2)), RatedGame(key(2), ("C", "B"), (1, 2))]
    swiss = standings(games, swiss=True)
    assert [(line.bot, line.score, line.buchholz) for line in swiss] == [("Z", 1.0, 0.0), ("C", 1.0, 0.0), ("B", 0.0, 2.0)]
    assert swiss[0].conservative > swiss[1].conservative


def test_a_swiss_ledger_resumed_from_its_snapshot_keeps_its_table_mates():
    games = [
        RatedGame(key(1, 1), ("X", "P"), (1, 2)), RatedGame(key(1, 2), ("Y", "Q"), (1, 2)),
        RatedGame(key(2, 1), ("X", "Y"), (1, 2)), RatedGame(key(2, 2), ("P", "Q"), (1, 2)),
        RatedGame(key(3, 1), ("P", "X"), (1, 2)), RatedGame(key(3, 2), ("Y", "Q"), (1, 2)),
    ]
    ledger = RatingLedger(swiss=True)
    for game in games[:4]:
        ledger.add(game)
    resumed = RatingLedger.restore(ledger.snapshot())
    for game in games[4:]:
        resumed.add(game)
    assert resumed.table() == standings_table(games)


def standings_table(games):
    ledger = RatingLedger(swiss=True)
    for game in games:
        ledger.add(game)
    return ledger.table()


def test_settled_looks_at_the_95_percent_interval_not_the_band_shown():
    """21 bots half a point apart (sigma 0.3) and one more between the 9th and 10th: with
    sigma 0.9 its 90% band spans 7 places, as many as a 22-bot field allows a settled bot,
    but its 95% interval spans 9, so it is provisional; with sigma 0.8 both span 7."""
    field = {f"b{i:02d}": (30 - i * 0.5, 0.3) for i in range(21)}
    assert settled_span(22) == 7
    wavering = Confidence.of({**field, "new": (25.25, 0.9)}, BETA)
    assert (wavering.intervals["new"], wavering.settle_intervals["new"]) == (RankInterval(8, 14), RankInterval(7, 15))
    assert not wavering.settled("new")
    sure = Confidence.of({**field, "new": (25.25, 0.8)}, BETA)
    assert (sure.intervals["new"], sure.settle_intervals["new"]) == (RankInterval(8, 14), RankInterval(8, 14))
    assert sure.settled("new")
    assert Confidence.from_json(sure.to_json()) == sure


# --- the sweep's window (issue 27: a league's confidence costs the same at any length) -------


def _field_games(rounds: int) -> list[RatedGame]:
    """Six bots a..f at three seats, two tables a round, places by a fixed pattern in which a
    is strongest and f weakest but every bot wins sometimes."""
    bots = "abcdef"
    games = []
    for round_no in range(1, rounds + 1):
        seating = [bots[(round_no * step + i) % 6] for step, i in ((1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5))]
        for table, three in enumerate((seating[:3], seating[3:]), 1):
            order = sorted(three, key=lambda bot: (bots.index(bot) + (round_no * 7 + table) % 4) % 6)
            games.append(RatedGame(key(round_no, table), tuple(three), tuple(order.index(bot) + 1 for bot in three)))
    return games


def test_a_history_that_fits_the_window_gives_the_full_sweep_exactly(monkeypatch):
    games = _field_games(30)  # 60 updates
    full = ledger_of(games).ratings.posterior()
    monkeypatch.setattr("arena.ratings.confidence.WINDOW", 60)
    windowed = ledger_of(games)
    assert len(windowed.ratings.updates) == 60
    assert windowed.ratings.posterior() == full  # to the bit


def test_past_the_window_older_updates_keep_their_pass_in_order_and_only_the_window_is_swept(monkeypatch):
    games = _field_games(30)
    everything = ledger_of(games)
    monkeypatch.setattr("arena.ratings.confidence.WINDOW", 20)
    windowed = ledger_of(games)
    assert len(windowed.ratings.updates) == 20  # memory bounded: the last 20 updates only
    assert list(windowed.ratings.updates) == list(everything.ratings.updates)[-20:]
    # The same as a sweep over the last 20 updates from the ratings in order.
    by_hand = everything.ratings.copy()
    by_hand.updates = deque(list(everything.ratings.updates)[-20:])
    assert windowed.ratings.posterior() == by_hand.posterior()
    # It differs from the full sweep (the 40 older updates are not re-rated), but little,
    # and on the wide side: an update rated in order knew its bots less well than the sweep.
    full, window = everything.ratings.posterior(), windowed.ratings.posterior()
    for bot in "abcdef":
        assert abs(full[bot][0] - window[bot][0]) < 0.6
        assert full[bot][1] < window[bot][1] < full[bot][1] + 0.11
    assert windowed.confidence().intervals == everything.confidence().intervals == {
        "a": RankInterval(1, 2), "b": RankInterval(1, 3), "c": RankInterval(4, 6),
        "d": RankInterval(4, 6), "e": RankInterval(3, 6), "f": RankInterval(2, 4),
    }
