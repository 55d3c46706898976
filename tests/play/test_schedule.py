"""Schedules: pair counts, seat counts, Swiss pairing, duplicate rotations, determinism."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.schedule.formats import (
    COMPLETE_LIMIT,
    SWISS_REPEAT_COST,
    ScheduledGame,
    ScheduleError,
    SwissEntry,
    affine_plane,
    balance_seats,
    deal_seed,
    design_rounds,
    gauntlet,
    key_order,
    rotate,
    round_robin,
    swiss_round,
    swiss_split_cost,
    swiss_table_sizes,
)

FEW = settings(max_examples=40, deadline=None)


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def pair_counts(games, bots) -> dict[frozenset, int]:
    met = Counter(frozenset(pair) for game in games for pair in itertools.combinations(game.table, 2))
    return {frozenset(pair): met[frozenset(pair)] for pair in itertools.combinations(bots, 2)}


def seat_counts(games) -> Counter:
    return Counter((bot, seat) for game in games for seat, bot in enumerate(game.table))


def assert_seats_balanced(games, seats: int) -> None:
    """Every bot's games spread over the seats, no seat more than one game ahead of another."""
    used = seat_counts(games)
    for bot in {bot for game in games for bot in game.table}:
        per_seat = [used[(bot, seat)] for seat in range(seats)]
        assert max(per_seat) - min(per_seat) <= 1, (bot, per_seat)


def per_round(games) -> dict[int, list[ScheduledGame]]:
    rounds: dict[int, list[ScheduledGame]] = {}
    for game in games:
        rounds.setdefault(game.round, []).append(game)
    return rounds


# ----------------------------------------------------------------- round-robin


@FEW
@given(seats=st.integers(2, 6), extra=st.integers(0, 6), cycles=st.integers(1, 2), seed=st.integers(0, 10**6))
def test_complete_round_robin_plays_every_table_once_per_cycle(seats, extra, cycles, seed):
    bots = names(seats + extra)
    games = round_robin(bots, seats, seed=seed, cycles=cycles)
    n = len(bots)
    assert len(games) == cycles * math.comb(n, seats)
    for cycle in per_round(games).values():
        assert sorted(tuple(sorted(g.table)) for g in cycle) == sorted(itertools.combinations(sorted(bots), seats))
    assert set(pair_counts(games, bots).values()) == {cycles * math.comb(n - 2, seats - 2)}


@FEW
@given(seats=st.integers(2, 6), extra=st.integers(0, 6), cycles=st.integers(1, 3), seed=st.integers(0, 10**6))
def test_round_robin_puts_every_bot_in_every_seat_equally_often(seats, extra, cycles, seed):
    games = round_robin(names(seats + extra), seats, seed=seed, cycles=cycles)
    assert_seats_balanced(games, seats)
    played = Counter(bot for game in games for bot in game.table)
    used = seat_counts(games)
    for bot, count in played.items():
        if count % seats == 0:  # then exactly equal, not just within one
            assert {used[(bot, seat)] for seat in range(seats)} == {count // seats}


def test_complete_design_is_used_up_to_the_limit_and_a_design_beyond():
    assert math.comb(16, 4) <= COMPLETE_LIMIT < math.comb(24, 4)
    assert len(round_robin(names(16), 4, seed=1)) == math.comb(16, 4)
    beyond = round_robin(names(24), 4, seed=1)
    # One design cycle: ceil(23 / 3) = 8 rounds of 6 tables, every bot once per round.
    assert len(beyond) == 8 * 6
    for games in per_round(beyond).values():
        assert sorted(bot for g in games for bot in g.table) == names(24)


@pytest.mark.parametrize("q", [2, 3, 4, 5, 7, 8, 9])
def test_affine_plane_has_q_plus_one_parallel_classes_covering_every_pair_once(q):
    classes = affine_plane(q)
    assert len(classes) == q + 1
    met = Counter()
    for lines in classes:
        assert sorted(point for line in lines for point in line) == list(range(q * q))
        assert all(len(line) == q for line in lines)
        for line in lines:
            met.update(itertools.combinations(sorted(line), 2))
    assert len(met) == math.comb(q * q, 2) and set(met.values()) == {1}


def test_affine_plane_refuses_an_order_that_is_not_a_prime_power():
    with pytest.raises(ScheduleError, match="prime power"):
        affine_plane(6)


@pytest.mark.parametrize("q", [2, 3, 4, 5])
def test_q_squared_bots_at_tables_of_q_meet_exactly_once_per_q_plus_one_rounds(q):
    bots = names(q * q)
    games = round_robin(bots, q, seed=5, rounds=2 * (q + 1), complete_limit=0)
    assert set(pair_counts(games, bots).values()) == {2}
    assert_seats_balanced(games, q)


def test_sixteen_bots_at_four_seats_get_the_affine_plane_when_rounds_are_asked():
    bots = names(16)
    games = round_robin(bots, 4, seed=3, rounds=5)
    assert len(games) == 20 and set(pair_counts(games, bots).values()) == {1}


@pytest.mark.parametrize("n", [4, 6, 10, 30])
def test_two_seat_design_is_the_circle_method_every_pair_once(n):
    bots = names(n)
    games = round_robin(bots, 2, seed=2, rounds=n - 1, complete_limit=0)
    assert set(pair_counts(games, bots).values()) == {1}


@FEW
@given(
    seats=st.integers(2, 6),
    n=st.integers(3, 30),
    rounds=st.one_of(st.none(), st.integers(1, 8)),
    seed=st.integers(0, 10**6),
)
def test_design_rounds_seat_every_bot_at_most_once_and_spread_pairs(seats, n, rounds, seed):
    if n <= seats:
        n = seats + 1
    bots = names(n)
    games = round_robin(bots, seats, seed=seed, rounds=rounds, complete_limit=0)
    for games_of_round in per_round(games).values():
        seated = [bot for g in games_of_round for bot in g.table]
        assert len(seated) == len(set(seated)) == n - n % seats
        assert all(len(g.table) == seats for g in games_of_round)
    played = Counter(bot for g in games for bot in g.table)
    assert set(played) == set(bots) or rounds is not None  # a short design may leave a bye out
    assert max(played.values()) - min(played.get(bot, 0) for bot in bots) <= 1
    met = pair_counts(games, bots).values()
    fair_share = math.ceil(sum(met) / len(met))
    assert max(met) <= fair_share + 2
    assert_seats_balanced(games, seats)


@FEW
@given(seats=st.integers(2, 6), n=st.integers(2, 20), rounds=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_same_seed_gives_the_same_schedule(seats, n, rounds, seed):
    n = max(n, seats)
    for make in (
        lambda: round_robin(names(n), seats, seed=seed),
        lambda: round_robin(names(n), seats, seed=seed, rounds=rounds, complete_limit=0, duplicate=True),
    ):
        assert make() == make()


def test_a_different_seed_gives_different_deals_and_tables():
    first = round_robin(names(12), 4, seed=1, rounds=3)
    second = round_robin(names(12), 4, seed=2, rounds=3)
    assert [g.seed for g in first] != [g.seed for g in second]
    assert [g.table for g in first] != [g.table for g in second]


def test_every_deal_has_its_own_seed_derived_from_the_tournament_seed_and_key():
    games = round_robin(names(8), 4, seed=77)
    assert len({g.seed for g in games}) == len(games)
    for game in games:
        assert game.seed == deal_seed(77, game.deal)
        assert 0 <= game.seed < 2**63


def test_game_keys_sort_in_schedule_order():
    games = round_robin(names(9), 3, seed=4, rounds=4, complete_limit=0, duplicate=True)
    assert [key_order(g.key) for g in games] == sorted(key_order(g.key) for g in games)
    assert [g.order for g in games] == [key_order(g.key) for g in games]
    assert len({g.key for g in games}) == len(games)


def test_a_malformed_game_key_is_refused_with_the_expected_form():
    with pytest.raises(ValueError, match="ROUND-TABLE-ROTATION"):
        key_order("round one")


# ------------------------------------------------------------------ duplicate


@FEW
@given(seats=st.integers(2, 6), extra=st.integers(0, 3), seed=st.integers(0, 10**6))
def test_duplicate_plays_each_deal_once_per_seat_rotation(seats, extra, seed):
    games = round_robin(names(seats + extra), seats, seed=seed, duplicate=True)
    deals: dict[str, list[ScheduledGame]] = {}
    for game in games:
        deals.setdefault(game.deal, []).append(game)
    for rotations in deals.values():
        assert [g.rotation for g in rotations] == list(range(seats))
        assert len({g.seed for g in rotations}) == 1
        assert len({frozenset(g.table) for g in rotations}) == 1
        for bot in rotations[0].table:  # every bot holds every seat (= every hand) once
            assert sorted(g.table.index(bot) for g in rotations) == list(range(seats))
    # Rotations balance the seats exactly.
    played = Counter(bot for g in games for bot in g.table)
    used = seat_counts(games)
    for bot, count in played.items():
        assert {used[(bot, seat)] for seat in range(seats)} == {count // seats}


def test_rotation_moves_the_bot_in_seat_p_to_seat_p_plus_r():
    assert rotate(("a", "b", "c", "d"), 1) == ("d", "a", "b", "c")
    assert rotate(("a", "b", "c"), 0) == ("a", "b", "c")


# ---------------------------------------------------------------- seat balance


@FEW
@given(
    seats=st.integers(2, 6),
    data=st.data(),
)
def test_balance_seats_keeps_every_table_and_balances_every_bot(seats, data):
    bots = names(data.draw(st.integers(seats, seats + 6)))
    tables = data.draw(
        st.lists(st.permutations(bots).map(lambda order: tuple(order[:seats])), min_size=1, max_size=40)
    )
    balanced = balance_seats(tables)
    assert [sorted(t) for t in balanced] == [sorted(t) for t in tables]
    used = Counter((bot, seat) for table in balanced for seat, bot in enumerate(table))
    for bot in bots:
        per_seat = [used[(bot, seat)] for seat in range(seats)]
        assert max(per_seat) - min(per_seat) <= 1


# -------------------------------------------------------------------- gauntlet


@FEW
@given(
    seats=st.integers(2, 6),
    challengers=st.integers(1, 3),
    field=st.integers(5, 12),
    rounds=st.integers(1, 3),
    seed=st.integers(0, 10**6),
)
def test_gauntlet_sits_each_challenger_against_the_whole_field(seats, challengers, field, rounds, seed):
    challenger_names = [f"new{i}" for i in range(challengers)]
    field_names = names(field)
    games = gauntlet(challenger_names, field_names, seats, seed=seed, rounds=rounds)
    per_challenger_round = math.ceil(field / (seats - 1))
    for challenger in challenger_names:
        own = [g for g in games if challenger in g.table]
        assert len(own) == rounds * per_challenger_round
        for games_of_round in per_round(own).values():
            assert {bot for g in games_of_round for bot in g.table} == {challenger, *field_names}
    for game in games:
        assert len(game.table) == seats == len(set(game.table))
        assert sum(bot in challenger_names for bot in game.table) == 1
    assert_seats_balanced(games, seats)


def test_gauntlet_refuses_a_bot_both_challenger_and_field():
    with pytest.raises(ScheduleError, match="not both: b"):
        gauntlet(["b"], ["a", "b", "c"], 2, seed=1)


def test_gauntlet_refuses_a_field_too_small_for_a_table():
    with pytest.raises(ScheduleError, match="at least 3 bots, got 2"):
        gauntlet(["new"], ["a", "b"], 4, seed=1)


# ----------------------------------------------------------------------- Swiss


@given(bots=st.integers(2, 80), seats=st.integers(2, 6))
def test_swiss_tables_are_smaller_only_when_needed_and_never_of_one(bots, seats):
    sizes = swiss_table_sizes(bots, seats)
    assert all(2 <= size <= seats for size in sizes)
    seated = bots - 1 if seats == 2 and bots % 2 else bots
    assert sum(sizes) == seated
    assert len(sizes) == math.ceil(seated / seats)  # as few tables as possible
    assert max(sizes) - min(sizes) <= 1
    if seated % seats == 0:
        assert set(sizes) == {seats}
    assert sizes == sorted(sizes, reverse=True)


def test_swiss_round_one_seats_neighbours_in_the_standings_together():
    standings = [SwissEntry(bot, score=10 - i) for i, bot in enumerate(names(8))]
    games = swiss_round(standings, 4, round=1, seed=1)
    assert [sorted(g.table) for g in games] == [names(8)[:4], names(8)[4:]]


def test_swiss_ranks_by_score_then_conservative_rating():
    standings = [
        SwissEntry("low", score=1, conservative=30),
        SwissEntry("top", score=3, conservative=0),
        SwissEntry("second", score=2, conservative=5),
        SwissEntry("third", score=2, conservative=4),
        SwissEntry("fifth", score=0, conservative=50),
        SwissEntry("fourth", score=1, conservative=31),
    ]
    games = swiss_round(standings, 2, round=1, seed=1)
    assert [sorted(g.table) for g in games] == [["second", "top"], ["fourth", "third"], ["fifth", "low"]]


def all_splits(bots: list[str], sizes: list[int]):
    """Every split of bots into tables of the given sizes (brute force, small fields only)."""
    if not bots:
        yield []
        return
    first, rest = bots[0], bots[1:]
    for size in set(sizes):
        left_sizes = list(sizes)
        left_sizes.remove(size)
        for companions in itertools.combinations(rest, size - 1):
            left = [bot for bot in rest if bot not in companions]
            for tail in all_splits(left, left_sizes):
                yield [(first, *companions), *tail]


def repeat_cost(tables, earlier) -> int:
    met = Counter(frozenset(pair) for table in earlier for pair in itertools.combinations(table, 2))
    return sum(met[frozenset(pair)] for table in tables for pair in itertools.combinations(table, 2))


def meetings(earlier) -> dict[str, dict[str, int]]:
    """bot -> bot -> tables shared, as swiss_split_cost takes them."""
    met: dict[str, dict[str, int]] = {}
    for table in earlier:
        for a, b in itertools.permutations(table, 2):
            met.setdefault(a, {})[b] = met.get(a, {}).get(b, 0) + 1
    return met


def test_swiss_split_cost_is_rank_distance_plus_a_price_per_repeat():
    ranked = names(8)
    met = meetings([("bot00", "bot03")])
    top_down = [tuple(ranked[:4]), tuple(ranked[4:])]
    assert swiss_split_cost(top_down, ranked, met) == 10 + 10 + SWISS_REPEAT_COST
    moved = [("bot00", "bot01", "bot02", "bot04"), ("bot03", "bot05", "bot06", "bot07")]
    assert swiss_split_cost(moved, ranked, met) == 13 + 13


@settings(max_examples=60, deadline=None)
@given(data=st.data(), seats=st.integers(2, 5), n=st.integers(4, 9), seed=st.integers(0, 1000))
def test_swiss_picks_the_cheapest_split_of_all(data, seats, n, seed):
    bots = names(n)
    history = []
    for earlier_round in range(1, data.draw(st.integers(1, 4)) + 1):
        order = data.draw(st.permutations(bots))
        at = 0
        for table_no, size in enumerate(swiss_table_sizes(n, seats), start=1):
            history.append(ScheduledGame(earlier_round, table_no, 0, tuple(order[at : at + size]), 0))
            at += size
    ranked = data.draw(st.permutations(bots))  # distinct scores: the ranking is known
    standings = [SwissEntry(bot, score=n - at) for at, bot in enumerate(ranked)]
    round_no = history[-1].round + 1
    games = swiss_round(standings, seats, round=round_no, seed=seed, history=history)
    seated = [bot for bot in ranked if any(bot in g.table for g in games)]
    sizes = swiss_table_sizes(n, seats)
    met = meetings([g.table for g in history])
    best = min(swiss_split_cost(split, seated, met) for split in all_splits(seated, sizes))
    assert swiss_split_cost([g.table for g in games], seated, met) == best
    assert sorted(len(g.table) for g in games) == sorted(sizes)


def test_swiss_moves_a_bot_one_place_to_avoid_two_repeats():
    standings = [SwissEntry(bot, score=10 - i) for i, bot in enumerate(names(8))]
    history = [ScheduledGame(1, 1, 0, ("bot00", "bot03"), 0), ScheduledGame(1, 2, 0, ("bot01", "bot03"), 0)]
    games = swiss_round(standings, 4, round=2, seed=1, history=history)
    assert [sorted(g.table) for g in games] == [
        ["bot00", "bot01", "bot02", "bot04"],
        ["bot03", "bot05", "bot06", "bot07"],
    ]


def test_swiss_keeps_one_repeat_rather_than_move_a_bot_across_tables():
    # Moving bot03 down a table costs as much as the repeat: a tie keeps the ranking.
    standings = [SwissEntry(bot, score=10 - i) for i, bot in enumerate(names(8))]
    history = [ScheduledGame(1, 1, 0, ("bot00", "bot03"), 0)]
    games = swiss_round(standings, 4, round=2, seed=1, history=history)
    assert [sorted(g.table) for g in games] == [names(8)[:4], names(8)[4:]]


def test_swiss_refuses_a_negative_repeat_cost():
    with pytest.raises(ScheduleError, match="repeat_cost must be a finite number of 0 or more, got -1"):
        swiss_round([SwissEntry(bot) for bot in names(4)], 2, round=1, seed=1, repeat_cost=-1)


def test_swiss_keeps_repeats_that_only_seating_a_bot_far_from_its_standing_avoids():
    # bot00 has met bot01..bot11; only bot12..bot15 are new to it, 12 places down.
    bots = names(16)
    standings = [SwissEntry(bot, score=20 - i) for i, bot in enumerate(bots)]
    history = [ScheduledGame(1, at, 0, ("bot00", other), 0) for at, other in enumerate(bots[1:12], 1)]
    games = swiss_round(standings, 4, round=2, seed=1, history=history)
    assert [sorted(g.table) for g in games] == [bots[0:4], bots[4:8], bots[8:12], bots[12:16]]


def swiss_ranking(standings, seed: int, round_no: int) -> list[str]:
    """The ranking swiss_round pairs from: score, conservative rating, then its seeded tie-break."""
    import random

    rng = random.Random(f"swiss/{seed}/{round_no}")
    tiebreak = {entry.bot: rng.random() for entry in standings}
    return [e.bot for e in sorted(standings, key=lambda e: (-e.score, -e.conservative, tiebreak[e.bot]))]


def cheaper_swaps(tables, ranked, met) -> list[tuple[str, str]]:
    """Every swap of two bots between two tables that would make the split cheaper."""
    found = []
    for i, j in itertools.combinations(range(len(tables)), 2):
        before = swiss_split_cost([tables[i], tables[j]], ranked, met)
        for x, y in itertools.product(tables[i], tables[j]):
            swapped_i = tuple(y if bot == x else bot for bot in tables[i])
            swapped_j = tuple(x if bot == y else bot for bot in tables[j])
            if swiss_split_cost([swapped_i, swapped_j], ranked, met) < before:
                found.append((x, y))
    return found


def test_swiss_on_a_big_field_beats_seating_by_rank_and_no_swap_improves_it():
    bots = names(64)
    history: list[ScheduledGame] = []
    for round_no in range(1, 9):
        # Scores follow the name, so the same bots stay near each other in the standings.
        standings = [SwissEntry(bot, score=-i // 8) for i, bot in enumerate(bots)]
        games = swiss_round(standings, 4, round=round_no, seed=9, history=history)
        tables = [g.table for g in games]
        ranked = swiss_ranking(standings, 9, round_no)
        met = meetings([g.table for g in history])
        top_down = [tuple(ranked[at : at + 4]) for at in range(0, 64, 4)]
        if repeat_cost(top_down, [g.table for g in history]):
            assert swiss_split_cost(tables, ranked, met) < swiss_split_cost(top_down, ranked, met)
        else:
            assert sorted(map(sorted, tables)) == sorted(map(sorted, top_down))
        assert cheaper_swaps(tables, ranked, met) == []
        history += games


def test_swiss_gives_the_two_seat_bye_to_the_lowest_bot_that_had_the_fewest():
    bots = names(5)
    history: list[ScheduledGame] = []
    sat_out = []
    for round_no in range(1, 6):
        standings = [SwissEntry(bot, score=-i) for i, bot in enumerate(bots)]
        games = swiss_round(standings, 2, round=round_no, seed=3, history=history)
        playing = {bot for g in games for bot in g.table}
        (bye,) = set(bots) - playing
        sat_out.append(bye)
        history += games
    assert sat_out == list(reversed(bots))  # lowest first, nobody twice before all once


def test_swiss_seats_each_bot_where_it_sat_least():
    history = [ScheduledGame(1, 1, 0, ("a", "b", "c"), 0), ScheduledGame(2, 1, 0, ("a", "b", "c"), 0)]
    standings = [SwissEntry(bot) for bot in "abc"]
    (game,) = swiss_round(standings, 3, round=3, seed=1, history=history)
    assert all(game.table[seat] != bot for seat, bot in enumerate("abc"))


def test_swiss_duplicate_plays_each_table_in_every_rotation_with_one_deal():
    standings = [SwissEntry(bot) for bot in names(7)]
    games = swiss_round(standings, 4, round=2, seed=5, duplicate=True)
    assert [len(g.table) for g in games] == [4, 4, 4, 4, 3, 3, 3]
    for deal in {g.deal for g in games}:
        rotations = [g for g in games if g.deal == deal]
        assert len({g.seed for g in rotations}) == 1
        assert [g.rotation for g in rotations] == list(range(len(rotations[0].table)))


def test_swiss_same_standings_and_seed_give_the_same_round():
    standings = [SwissEntry(bot, score=i % 3) for i, bot in enumerate(names(13))]
    assert swiss_round(standings, 4, round=1, seed=8) == swiss_round(standings, 4, round=1, seed=8)


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize("seats", [1, 7, "4"])
def test_a_seat_count_outside_two_to_six_is_refused(seats):
    with pytest.raises(ScheduleError, match="seats must be a whole number from 2 to 6"):
        round_robin(names(8), seats, seed=1)


def test_fewer_bots_than_seats_is_refused():
    with pytest.raises(ScheduleError, match="at least 4 bots, got 3"):
        round_robin(names(3), 4, seed=1)


def test_a_bot_listed_twice_is_refused():
    with pytest.raises(ScheduleError, match="more than once: bot01"):
        round_robin(["bot01", "bot02", "bot01"], 2, seed=1)


def test_a_round_count_below_one_is_refused():
    with pytest.raises(ScheduleError, match="rounds must be a whole number of at least 1, got 0"):
        round_robin(names(8), 4, seed=1, rounds=0)


def test_rounds_and_cycles_together_are_refused():
    with pytest.raises(ScheduleError, match="either rounds .* or cycles"):
        round_robin(names(8), 4, seed=1, rounds=3, cycles=2)


def test_design_rounds_repeat_the_affine_plane_in_its_order():
    import random

    rounds = design_rounds(names(9), 3, 8, random.Random(1))
    assert rounds[4] == rounds[0] and rounds[7] == rounds[3]
