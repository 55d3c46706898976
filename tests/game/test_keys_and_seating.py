"""Game and deal keys have one home (arena.store.keys), and so has seating by use
(arena.schedule.seating.seat_by_use), which a Swiss round and the league's matchmaker share with
their own tie-breaks: each seats exactly as its own copy did before they were merged
(the copies are kept below as references)."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from arena.schedule.seating import seat_by_use
from arena.store.keys import (
    ScheduledGame,
    deal_key,
    deal_of,
    game_key,
    key_order,
    rotation_of,
)


def test_a_key_names_the_round_the_table_and_the_rotation_and_reads_back():
    assert deal_key(3, 12) == "00003-00012"
    assert game_key(3, 12, 1) == "00003-00012-1"
    game = ScheduledGame(3, 12, 1, ("ann", "bob"), 7)
    assert (game.key, game.deal, game.order) == ("00003-00012-1", "00003-00012", (3, 12, 1))
    assert key_order(game.key) == (3, 12, 1)
    assert deal_of(game.key) == game.deal
    assert rotation_of(game.key, game.deal) == "1"
    assert rotation_of("match-00001", "00001-00001") == "0"  # not a game of that deal


def test_keys_sort_as_strings_in_schedule_order():
    positions = [(r, t, k) for r in (1, 2, 10, 99999) for t in (1, 9, 10, 12345) for k in (0, 1, 5)]
    keys = [game_key(*position) for position in positions]
    assert sorted(keys) == sorted(keys, key=key_order)
    assert [key_order(key) for key in sorted(keys)] == sorted(positions)


@pytest.mark.parametrize("key", ["00001-00002", "1-2-x", "a-b-c", "00001-00002-0-1", ""])
def test_a_malformed_key_is_refused_with_the_form_it_should_have(key):
    with pytest.raises(ValueError, match="ROUND-TABLE-ROTATION"):
        key_order(key)


def swiss_copy(table, seat_use):
    """arena/schedule/formats.py's _seat_by_use before the merge."""
    return min(
        itertools.permutations(table),
        key=lambda order: sum(seat_use[(bot, position)] for position, bot in enumerate(order)),
    )


def matchmaker_copy(bots, seat_use, rng):
    """arena/schedule/matchmaker.py's _seat_by_use before the merge."""
    orders = list(itertools.permutations(bots))
    rng.shuffle(orders)
    return min(orders, key=lambda order: sum(seat_use[(bot, seat)] for seat, bot in enumerate(order)))


def test_seating_by_use_puts_each_bot_where_it_sat_least_ties_in_table_order():
    seat_use = Counter({("a", 0): 2, ("b", 1): 1})
    # abc costs 3, acb 2, bac 0 (a in seat 1, b in seat 0): the first order that costs least.
    assert seat_by_use(("a", "b", "c"), seat_use) == ("b", "a", "c")
    assert seat_by_use(("a", "b"), Counter()) == ("a", "b")  # a tie keeps the table's order


def test_one_seating_gives_what_the_swiss_rounds_and_the_matchmakers_own_copies_gave():
    draw = random.Random(23)
    for _ in range(300):
        seats = draw.randint(2, 5)
        table = tuple(f"bot{i}" for i in draw.sample(range(9), seats))
        seat_use = Counter({(bot, seat): draw.randint(0, 3) for bot in table for seat in range(seats)})
        assert seat_by_use(table, seat_use) == swiss_copy(table, seat_use)
        seed = draw.random()
        mine, theirs = random.Random(seed), random.Random(seed)
        assert seat_by_use(list(table), seat_use, mine) == matchmaker_copy(list(table), seat_use, theirs)
        assert mine.random() == theirs.random()  # the same draws used: the league's later draws unchanged
