"""The league's matchmaker: the bot that most needs games sits first, the other seats go to
close ratings (plus a random share), every bot plays once a batch, seats rotate, and the
same inputs give the same tables."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from arena.schedule.matchmaker import NEAR, NEWCOMER_GAMES, Candidate, make_tables


def field(count: int = 12, games: int = 40) -> list[Candidate]:
    """Bots b00..: b00 rated highest, one mu apart, all settled in (sigma 1)."""
    return [Candidate(f"b{index:02d}", 40.0 - index, 1.0, games, (games // 4,) * 4) for index in range(count)]


def test_a_newcomer_sits_at_the_first_table_before_any_high_sigma_regular():
    bots = field()
    bots[5] = Candidate("b05", 35.0, 6.0, 40, (10, 10, 10, 10))  # unsure, but no newcomer
    bots.append(Candidate("new", 25.0, 8.33, 0))
    tables = make_tables(bots, 4, 3, random.Random(1), random_share=0.0)
    assert "new" in tables[0]
    assert "b05" in tables[1]  # then the highest sigma


def test_without_random_share_the_other_seats_are_among_the_closest_ratings():
    bots = field(20)
    newcomer = Candidate("new", 30.2, 8.33, 0)  # closest: b10 (30), b09 (31), b11 (29)
    for seed in range(30):
        [table] = make_tables([*bots, newcomer], 2, 1, random.Random(seed), random_share=0.0)
        assert "new" in table
        other = next(bot for bot in table if bot != "new")
        assert other in {"b10", "b09", "b11"}
    assert NEAR == 3


def test_the_random_share_brings_in_opponents_from_the_whole_field():
    bots = field(20)
    newcomer = Candidate("new", 30.2, 8.33, 0)
    met = Counter()
    for seed in range(200):
        [table] = make_tables([*bots, newcomer], 2, 1, random.Random(seed), random_share=0.5)
        met.update(bot for bot in table if bot != "new")
    far = {bot for bot in met if bot not in {"b09", "b10", "b11"}}
    assert len(far) >= 12  # half the seats are drawn from all 20 bots
    assert sum(met[bot] for bot in far) < sum(met[bot] for bot in ("b09", "b10", "b11"))


def test_random_filling_ignores_ratings():
    bots = field(20)
    newcomer = Candidate("new", 30.2, 8.33, 0)
    met = Counter()
    for seed in range(200):
        [table] = make_tables([*bots, newcomer], 2, 1, random.Random(seed), fill="random")
        met.update(bot for bot in table if bot != "new")
    assert len(met) == 20


def test_every_bot_plays_once_a_batch_when_the_seats_divide_the_field():
    tables = make_tables(field(12), 4, 3, random.Random(7))
    assert sorted(bot for table in tables for bot in table) == [f"b{index:02d}" for index in range(12)]
    # 13 bots, 4 tables of 3: twelve play once, nobody twice while another waits
    tables = make_tables(field(13), 3, 5, random.Random(7))
    played = Counter(bot for table in tables for bot in table)
    assert sorted(played.values()) == [1] * 11 + [2] * 2


def test_seats_go_where_each_bot_has_sat_least():
    bots = [
        Candidate("a", 25.0, 1.0, 40, (40, 0, 0)),
        Candidate("b", 25.0, 1.0, 40, (0, 40, 0)),
        Candidate("c", 25.0, 1.0, 40, (0, 0, 40)),
    ]
    [table] = make_tables(bots, 3, 1, random.Random(3))
    assert table[0] != "a" and table[1] != "b" and table[2] != "c"
    # Over many batches, fed back, every bot sits in every seat about equally often (each
    # table is seated greedily, so within two of each other, not one).
    use = Counter()
    bots = [Candidate(name, 25.0, 1.0, 0) for name in "abcdef"]
    for batch in range(60):
        bots = [Candidate(c.bot, c.mu, c.sigma, c.games, tuple(use[(c.bot, s)] for s in range(3))) for c in bots]
        for table in make_tables(bots, 3, 2, random.Random(batch)):
            for seat, bot in enumerate(table):
                use[(bot, seat)] += 1
    for bot in "abcdef":
        assert max(use[(bot, s)] for s in range(3)) - min(use[(bot, s)] for s in range(3)) <= 2


def test_the_same_inputs_give_the_same_tables():
    bots = [*field(15), Candidate("new", 25.0, 8.33, 0)]
    first = make_tables(bots, 4, 4, random.Random("league/3"))
    again = make_tables(list(reversed(bots)), 4, 4, random.Random("league/3"))
    assert first == again
    assert make_tables(bots, 4, 4, random.Random("league/4")) != first


def test_a_newcomer_stops_being_one_after_its_first_games():
    regular = Candidate("old", 100.0, 8.0, NEWCOMER_GAMES)  # higher sigma, far in rating
    newcomer = Candidate("new", 25.0, 7.0, NEWCOMER_GAMES - 1)  # lower sigma, but new
    [table] = make_tables([regular, newcomer, *field(6)], 2, 1, random.Random(1), random_share=0.0)
    assert "new" in table and "old" not in table


def test_too_few_bots_or_bad_settings_are_refused():
    with pytest.raises(ValueError, match="4 seats need at least 4 bots"):
        make_tables(field(3), 4, 1, random.Random(1))
    with pytest.raises(ValueError, match="random_share must be between 0 and 1"):
        make_tables(field(8), 4, 1, random.Random(1), random_share=1.5)
    with pytest.raises(ValueError, match="fill must be one of matchmaker, random"):
        make_tables(field(8), 4, 1, random.Random(1), fill="best")
